"""The judge's agreement with the human grades, as the Test set tab says it under the grid:
"Judge: κ 0.72 · true pass 90% · true fail 80% · 64 labels", and "— uncalibrated (…)" when
it is (core/comparing/agreement.py: κ below 0.6, or fewer than 50 labels), counted from the
grades of the scenario file's judged runs in the window's history (the labels `eval
--fail-on-regression` counts too). Nothing when the scenario judges nothing or there is no
history to count from.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from sandbox_app.core.comparing.agreement import Agreement
from sandbox_app.core.history.history_grades import judged_grades
from sandbox_app.core.history.history_schema import HistoryError
from sandbox_app.core.scenarios.judge_spec import JudgeSpec, judge_identity
from sandbox_app.core.scenarios.scenario import Scenario

if TYPE_CHECKING:
    from sandbox_app.application.history import History


class Kept(Protocol):
    """Where the Test set panel keeps its runs (ui/compare/eval_history.py's EvalHistory)."""

    source: Callable[[], History | None]  # the window's history
    place: Callable[[], Path | None]  # the scenario's file (None: untitled)


def agreement_line(scenario: Scenario, history: Kept) -> str:
    if not scenario.rubric and not any(case.rubric for case in scenario.test_set):
        return ""  # no judge asked
    kept = history.source()
    store = kept.store if kept is not None else None
    if store is None:
        return ""
    path = history.place()
    try:
        where = str(path.resolve()) if path is not None else ""
        labels = judged_grades(store, where, judge_identity(scenario.judge or JudgeSpec()))
    except HistoryError as err:
        return f"Judge's agreement with your grades: ⚠ {err}"
    agreement = Agreement.of(labels)
    if not agreement.labels:
        return "Judge: uncalibrated (no human grades of its runs yet: grade runs with 👍/👎)"
    return f"Judge: {agreement.words()}"
