"""Compare with…: the runs that flipped between two evaluations (core/results/history_diff.py),
pass → fail first (what broke), then fail → pass; Show traces opens a flipped run's two
traces side by side (ui/trace/trace_diff_dialog.py), read from the history database.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.application.history import record_of
from sandbox_app.core.results.history_db import HistoryStore
from sandbox_app.core.results.history_diff import Flip, HistoryDiff, diff_evaluations
from sandbox_app.core.running.records import RunRecord
from sandbox_app.ui.common.plain import plain_label
from sandbox_app.ui.trace.trace_diff_dialog import TraceDiffDialog, open_diff

COLUMNS = ("Change", "Case", "Lane", "Repeat", "Question")


class FlipsDialog(QDialog):
    """Raises HistoryError (one line) when either evaluation is not in ``store``."""

    def __init__(
        self, store: HistoryStore, first: int, second: int, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Evaluation #{first} → #{second}")
        self.resize(900, 480)
        self.store = store
        self.diff: HistoryDiff = diff_evaluations(store, first, second)
        self.flips = [*self.diff.broke, *self.diff.fixed]
        self.trace_diff: TraceDiffDialog | None = None
        keys = [(f.lane, f.case, f.repeat) for f in self.flips]
        questions = {
            (r.lane, r.case, r.repeat): r.question or "" for r in store.results(first, keys)
        }
        d = self.diff
        self.summary = plain_label(
            f"#{first} → #{second}: {d.compared} runs compared · {len(d.broke)} pass → fail · "
            f"{len(d.fixed)} fail → pass"
            + (f" · {d.only_first} only in #{first}" if d.only_first else "")
            + (f" · {d.only_second} only in #{second}" if d.only_second else "")
        )
        self.summary.setWordWrap(True)
        self.table = QTableWidget(len(self.flips), len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        for r, flip in enumerate(self.flips):
            lane = flip.lane if flip.lane == flip.other_lane else f"{flip.lane} / {flip.other_lane}"
            cells = (
                flip.direction,
                f"{flip.case + 1}",
                lane,
                f"{flip.repeat + 1}",
                questions.get((flip.lane, flip.case, flip.repeat), ""),
            )
            for c, text in enumerate(cells):
                self.table.setItem(r, c, QTableWidgetItem(text))
        self.traces_button = QPushButton("Show traces")
        self.traces_button.setToolTip("This run in both evaluations, side by side, step by step")
        self.traces_button.setEnabled(bool(self.flips))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(self.traces_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        if self.flips:
            self.table.selectRow(0)
        self.traces_button.clicked.connect(lambda: self.show_traces(self.table.currentRow()))
        self.table.cellDoubleClicked.connect(lambda row, _column: self.show_traces(row))

    def rows(self) -> list[tuple[str, ...]]:
        """What the table shows, row by row."""
        return [
            tuple(
                (self.table.item(r, c) or QTableWidgetItem()).text()
                for c in range(self.table.columnCount())
            )
            for r in range(self.table.rowCount())
        ]

    def show_traces(self, row: int) -> TraceDiffDialog | None:
        """Flipped run ``row``'s trace in each evaluation, side by side."""
        if not 0 <= row < len(self.flips):
            return None
        flip = self.flips[row]
        runs = [
            (
                f"#{self.diff.first} · {flip.lane} · {'passed' if flip.was else 'failed'}",
                self._record(self.diff.first, flip.lane, flip),
            ),
            (
                f"#{self.diff.second} · {flip.other_lane} · {'passed' if flip.now else 'failed'}",
                self._record(self.diff.second, flip.other_lane, flip),
            ),
        ]
        self.trace_diff = open_diff(runs, 0, 1, self)
        return self.trace_diff

    def _record(self, evaluation: int, lane: str, flip: Flip) -> RunRecord:
        found = list(self.store.results(evaluation, [(lane, flip.case, flip.repeat)], events=True))
        return record_of(found[0].events or () if found else ())
