"""The results of one evaluation as a prompt engineer reads them: **Matrix** (cases × arms,
each cell k/N and the latest answer, a filter on the question and the answers, only the cases
whose pass rate differs between arms; each arm's pass rate, pass@k and pass^k in its header's
tooltip) and **Chart** (pass_chart.py, drawn when its tab is first shown).

What is counted over the whole evaluation (the cases a filter leaves, each arm's spread) is
asked on a thread of its own (:meth:`MatrixDialog.ask`) and comes back as a signal: 40-120 ms
of SQL at 10,000 cases × 4 arms would otherwise be a frozen window at every keystroke. A filter
typed on stops the one asked before; only the latest's answer is shown.

Opened by the Test set tab's **Matrix view…** (the evaluation on screen) and by the History
view's (a stored one). Imported then, never at start-up. Names and questions came from files
and models: window titles, item views and ``plain_label`` only.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QLineEdit,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.core.comparing.case_spread import ArmRate, arm_rate
from sandbox_app.core.comparing.results_matrix import HistoryMatrix, MatrixSource, column_names
from sandbox_app.core.history.history_reader import Stopped
from sandbox_app.core.history.history_schema import HistoryError
from sandbox_app.ui.common.plain import plain_label
from sandbox_app.ui.results.cell_painter import CellPainter
from sandbox_app.ui.results.matrix_model import FIXED, MatrixModel

if TYPE_CHECKING:
    from sandbox_app.core.history.history_db import HistoryStore
    from sandbox_app.ui.results.pass_chart import PassChart

FILTER_WAIT_MS = 250  # typing in the filter: asked once the typing pauses
QUESTION_WIDTH, EXPECTED_WIDTH, ARM_WIDTH = 280, 110, 230
CASES, SPREADS = "cases", "spreads"  # what an answer from another thread is


class _Answers(QObject):
    came = Signal(str, int, object)  # what, which asking of it, the answer (or HistoryError)


class MatrixDialog(QDialog):
    """``names``: prompt version ids → their names; ``store``: the history, for the chart's
    trend across evaluations (None: no trend)."""

    def __init__(
        self,
        title: str,
        source: MatrixSource,
        names: Mapping[str, str],
        store: HistoryStore | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Results — {title}")
        self.resize(1200, 700)
        self.source, self._store, self._versions = source, store, names
        self.arm_names = column_names(source.arms, names)
        self.rates: list[ArmRate] | None = None  # each arm's, once counted
        self.model = MatrixModel(source, self.arm_names, self._arm_tip)
        self.model.setParent(self)
        self._answers = _Answers(self)
        self._answers.came.connect(self._answered)
        self._asked = 0  # the latest filter's number: an older one's answer is dropped
        self._shown = 0  # the number of the filter whose cases are shown
        self._all: int | None = None  # the cases without a filter, once counted
        self._closed = False
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter by question or answer…")
        self.filter.setToolTip("Cases whose question, expected answer or an answer holds it")
        self.filter.setClearButtonEnabled(True)
        self.only_differing = QCheckBox("Only cases that differ between arms")
        self.only_differing.setToolTip("Cases whose pass rate is not the same on every arm")
        self.count = plain_label()
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setItemDelegate(CellPainter(self.model))
        self.table.setWordWrap(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        self.table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.horizontalHeader().sectionResized.connect(self._fit)
        self.chart: PassChart | None = None
        top = QHBoxLayout()  # in the Matrix tab: the chart has every case
        top.addWidget(self.filter, 1)
        top.addWidget(self.only_differing)
        top.addWidget(self.count)
        matrix = QWidget()
        inside = QVBoxLayout(matrix)
        inside.addLayout(top)
        inside.addWidget(self.table, 1)
        self.tabs = QTabWidget()
        self.tabs.addTab(matrix, "Matrix")
        self.tabs.addTab(QWidget(), "Chart")  # a stand-in until first shown
        self.tabs.currentChanged.connect(self._tab_shown)
        self.problem = plain_label()
        self.problem.hide()
        layout = QVBoxLayout(self)
        layout.addWidget(self.problem)
        layout.addWidget(self.tabs, 1)
        self._wait = QTimer(self, singleShot=True, interval=FILTER_WAIT_MS)
        self._wait.timeout.connect(self.apply_filter)
        self.filter.textChanged.connect(lambda: self._wait.start())
        self.only_differing.toggled.connect(lambda: self.apply_filter())
        self.table.setColumnWidth(0, QUESTION_WIDTH)
        self.table.setColumnWidth(1, EXPECTED_WIDTH)
        for column in range(len(FIXED), self.model.columnCount()):
            self.table.setColumnWidth(column, ARM_WIDTH)
        self.apply_filter()
        self.ask(SPREADS, 0, source.spreads)

    def apply_filter(self) -> None:
        """Ask for the cases the filter and the check box leave (shown when they come);
        a filter still being counted is stopped."""
        self._wait.stop()
        if self._asked:
            self.source.stop()
        self._asked += 1
        text, differing = self.filter.text(), self.only_differing.isChecked()
        self.count.setText("Filtering…" if self._all is not None else "Reading…")
        self.ask(CASES, self._asked, lambda: self.source.case_numbers(text, differing))

    def ask(self, what: str, number: int, work: Callable[[], Any]) -> None:
        """``work()`` on a thread of its own, its answer to :meth:`_answered`; stopped for a
        later filter's sake, it is asked again unless it is an older filter itself."""

        def run() -> None:
            while True:
                try:
                    value = work()
                except Stopped:
                    if self._closed or (what == CASES and number != self._asked):
                        return
                    continue
                except HistoryError as err:
                    value = err
                with contextlib.suppress(RuntimeError):  # the dialog is gone: nobody to tell
                    self._answers.came.emit(what, number, value)
                return

        threading.Thread(target=run, name=f"matrix-{what}", daemon=True).start()

    def _answered(self, what: str, number: int, value: Any) -> None:
        if self._closed:
            return
        if isinstance(value, HistoryError):
            self.problem.setText(str(value))
            self.problem.show()
            value = [] if what == CASES else [{} for _ in self.arm_names]
        if what == SPREADS:
            self.rates = [arm_rate(spread) for spread in value]
            if self.chart is not None:
                self.chart.draw_rates(self.rates)
            return
        if number != self._asked:
            return  # a filter typed over
        if self._all is None and not (self.filter.text() or self.only_differing.isChecked()):
            self._all = len(value)
        self._shown = number
        self.model.show_cases(value)
        self._draw_count()

    def filtering(self) -> bool:
        """A filter is waiting for the typing to pause, or for its cases."""
        return self._wait.isActive() or self._shown != self._asked

    def _draw_count(self) -> None:
        shown = self.model.rowCount()
        total = shown if self._all is None else self._all
        self.count.setText(f"{shown:,} cases" if shown == total else f"{shown:,} of {total:,}")

    def _arm_tip(self, arm: int) -> str:
        if self.rates is None:
            return "Counting its pass rate…"
        return "\n".join(self.rates[arm].lines()) if arm < len(self.rates) else ""

    def _fit(self, column: int, _old: int, width: int) -> None:
        """What a cell of ``column`` lays out: its width in average characters, and half as
        many again for narrow ones (the painter elides what still does not fit)."""
        self.model.set_room(
            column, width * 3 // (2 * max(1, self.fontMetrics().averageCharWidth()))
        )

    def closeEvent(self, event: QCloseEvent) -> None:
        self.release()
        super().closeEvent(event)

    def done(self, result: int) -> None:
        self.release()
        super().done(result)

    def release(self) -> None:
        """Stop what is being counted and close the source's second connection."""
        if not self._closed:
            self._closed = True
            self.source.close()

    def _tab_shown(self, index: int) -> None:
        if index == 1 and self.chart is None:
            self.show_chart()

    def show_chart(self) -> PassChart:
        """The Chart tab, made now (pyqtgraph is imported on this first use)."""
        if self.chart is None:
            from sandbox_app.ui.results.pass_chart import PassChart

            self.chart = PassChart(self.source, self.arm_names, self._store, self._versions)
            if self.rates is not None:
                self.chart.draw_rates(self.rates)
            was = self.tabs.currentIndex()
            self.tabs.removeTab(1)
            self.tabs.insertTab(1, self.chart, "Chart")
            self.tabs.setCurrentIndex(was)
        return self.chart


def open_stored(
    store: HistoryStore, evaluation: int, names: Mapping[str, str], parent: QWidget | None
) -> MatrixDialog:
    """A stored evaluation (HistoryError: unreadable)."""
    row = store.evaluation(evaluation, tallied=False)  # its tallies: 0.1 s at 200,000 results
    title = f"#{evaluation} · {row.started[:16].replace('T', ' ')} · {row.scenario_title}"
    dialog = MatrixDialog(title, HistoryMatrix(store, evaluation), names, store, parent)
    return shown(dialog)


def shown(dialog: MatrixDialog) -> MatrixDialog:
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog
