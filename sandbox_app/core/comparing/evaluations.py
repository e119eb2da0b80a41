"""Two evaluations of the history compared arm to arm (arms.py pairs them, arm_diff.py
compares each pair case by case), read from the database's per-case counts."""

from __future__ import annotations

from collections.abc import Mapping

from sandbox_app.core.comparing.arm_diff import Cells, EvaluationDiff, compare_evaluations
from sandbox_app.core.history.history_arms import case_counts
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.scenarios.prompt_versions import names_of
from sandbox_app.core.scenarios.scenario_file import load_scenario
from sandbox_app.core.untrusted.file_reader import ReadError


def cells_in(store: HistoryStore, evaluation: int, without_judge: bool = False) -> Cells:
    """An evaluation's runs counted per arm and case (HistoryError: none such);
    ``without_judge``: as they would have passed without their judge's verdicts."""
    cells = Cells()
    for c in case_counts(store, evaluation, without_judge):
        cells.add(c.arm, (c.case, c.question, c.expected), c.runs, c.passed, c.lane)
    return cells


def diff_evaluations(
    store: HistoryStore,
    first: int,
    second: int,
    names: Mapping[str, str] | None = None,
    without_judge: bool = False,
) -> EvaluationDiff:
    """What changed from evaluation ``first`` to ``second``, arm by arm; ``names``: prompt
    version ids → their names (by default the scenarios' prompt histories), shown first;
    ``without_judge``: every run's verdict as it would be without its judge's check."""
    if names is None:
        paths = tuple(store.evaluation(e, tallied=False).scenario_path for e in (first, second))
        names = version_names(*paths)
    return compare_evaluations(
        cells_in(store, first, without_judge), cells_in(store, second, without_judge), names
    )


def version_names(*scenario_paths: str) -> dict[str, str]:
    """Prompt version ids → the names the scenarios' prompt histories give them (a file
    that is gone or unreadable names none: ids stand)."""
    names: dict[str, str] = {}
    for path in scenario_paths:
        if not path:
            continue
        try:
            history = load_scenario(path).prompt_history
        except (ReadError, OSError):
            continue
        names.update(names_of(history))
    return names
