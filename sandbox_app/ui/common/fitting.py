"""Widgets that fit a small screen or a large zoom instead of widening the window.

A push button is at least 80 px wide whatever its text; a tool button is as wide as its text,
so a row of them fits beside the editors on an 800-px screen and at presenter sizes on a
1280-px projector. A panel whose row of buttons cannot shrink goes in a scroll area: it
scrolls when the window is narrow, and the window keeps the width of the screen.
"""

from __future__ import annotations

from itertools import pairwise

from PySide6.QtCore import QEvent, QObject, QSize
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLayout,
    QPlainTextEdit,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

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


class FoldingRow(QWidget):
    """A row of groups of controls that puts a group on a new line when the row is too narrow
    for it, as words wrap. On an 800-px projector the Test set tab's buttons, options and
    progress bar in one row made the tab wider than the screen: the progress, the status and
    the end of every line under them were scrolled out of view. A group keeps its controls
    together; its least width is the row's (so the row can narrow to where it wraps)."""

    def __init__(self) -> None:
        super().__init__()
        self._lines = QVBoxLayout(self)
        self._lines.setContentsMargins(0, 0, 0, 0)
        self._lines.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)  # ours, below
        self._groups: list[tuple[QWidget, int]] = []
        self._cut: list[int] = []  # where each line after the first starts, in groups

    def group(self, *widgets: QWidget, stretch: int = 0) -> QHBoxLayout:
        """A new group of ``widgets`` at the row's end (its layout returned, for more);
        ``stretch``: its share of a line, which its first widget takes (a progress bar)."""
        holder = QWidget()
        layout = QHBoxLayout(holder)
        layout.setContentsMargins(0, 0, 0, 0)
        for i, widget in enumerate(widgets):
            layout.addWidget(widget, stretch if i == 0 else 0)
        self._groups.append((holder, stretch))
        self._place(self._cuts(self.width()) if self.width() else [])
        return layout

    def _least(self, holder: QWidget) -> int:
        return holder.minimumSizeHint().expandedTo(holder.minimumSize()).width()

    def _cuts(self, width: int) -> list[int]:
        """Where lines start (after the first) for ``width``: each group on the line before
        unless it would overflow it."""
        cuts, used, gap = [], 0, max(self._lines.spacing(), 0)
        for i, (holder, _) in enumerate(self._groups):
            need = self._least(holder)
            if used and used + gap + need > width:
                cuts.append(i)
                used = 0
            used += (gap if used else 0) + need
        return cuts

    def _place(self, cuts: list[int]) -> None:
        self._cut = cuts
        while (item := self._lines.takeAt(0)) is not None:
            if (line := item.layout()) is not None:
                while line.takeAt(0) is not None:
                    pass  # the groups stay: they are put on their new lines below
        starts = [0, *cuts, len(self._groups)]
        for start, end in pairwise(starts):
            line = QHBoxLayout()
            for holder, stretch in self._groups[start:end]:
                line.addWidget(holder, stretch)
            if not any(stretch for _, stretch in self._groups[start:end]):
                line.addStretch(1)  # its groups at the start, as a wrapped line's words
            self._lines.addLayout(line)
        self.updateGeometry()

    def minimumSizeHint(self) -> QSize:
        width = max((self._least(holder) for holder, _ in self._groups), default=0)
        starts = [0, *self._cut, len(self._groups)]
        heights = [
            max((h.minimumSizeHint().height() for h, _ in self._groups[a:b]), default=0)
            for a, b in pairwise(starts)
        ]
        return QSize(width, sum(heights) + max(self._lines.spacing(), 0) * (len(heights) - 1))

    def sizeHint(self) -> QSize:
        return self.minimumSizeHint()

    def resizeEvent(self, event: QResizeEvent) -> None:
        if (cuts := self._cuts(event.size().width())) != self._cut:
            self._place(cuts)
        super().resizeEvent(event)
