"""The results matrix as a Qt model: a row per case, its question and expected answer, then a
column per arm, each cell ``k/N`` and the latest answer, coloured by its pass rate.

The model holds the case numbers that pass the filter (8 bytes a case, an ``array``) and at
most :data:`KEPT_PAGES` pages of :data:`PAGE` rows: a page is read from the source
(core/comparing/results_matrix.py, one indexed query) when Qt first asks for one of its
cells (and the page after it, ahead, in an event of its own), so scrolling through 10,000
cases reads the pages scrolled past, opening reads two, and the model never holds more than
``KEPT_PAGES * PAGE`` rows whatever the evaluation's size.

Drawing a screen is most of a scroll's cost, so a cell's look (its text, its colour) is made
once a page (:meth:`MatrixModel.look`) and drawn from there (cell_painter.py). A cell's text
is laid out by Qt glyph by glyph, answers run to thousands of characters, and a column shows
~30: what is laid out is cut to its column's room (:meth:`MatrixModel.set_room`), the tooltip
has all of it. Answers and questions came from models and files: display and tooltip text
only (``tip``), never markup.
"""

from __future__ import annotations

from array import array
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer
from PySide6.QtGui import QColor

from sandbox_app.core.comparing.results_matrix import MatrixCell, MatrixRow, MatrixSource
from sandbox_app.ui.common.plain import tip

PAGE = 100  # cases read at a time: a screen or two of rows
KEPT_PAGES = 20  # pages kept, the least recently drawn dropped first
ROOM = 60  # characters of a cell's text laid out until the view says its columns' room
Index = QModelIndex | QPersistentModelIndex
DISPLAY, TOOLTIP = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole
BACKGROUND, FOREGROUND = Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.ForegroundRole
INK = QColor("#202124")  # dark on the light scale, whatever the theme


def colour(cell: MatrixCell) -> QColor:
    """Red at 0 %, amber at 50 %, green at 100 %, in even steps of hue: 4/5 reads as mostly
    passing, apart from 5/5 and far from 0/5 (a two-colour pass/fail rule would paint 4/5 and
    0/5 alike whenever one repeat failed)."""
    return QColor.fromHsvF(cell.rate * 120 / 360, 0.32, 0.97)


def one_line(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters (the last "…" when cut); only the
    part that can show is split and joined (an answer of megabytes costs its first line's)."""
    flat = " ".join(text[: 4 * limit + 64].split())
    return flat if len(flat) <= limit and len(text) <= 4 * limit + 64 else flat[: limit - 1] + "…"


FIXED = ("Question", "Expected")  # the columns before the arms'
Look = tuple[str, QColor | None]  # a cell as drawn: its text, its background


class MatrixModel(QAbstractTableModel):
    """The question, the expected answer, then one column per arm (``names``); a row per
    case shown. ``arm_tip``: an arm's column's tooltip (its pass rate, pass@k, pass^k)."""

    def __init__(
        self,
        source: MatrixSource,
        names: Sequence[str],
        arm_tip: Callable[[int], str] | None = None,
    ) -> None:
        super().__init__()
        self.source = source
        self._names = list(names)
        self._arm_tip = arm_tip
        self._cases = array("q")
        self._pages: OrderedDict[int, list[MatrixRow]] = OrderedDict()
        self._looks: dict[int, list[list[Look | None]]] = {}  # page → row → column
        self._ahead: set[int] = set()  # pages to be read ahead
        self._room = [ROOM] * (len(FIXED) + len(self._names))

    def show_cases(self, cases: Sequence[int]) -> None:
        """The cases to show, in order (a filter's result); every page read again."""
        self.beginResetModel()
        self._cases = array("q", cases)
        self._pages.clear()
        self._looks.clear()
        self._ahead.clear()
        self.endResetModel()

    def kept_rows(self) -> int:
        """The rows held now (what a test holds to ``KEPT_PAGES * PAGE``)."""
        return sum(len(page) for page in self._pages.values())

    def set_room(self, column: int, characters: int) -> None:
        """The characters ``column`` can show at its width (the view's, as it changes)."""
        characters = max(8, characters)
        if 0 <= column < len(self._room) and self._room[column] != characters:
            self._room[column] = characters
            self._looks.clear()
            if self._cases:
                last = len(self._cases) - 1
                self.dataChanged.emit(self.index(0, column), self.index(last, column))

    def row_at(self, row: int) -> MatrixRow | None:
        if not 0 <= row < len(self._cases):
            return None
        number = row // PAGE
        page = self._pages.get(number)
        if page is None:
            page = self._read(number)
        else:
            self._pages.move_to_end(number)
        after = number + 1
        if (
            after * PAGE < len(self._cases)
            and after not in self._pages
            and after not in self._ahead
        ):
            # The next page is read soon, in an event of its own between two frames, rather
            # than in the frame that scrolls to it (a read and a screen in one frame).
            self._ahead.add(after)
            cases = self._cases
            QTimer.singleShot(0, self, lambda: self._read_ahead(after, cases))
        return page[row - number * PAGE]

    def _read(self, number: int) -> list[MatrixRow]:
        wanted = self._cases[number * PAGE : (number + 1) * PAGE]
        read = {r.case: r for r in self.source.rows(wanted)}
        # A case gone from the database since the filter ran: an empty row, not a shift.
        page = [read.get(case) or MatrixRow(case, "", ()) for case in wanted]
        self._pages[number] = page
        while len(self._pages) > KEPT_PAGES:
            dropped, _ = self._pages.popitem(last=False)
            self._looks.pop(dropped, None)
        return page

    def _read_ahead(self, number: int, cases: array[int]) -> None:
        """Page ``number`` read ahead, unless the cases changed or it is read already."""
        if cases is not self._cases:
            return
        self._ahead.discard(number)
        if number not in self._pages:
            self._read(number)

    def cell(self, row: int, arm: int) -> MatrixCell | None:
        found = self.row_at(row)
        return found.cells[arm] if found is not None and arm < len(found.cells) else None

    def look(self, row: int, column: int) -> Look:
        """The cell's text and background, made once a page."""
        found = self.row_at(row)  # first: it may read the page (and drop the oldest's looks)
        number, at = divmod(row, PAGE)
        rows = self._looks.get(number)
        if rows is None:
            rows = self._looks[number] = [[None] * len(self._room) for _ in range(PAGE)]
        made = rows[at][column]
        if made is None:
            made = rows[at][column] = self._made(found, column)
        return made

    def _made(self, found: MatrixRow | None, column: int) -> Look:
        room = self._room[column]
        if column < len(FIXED):
            text = "" if found is None else found.expected if column else found.question
            return one_line(text, room), None
        arm = column - len(FIXED)
        cell = found.cells[arm] if found is not None and arm < len(found.cells) else None
        if cell is None:
            return "—", None
        counts = cell.text()
        return f"{counts}  {one_line(cell.shown, room - len(counts) - 2)}".rstrip(), colour(cell)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self._cases)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(FIXED) + len(self._names)

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        if not index.isValid():
            return None
        row, column = index.row(), index.column()
        if role == TOOLTIP:
            return self._tooltip(row, column)
        if role not in (DISPLAY, BACKGROUND, FOREGROUND):
            return None
        text, background = self.look(row, column)
        if role == DISPLAY:
            return text
        if background is None:
            return None
        return background if role == BACKGROUND else INK

    def _tooltip(self, row: int, column: int) -> str | None:
        found = self.row_at(row)
        if column < len(FIXED):
            text = "" if found is None else found.expected if column else found.question
            return tip(text) or None
        arm = column - len(FIXED)
        cell = self.cell(row, arm)
        if cell is None:
            return None
        said = f"{cell.text()} passed · {self._names[arm]}\n\nLatest answer:\n"
        return tip(said + (cell.shown or "(none)"))

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = DISPLAY) -> Any:
        if orientation == Qt.Orientation.Vertical:
            if role == DISPLAY and section < len(self._cases):
                return str(self._cases[section] + 1)  # the case's own number, filtered or not
            return None
        fixed = section < len(FIXED)
        if role == DISPLAY:
            return FIXED[section] if fixed else self._names[section - len(FIXED)]
        if role == TOOLTIP and not fixed:
            arm = section - len(FIXED)
            said = self._arm_tip(arm) if self._arm_tip is not None else ""
            return tip("\n\n".join(part for part in (self._names[arm], said) if part))
        return None
