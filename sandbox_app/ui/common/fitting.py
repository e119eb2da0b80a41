"""Widgets that fit a small screen or a large zoom instead of widening the window.

A push button is at least 80 px wide whatever its text; a tool button is as wide as its text,
so a row of them fits beside the editors on an 800-px screen and at presenter sizes on a
1280-px projector. A panel whose row of buttons cannot shrink goes in a scroll area: it
scrolls when the window is narrow, and the window keeps the width of the screen.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QScrollArea, QToolButton, QWidget

# A widget property: its font is this many times the application's (unzoomed) font; the
# answers' larger type says so, since its size at zoom 1 cannot be read once zoomed (zoom:
# presenter.py; here, so a widget says it without importing the presenter above it).
FONT_FACTOR = "fontFactor"


def tool_button(text: str) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    return button


def lines_tall(edit: QPlainTextEdit, lines: int) -> int:
    """The height that shows ``lines`` lines of ``edit``'s text, its frame and margins with
    them (a box's height given as lines alone showed a line fewer)."""
    margin = edit.document().documentMargin()
    return round(lines * edit.fontMetrics().lineSpacing() + 2 * (edit.frameWidth() + margin))


def scrolling(widget: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    return area


class _HeightHolder(QObject):
    """On each change of width: the widget's minimum height is what its layout needs at that
    width (``whole``: every row at its preferred height; else at its minimum)."""

    def __init__(self, widget: QWidget, whole: bool) -> None:
        super().__init__(widget)
        self._whole = whole

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if isinstance(watched, QWidget) and isinstance(event, QResizeEvent):
            width = event.size().width()
            layout = watched.layout()
            if width != event.oldSize().width() and layout is not None:
                need = (
                    layout.totalHeightForWidth if self._whole else layout.totalMinimumHeightForWidth
                )
                watched.setMinimumHeight(need(width))
        return False


def hold_height_for_width(widget: QWidget, *, whole: bool = False) -> None:
    """Qt's minimum height leaves height-for-width out (word-wrapped labels, a form whose
    rows wrap when narrow): a narrow lane gave its settings form 203 of the 377 px it
    needed and the rows overlapped. Held as an explicit minimum, every layout around the
    widget respects it, and a scroll area scrolls instead."""
    widget.installEventFilter(_HeightHolder(widget, whole))


def side_by_side(*widgets: QWidget) -> QWidget:
    """Widgets in a row, as one widget (a tab bar's corner takes one)."""
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        layout.addWidget(widget)
    return row
