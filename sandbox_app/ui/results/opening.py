"""The Test set tab's **Matrix view…** button: made with the tab, its dialog (matrix_dialog.py,
and the chart's plotting library under it) imported at the first click only.

The matrix reads the evaluation on screen from the history database when that one evaluation
holds every run shown (the usual case); else (history off, or a past evaluation resumed into
a new one) it counts the runs from wherever they are, a page at a time
(``RunStore.stream``), keeping a count and an answer per cell.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Protocol

from PySide6.QtWidgets import QBoxLayout, QLabel, QToolButton, QWidget

from sandbox_app.ui.common.fitting import tool_button

if TYPE_CHECKING:
    from sandbox_app.core.history.history_db import HistoryStore
    from sandbox_app.core.results.eval_result import EvalResult
    from sandbox_app.core.running.records import RunRecord
    from sandbox_app.core.scenarios.scenario import Scenario
    from sandbox_app.ui.results.matrix_dialog import MatrixDialog


class Runs(Protocol):
    """What of the panel's runs (ui/compare/eval_results.py's ``RunStore``) the matrix reads."""

    def evaluation(self) -> tuple[HistoryStore, int] | None: ...

    def stream(self, events: bool) -> Iterator[tuple[EvalResult, RunRecord | None]]: ...


class TestSetTab(Protocol):
    """What of the Test set panel (ui/compare/eval_panel.py) the matrix reads."""

    @property
    def results(self) -> Runs: ...

    @property
    def status(self) -> QLabel: ...


def matrix_button(
    row: QBoxLayout, panel: TestSetTab, scenario: Callable[[], Scenario]
) -> QToolButton:
    """The button, added to ``row``; ``scenario``: the one being edited (its title, and
    its prompt versions' names for the arms)."""
    button = tool_button("Matrix view…")  # as wide as its text: the row fits 800 px
    button.setToolTip("Every case × arm: k/N, the latest answer, a filter; the pass-rate chart")
    button.clicked.connect(lambda: open_for_panel(panel, scenario(), button.window()))
    row.addWidget(button)
    return button


def open_for_panel(
    panel: TestSetTab, scenario: Scenario, parent: QWidget | None = None
) -> MatrixDialog | None:
    from sandbox_app.core.comparing.results_matrix import (
        CountedMatrix,
        HistoryMatrix,
        MatrixSource,
    )
    from sandbox_app.core.history.history_schema import HistoryError
    from sandbox_app.core.scenarios.prompt_versions import names_of
    from sandbox_app.ui.results.matrix_dialog import MatrixDialog, shown

    where = panel.results.evaluation()
    try:
        if where is not None:
            store, evaluation = where
            source: MatrixSource = HistoryMatrix(store, evaluation)
        else:
            store = None
            source = CountedMatrix(result for result, _ in panel.results.stream(events=False))
    except HistoryError as err:
        panel.status.setText(f"⚠ {err}")
        return None
    names = names_of(scenario.prompt_history)
    return shown(MatrixDialog(scenario.title, source, names, store, parent))
