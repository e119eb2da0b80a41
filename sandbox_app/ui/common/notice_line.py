"""A one-line notice that never moves the inputs around it.

A warning that comes and goes as the user types was a row of its own: shown, it pushed every
box under it down (the prompt panel's "⚠ Undefined variables" moved Question and Variables ~50
px while the template was being typed; the left panel scrolls, so each row keeps its height
and a new one adds to it). A notice is one line tall whether it says something or not, as wide
as it is given and never wider (what does not fit ends in "…", the whole text in its tooltip),
so it goes beside a heading that is there anyway (:func:`headed`): its row is the heading's
height with it or without it.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QBoxLayout, QLabel, QSizePolicy, QWidget

from sandbox_app.ui.common.fitting import side_by_side
from sandbox_app.ui.common.plain import tip


class NoticeLine(QLabel):
    """Plain text on one line; :meth:`say` shows it, an empty one hides it (space kept)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)  # what it says may come from a file
        # Width: what the row leaves (Ignored: the text's width never widens the panel).
        # Height: one line, kept while hidden, so showing it moves nothing.
        policy = QSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        policy.setRetainSizeWhenHidden(True)
        self.setSizePolicy(policy)
        self.hide()

    def say(self, text: str) -> None:
        self.setText(text)
        self.setToolTip(tip(text))
        self.setVisible(bool(text))

    def sizeHint(self) -> QSize:
        margins = self.contentsMargins()
        height = self.fontMetrics().height() + margins.top() + margins.bottom()
        return QSize(self.fontMetrics().averageCharWidth() * 20, height + 2 * self.margin())

    def minimumSizeHint(self) -> QSize:
        return QSize(0, self.sizeHint().height())

    def paintEvent(self, event: QPaintEvent) -> None:
        area = self.contentsRect().adjusted(self.margin(), 0, -self.margin(), 0)
        shown = self.fontMetrics().elidedText(
            self.text(), Qt.TextElideMode.ElideRight, area.width()
        )
        align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        painter = QPainter(self)
        self.style().drawItemText(
            painter, area, align, self.palette(), self.isEnabled(), shown, self.foregroundRole()
        )
        painter.end()


def headed(heading: QWidget, notice: NoticeLine) -> QWidget:
    """``heading`` with ``notice`` beside it, in the rest of the row."""
    row = side_by_side(heading, notice)
    layout = row.layout()
    assert isinstance(layout, QBoxLayout)
    layout.setStretch(1, 1)  # the heading as wide as its text, the notice the rest
    return row
