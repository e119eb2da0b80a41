"""The results of one evaluation as a prompt engineer reads them: **Matrix** (cases × arms,
each cell k/N and the latest answer, a filter on the question, only the cases whose pass rate
differs between arms) and **Chart** (pass_chart.py, drawn when its tab is first shown).

Opened by the Test set tab's **Matrix view…** (the evaluation on screen) and by the History
view's (a stored one). Imported then, never at start-up. Names and questions came from files
and models: window titles, item views and ``plain_label`` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
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

from sandbox_app.core.comparing.results_matrix import HistoryMatrix, MatrixSource, column_names
from sandbox_app.core.history.history_schema import HistoryError
from sandbox_app.ui.common.plain import plain_label
from sandbox_app.ui.results.matrix_model import FIXED, MatrixModel

if TYPE_CHECKING:
    from sandbox_app.core.history.history_db import HistoryStore
    from sandbox_app.ui.results.pass_chart import PassChart

FILTER_WAIT_MS = 250  # typing in the filter: asked once the typing pauses
QUESTION_WIDTH, EXPECTED_WIDTH, ARM_WIDTH = 280, 110, 230


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
        self.model = MatrixModel(source, self.arm_names)
        self.model.setParent(self)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter by question…")
        self.filter.setClearButtonEnabled(True)
        self.only_differing = QCheckBox("Only cases that differ between arms")
        self.only_differing.setToolTip("Cases whose pass rate is not the same on every arm")
        self.count = plain_label()
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        self.table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
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
        self._all = self.apply_filter()
        self._draw_count()
        self.table.setColumnWidth(0, QUESTION_WIDTH)
        self.table.setColumnWidth(1, EXPECTED_WIDTH)
        for column in range(len(FIXED), self.model.columnCount()):
            self.table.setColumnWidth(column, ARM_WIDTH)

    def apply_filter(self) -> int:
        """The cases the filter and the check box leave, from the source (a count of them)."""
        self._wait.stop()
        try:
            cases = self.source.case_numbers(self.filter.text(), self.only_differing.isChecked())
        except HistoryError as err:
            self.problem.setText(str(err))
            self.problem.show()
            cases = []
        self.model.show_cases(cases)
        self._draw_count()
        return len(cases)

    def _draw_count(self) -> None:
        shown = self.model.rowCount()
        total = getattr(self, "_all", shown)
        self.count.setText(f"{shown:,} cases" if shown == total else f"{shown:,} of {total:,}")

    def _tab_shown(self, index: int) -> None:
        if index == 1 and self.chart is None:
            self.show_chart()

    def show_chart(self) -> PassChart:
        """The Chart tab, made now (pyqtgraph is imported on this first use)."""
        if self.chart is None:
            from sandbox_app.ui.results.pass_chart import PassChart

            self.chart = PassChart(self.source, self.arm_names, self._store, self._versions)
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
