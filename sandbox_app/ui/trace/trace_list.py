"""A long trace on screen: core/results/trace_rows.py's rows in a view that lays out and
draws only the rows it shows (all rows one height: the view never measures the others), so a
30,000-step trace scrolls, searches and jumps as a short one does.

Rows arrive in batches as the trace is read (:meth:`TraceList.add`, one call a frame); the
view stays where the reader is (the first screen, unless they scroll). A fold row ("⋯
observation 10.0 MB — show more") shows the next page of its text when clicked or on Enter.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontDatabase,
    QFontMetrics,
    QKeyEvent,
    QKeySequence,
)
from PySide6.QtWidgets import QAbstractItemView, QApplication, QHeaderView, QTableView, QWidget

from sandbox_app.core.results.presentation import Role
from sandbox_app.core.results.trace_rows import ROW_CHARS, TraceRows
from sandbox_app.core.running.events import Event
from sandbox_app.ui.common.theme import Style, styles_for
from sandbox_app.ui.trace.highlighter import PLAIN_ROLES

_Index = QModelIndex | QPersistentModelIndex


class TraceRowsModel(QAbstractListModel):
    """The rows as Qt asks for them: text, colour, background and font of one row."""

    def __init__(self, font: QFont, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows = TraceRows()
        self._shown = 0  # rows Qt has been told of
        self._font = font
        self._styles: dict[Role, Style] = {}
        self._fonts: dict[Role, QFont] = {}

    def set_styles(self, styles: dict[str, Style]) -> None:
        self._styles = {Role(key): style for key, style in styles.items()}
        self._fonts = {}
        for role, style in self._styles.items():
            font = QFont(self._font)
            font.setBold(style.bold)
            font.setItalic(style.italic)
            font.setStrikeOut(style.strike)
            self._fonts[role] = font
        if self._shown:
            self.dataChanged.emit(self.index(0), self.index(self._shown - 1))

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 (Qt's default)
        return 0 if parent.isValid() else self._shown

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        row = index.row()
        if not 0 <= row < self._shown:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.rows.text(row)
        trace_role = self.rows.role(row)
        style = None if trace_role in PLAIN_ROLES else self._styles.get(trace_role)
        if role == Qt.ItemDataRole.ForegroundRole and style is not None:
            return QBrush(QColor(style.color))
        if role == Qt.ItemDataRole.BackgroundRole and style is not None and style.background:
            return QBrush(QColor(style.background))
        if role == Qt.ItemDataRole.FontRole:
            return self._fonts.get(trace_role, self._font)
        return None

    def add(self, events: list[Event]) -> None:
        """The rows these events write, told to the view in one insertion."""
        count = self.rows.add(events)
        if self.rows.changed_last and self._shown:
            self.dataChanged.emit(self.index(self._shown - 1), self.index(self._shown - 1))
        if count > self._shown:
            self.beginInsertRows(QModelIndex(), self._shown, count - 1)
            self._shown = count
            self.endInsertRows()

    def show_more(self, row: int) -> int:
        """The next page of the text folded at ``row``; the rows added (0: not a fold)."""
        if row not in self.rows.folds:
            return 0
        added = self.rows.show_more(row)  # the rows it adds are before the fold row
        if added > 0:
            self.beginInsertRows(QModelIndex(), row, row + added - 1)
            self._shown += added
            self.endInsertRows()
        last = min(row + added, self._shown - 1)
        self.dataChanged.emit(self.index(row), self.index(last))
        return added

    def clear(self) -> None:
        self.beginResetModel()
        self.rows, self._shown = TraceRows(), 0
        self.endResetModel()


class TraceList(QTableView):
    """The view: one row a line, all one height, only those on screen laid out.
    ``stepClicked(int)``: the user clicked a ``── Step n ──`` row.

    A table of one column, not a QListView: a list view lays its rows out again on every
    insertion, asking the (Python) model's row count twice a row (1.7 million calls, 1.9 s,
    for 3,000 steps streamed in), where a table's fixed-height rows are only counted."""

    stepClicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.setFont(font)
        self.setShowGrid(False)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.horizontalHeader().hide()
        self.verticalHeader().hide()
        rows = self.verticalHeader()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # no row is measured
        rows.setDefaultSectionSize(QFontMetrics(font).lineSpacing() + 2)
        columns = self.horizontalHeader()
        columns.setMinimumSectionSize(QFontMetrics(font).horizontalAdvance("x" * ROW_CHARS) + 12)
        columns.setStretchLastSection(True)  # the view's width, or a row's, scrolled
        self.model_ = TraceRowsModel(font, self)
        self.model_.set_styles(styles_for(self.palette()))
        self.setModel(self.model_)
        self.clicked.connect(self._on_clicked)
        self.activated.connect(self._on_clicked)

    @property
    def rows(self) -> TraceRows:
        return self.model_.rows

    def add(self, events: list[Event]) -> None:
        # Rows added below a full screen change only the scroll bar: the layout Qt does after
        # an insertion would repaint every row on screen too (2.2 ms a frame while a long
        # trace pours in; its rows' data asked again from Python).
        below = self.rowAt(self.viewport().height() - 1)
        self._below = 0 <= below < self.model_.rowCount() - 1 and not self.rows.changed_last
        self.model_.add(events)
        self._below = self._below and not self.rows.changed_last

    def doItemsLayout(self) -> None:
        if getattr(self, "_below", False):
            self._below = False
            self.updateGeometries()
            return
        super().doItemsLayout()

    def clear_trace(self) -> None:
        self._below = False
        self.model_.clear()

    def scroll_to_row(self, row: int) -> None:
        index = self.model_.index(row)
        self.setCurrentIndex(index)
        self.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtTop)

    def scroll_to_step(self, step: int) -> bool:
        """Put step ``step``'s separator at the top; False if it is not there (yet)."""
        row = self.rows.step_row(step)
        if row is None:
            return False
        self.scroll_to_row(row)
        return True

    # ---- what the find bar asks (ui/trace/trace_find.Findable) -------------------------

    def row_count(self) -> int:
        return self.model_.rowCount()

    def find_rows(self, needle: str, start: int, stop: int) -> list[int]:
        return self.rows.find(needle, start, stop)

    def show_row(self, row: int) -> None:
        index = self.model_.index(row)
        self.setCurrentIndex(index)
        self.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)

    def step_count(self) -> int:
        return self.rows.steps

    def step_at_row(self, row: int) -> int:
        """The step whose rows hold ``row`` (0 before the first)."""
        step = 0
        while (first := self.rows.step_row(step + 1)) is not None and first <= row:
            step += 1
        return step

    def plain_text(self) -> str:
        """The selected rows as text (Copy)."""
        rows = sorted({index.row() for index in self.selectedIndexes()})
        return "\n".join(self.rows.text(row) for row in rows)

    def _on_clicked(self, index: QModelIndex) -> None:
        row = index.row()
        if self.model_.show_more(row):
            return
        if self.rows.role(row) is Role.STEP:
            self.stepClicked.emit(self.step_at_row(row))

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.matches(QKeySequence.StandardKey.Copy):
            QApplication.clipboard().setText(self.plain_text())
            return
        super().keyPressEvent(event)

    def changeEvent(self, event: Any) -> None:
        super().changeEvent(event)
        from PySide6.QtCore import QEvent

        if event.type() == QEvent.Type.PaletteChange:  # the system switched light/dark
            self.model_.set_styles(styles_for(self.palette()))
