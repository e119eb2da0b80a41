"""The results matrix as a Qt model: a row per case, its question and expected answer, then a
column per arm, each cell ``k/N`` and the latest answer, coloured by its pass rate.

The model holds the case numbers that pass the filter (8 bytes a case) and at most
:data:`KEPT_PAGES` pages of :data:`PAGE` rows; a page is read from the source
(core/comparing/results_matrix.py) when Qt first asks for one of its cells, so scrolling
through 10,000 cases reads the pages scrolled past, and opening reads one. Answers and
questions came from models and files: display and tooltip text only (``tip``), never markup.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from sandbox_app.core.comparing.results_matrix import MatrixCell, MatrixRow, MatrixSource
from sandbox_app.ui.common.plain import tip

PAGE = 100  # cases read at a time: a screen or two of rows
KEPT_PAGES = 20  # pages kept, the least recently drawn dropped first
SHOWN_ANSWER = 160  # characters of an answer in its cell (the view elides to the width)
Index = QModelIndex | QPersistentModelIndex


def colour(cell: MatrixCell) -> QColor:
    """Red at 0 %, amber at 50 %, green at 100 %, in even steps of hue: 4/5 reads as mostly
    passing, apart from 5/5 and far from 0/5 (a two-colour pass/fail rule would paint 4/5 and
    0/5 alike whenever one repeat failed)."""
    return QColor.fromHsvF(cell.rate * 120 / 360, 0.32, 0.97)


def one_line(text: str, limit: int = SHOWN_ANSWER) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


FIXED = ("Question", "Expected")  # the columns before the arms'


class MatrixModel(QAbstractTableModel):
    """The question, the expected answer, then one column per arm (``names``); a row per
    case shown."""

    def __init__(self, source: MatrixSource, names: Sequence[str]) -> None:
        super().__init__()
        self.source = source
        self._names = list(names)
        self._cases: list[int] = []
        self._pages: OrderedDict[int, list[MatrixRow]] = OrderedDict()

    def show_cases(self, cases: list[int]) -> None:
        """The cases to show, in order (a filter's result); every page read again."""
        self.beginResetModel()
        self._cases = cases
        self._pages.clear()
        self.endResetModel()

    def row_at(self, row: int) -> MatrixRow | None:
        if not 0 <= row < len(self._cases):
            return None
        number = row // PAGE
        page = self._pages.get(number)
        if page is None:
            wanted = self._cases[number * PAGE : (number + 1) * PAGE]
            read = {r.case: r for r in self.source.rows(wanted)}
            # A case gone from the database since the filter ran: an empty row, not a shift.
            page = [read.get(case) or MatrixRow(case, "", ()) for case in wanted]
            self._pages[number] = page
            while len(self._pages) > KEPT_PAGES:
                self._pages.popitem(last=False)
        else:
            self._pages.move_to_end(number)
        return page[row - number * PAGE]

    def cell(self, row: int, arm: int) -> MatrixCell | None:
        found = self.row_at(row)
        return found.cells[arm] if found is not None and arm < len(found.cells) else None

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self._cases)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(FIXED) + len(self._names)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, column = index.row(), index.column()
        if column < len(FIXED):
            found = self.row_at(row)
            text = "" if found is None else found.expected if column else found.question
            if role == Qt.ItemDataRole.DisplayRole:
                return one_line(text)
            return tip(text) or None if role == Qt.ItemDataRole.ToolTipRole else None
        arm = column - len(FIXED)
        cell = self.cell(row, arm)
        if cell is None:
            return "—" if role == Qt.ItemDataRole.DisplayRole else None
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{cell.text()}  {one_line(cell.shown)}".rstrip()
        if role == Qt.ItemDataRole.BackgroundRole:
            return colour(cell)
        if role == Qt.ItemDataRole.ForegroundRole:
            return QColor("#202124")  # dark on the light scale, whatever the theme
        if role == Qt.ItemDataRole.ToolTipRole:
            said = f"{cell.text()} passed · {self._names[arm]}\n\nLatest answer:\n"
            return tip(said + (cell.shown or "(none)"))
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Vertical:
            if role == Qt.ItemDataRole.DisplayRole and section < len(self._cases):
                return str(self._cases[section] + 1)  # the case's own number, filtered or not
            return None
        fixed = section < len(FIXED)
        if role == Qt.ItemDataRole.DisplayRole:
            return FIXED[section] if fixed else self._names[section - len(FIXED)]
        if role == Qt.ItemDataRole.ToolTipRole and not fixed:
            return tip(self._names[section - len(FIXED)])
        return None
