"""The comparison table under the lanes: one row per lane (core/results/compare.py's columns),
redrawn
cell by cell as lanes stream."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from sandbox_app.core.results.compare import COLUMNS


class ComparisonTable(QTableWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.setHorizontalHeaderLabels(list(COLUMNS))
        self.verticalHeader().hide()
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # Rows grow with the zoom (presenter.py) instead of cutting their text.
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)

    def show_rows(self, rows: Sequence[dict[str, str]]) -> None:
        self.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, column in enumerate(COLUMNS):
                # Only cells that changed: every new item re-measures its column for the
                # resize-to-contents header, ~0.5 ms a cell, 30+ ms a refresh, a dropped frame
                # each time a lane finishes a step.
                item = self.item(r, c)
                if item is None:
                    self.setItem(r, c, QTableWidgetItem(row[column]))
                elif item.text() != row[column]:
                    item.setText(row[column])
