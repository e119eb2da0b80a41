"""The Test set panel's side of the history database: the evaluation its runs are stored in
(a row each, written on the evaluation's thread as the run ends, never on the window's
loop), and a past evaluation shown in its grid.

Kept apart from ui/compare/eval_panel.py, which only calls it: Run test set starts a new
evaluation; Resume and Re-run failed go on with the one on screen.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtWidgets import QLabel

from sandbox_app.core.results.evaluation import key_of
from sandbox_app.core.running.records import RunRecord

if TYPE_CHECKING:
    from sandbox_app.application.eval_runner import EvalLane
    from sandbox_app.application.history import EvaluationLog, History
    from sandbox_app.core.scenarios.scenario import Scenario

Run = tuple[dict[str, Any], RunRecord]


class Grid(Protocol):
    """What of the Test set panel (ui/compare/eval_panel.py) a past evaluation is drawn with."""

    _labels: list[str]
    _repeat_count: int
    results: Any
    status: QLabel

    @property
    def running(self) -> bool: ...

    def _draw(self, asked: Mapping[int, str] | None = None) -> None: ...

    def _update_buttons(self) -> None: ...


class EvalHistory:
    def __init__(self) -> None:
        # The window's history (ui/history/history_actions.py sets it; None: none kept).
        self.source: Callable[[], History | None] = lambda: None
        self.log: EvaluationLog | None = None

    def start(
        self, scenario: Scenario, lanes: Sequence[EvalLane], repeats: int, fresh: bool
    ) -> Callable[[dict[str, Any], RunRecord], None]:
        """What stores each result of the runs starting now (``fresh``: a new evaluation)."""
        history = self.source()
        if history is not None and (fresh or self.log is None):
            cases = len(scenario.test_set)
            self.log = history.begin(scenario.title, "", lanes, cases, repeats, "window")
        log = self.log
        return log.add if log is not None else lambda _result, _record: None

    def finish(self) -> None:
        if self.log is not None:
            self.log.finish()

    def show(self, panel: Grid, title: str, labels: list[str], runs: Sequence[Run]) -> bool:
        """``runs`` of a past evaluation in ``panel``'s grid, each cell's trace its recorded
        run and each row its question as asked then; False while a test set runs."""
        if panel.running:
            return False
        self.log = None  # Resume or Re-run failed from here starts a new evaluation
        panel._labels = list(labels)
        panel.results = {key_of(result): (result, record) for result, record in runs}
        panel._repeat_count = 1 + max((result["repeat"] for result, _ in runs), default=0)
        # The cases it had, though edited since: the grid (a model) drawn from these.
        panel._draw({result["case"]: result.get("question") or "" for result, _ in runs})
        panel.status.setText(title)
        panel._update_buttons()
        return True
