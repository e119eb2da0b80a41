"""How a cell of the results matrix is drawn: its colour, then its text on one line, elided.

Drawing a screen is what a scroll costs, and Qt's own delegate spends most of it asking the
model for seven roles a cell and laying its text out twice (to elide it, then to draw it): 10.7
ms of CPU a screen of 27 rows × 6 columns of 49 characters against 4.8 ms here (a table of its
own, the machine shared; the matrix's page down went 18.4 -> 8.5 ms), where a cell is one call
into Python (the model's ``look``, made once a page), one fill and one ``drawText`` of a line
elided once for its column's width (kept for the next frames that show it).
"""

from __future__ import annotations

from collections import OrderedDict

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from sandbox_app.ui.results.matrix_model import INK, MatrixModel

MARGIN = 4  # pixels left and right of a cell's text, as Qt's own delegate leaves
KEPT = 4096  # elided lines kept: a few screens of cells
LINE = Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextSingleLine
# A cell's state as a plain int: Python's enum operators cost more than the fill they decide.
SELECTED = QStyle.StateFlag.State_Selected.value
FOCUSED = QStyle.StateFlag.State_HasFocus.value


class CellPainter(QStyledItemDelegate):
    def __init__(self, model: MatrixModel) -> None:
        super().__init__(model)
        self._model = model
        self._elided: OrderedDict[tuple[str, int], str] = OrderedDict()

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        text, background = self._model.look(index.row(), index.column())
        rect = option.rect
        palette = option.palette
        state = option.state.value
        if state & SELECTED:
            painter.fillRect(rect, palette.highlight())
            painter.setPen(palette.highlightedText().color())
        else:
            if background is not None:
                painter.fillRect(rect, background)
            painter.setPen(INK if background is not None else palette.text().color())
        width = rect.width() - 2 * MARGIN
        painter.drawText(
            rect.adjusted(MARGIN, 0, -MARGIN, 0), LINE, self._fitted(text, width, option)
        )
        if state & FOCUSED:
            painter.setPen(palette.highlight().color())
            painter.drawRect(rect.adjusted(0, 0, -1, -1))

    def _fitted(self, text: str, width: int, option: QStyleOptionViewItem) -> str:
        key = (text, width)
        found = self._elided.get(key)
        if found is None:
            metrics = option.fontMetrics
            found = metrics.elidedText(text, Qt.TextElideMode.ElideRight, width)
            self._elided[key] = found
            if len(self._elided) > KEPT:
                self._elided.popitem(last=False)
        return found
