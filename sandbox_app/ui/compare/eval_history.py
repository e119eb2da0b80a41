"""The Test set panel's side of the history database: the evaluation its runs are stored in
(a row each, written on the evaluation's thread as the run ends, never on the window's
loop), and a past evaluation shown in its grid.

Kept apart from ui/compare/eval_panel.py, which only calls it: Run test set starts a new
evaluation; Resume and Re-run failed go on with the one on screen.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtWidgets import QLabel

from sandbox_app.core.comparing.arm_diff import Cells
from sandbox_app.core.history.history_schema import HistoryError
from sandbox_app.core.results.evaluation import LaneTally

if TYPE_CHECKING:
    from sandbox_app.application.backend_choice import BackendChoice
    from sandbox_app.application.history import EvaluationLog, History
    from sandbox_app.core.history.history_db import HistoryStore
    from sandbox_app.core.scenarios.scenario import Scenario
    from sandbox_app.ui.compare.eval_grid_model import EvalGridModel
    from sandbox_app.ui.compare.eval_results import RunStore
    from sandbox_app.ui.compare.eval_verdicts import ArmVerdicts


class Grid(Protocol):
    """What of the Test set panel (ui/compare/eval_panel.py) a past evaluation is drawn with."""

    _labels: list[str]
    _asked: Mapping[int, str]
    _repeat_count: int
    _tallies: dict[str, LaneTally]
    _failed: int
    results: RunStore
    verdicts: ArmVerdicts
    grid_model: EvalGridModel
    status: QLabel

    @property
    def running(self) -> bool: ...

    def _clear(self) -> None: ...

    def _draw(self) -> None: ...

    def update_buttons(self) -> None: ...


@dataclass
class Past:
    """A past evaluation's summary rows, read once: each cell's verdict masks, each lane's
    sums, each arm's runs and passes of each case, each case's question as asked then; no
    answer, check or trace kept."""

    cells: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    tallies: dict[str, LaneTally] = field(default_factory=dict)
    asked: dict[int, str] = field(default_factory=dict)
    repeats: int = 1
    arms: Cells = field(default_factory=Cells)

    def draw(self, model: EvalGridModel) -> None:
        for (case, lane), (ran, passed) in self.cells.items():
            if case < model.rowCount():
                model.set_cell(case, lane, ran, passed)


def load_evaluation(store: HistoryStore, evaluation: int, labels: Sequence[str]) -> Past:
    """Evaluation ``evaluation``'s results a page at a time (HistoryError: unreadable)."""
    past = Past(tallies={lane: LaneTally() for lane in labels})
    columns = {lane: column for column, lane in enumerate(labels)}
    for page in store.pages(evaluation):
        for result in page:
            lane, case, repeat = result.lane, result.case, result.repeat
            past.tallies.setdefault(lane, LaneTally()).add(result)
            past.arms.count(result)
            past.asked[case] = result.question or ""
            past.repeats = max(past.repeats, repeat + 1)
            if lane in columns:
                ran, passed = past.cells.get((case, columns[lane]), (0, 0))
                bit = 1 << repeat
                past.cells[case, columns[lane]] = (ran | bit, passed | bit * result.passed)
    return past


class EvalHistory:
    def __init__(self) -> None:
        # The window's history (ui/history/history_actions.py sets it; None: none kept).
        self.source: Callable[[], History | None] = lambda: None
        # The scenario's file (the window's document; None: untitled): an evaluation is its
        # file's, as `eval`'s are, so a baseline marked in either is the other's too.
        self.place: Callable[[], Path | None] = lambda: None
        self.log: EvaluationLog | None = None

    def start(
        self, scenario: Scenario, lanes: Sequence[BackendChoice], repeats: int, fresh: bool
    ) -> EvaluationLog | None:
        """Where each result of the runs starting now is stored (``fresh``: a new
        evaluation; None: no history)."""
        history = self.source()
        if history is not None and (fresh or self.log is None):
            cases, path = len(scenario.test_set), self.place()
            where = str(path.resolve()) if path is not None else ""
            self.log = history.begin(scenario.title, where, lanes, cases, repeats, "window")
        return self.log

    def finish(self) -> None:
        if self.log is not None:
            self.log.finish()

    def show(
        self, panel: Grid, title: str, labels: list[str], store: HistoryStore, evaluation: int
    ) -> bool:
        """A past evaluation in ``panel``'s grid: its summary rows read now, each cell's trace
        when it is clicked, each row its question as asked then; False while a test set runs
        (or the database cannot be read: its one line in the panel's status)."""
        if panel.running:
            return False
        try:
            past = load_evaluation(store, evaluation, labels)
        except HistoryError as err:
            panel.status.setText(f"⚠ {err}")
            return False
        self.log = None  # Resume or Re-run failed from here starts a new evaluation
        panel._clear()
        panel.results.show(store, evaluation)
        panel.verdicts.show(past.arms)
        panel._labels, panel._asked = list(labels), past.asked
        panel._repeat_count, panel._tallies = past.repeats, past.tallies
        # The cases it had, though edited since: the grid (a model) drawn with these.
        panel._draw()
        past.draw(panel.grid_model)
        panel._draw()  # the failures filter, the summary and the count, with the verdicts
        panel.status.setText(title)
        panel.update_buttons()
        return True
