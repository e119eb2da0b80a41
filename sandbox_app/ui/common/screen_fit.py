"""Every dialog fits the screen it opens on.

Help → Keyboard shortcuts was 811 px tall on a 720-px projector: its OK button below the
screen. One rule, for every dialog the app opens (those written later too): when a dialog is
shown, it is made no larger than the available area of its screen (the screen less its panels)
and moved wholly onto it; a dialog whose content cannot shrink that far gets its content in a
scroll area (its buttons row kept under it, always in view). Installed once on the
QApplication (:func:`install`, by ``app.app_wide_rules``), as the wheel rule is.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize
from PySide6.QtWidgets import (
    QApplication,
    QBoxLayout,
    QDialogButtonBox,
    QScrollArea,
    QWidget,
)

SCROLLED = "screenFitScrolled"  # a dialog property: its content was put in a scroll area


def available(widget: QWidget) -> QRect:
    """The area a window of ``widget``'s may take: its screen's, less the desktop's panels."""
    screen = widget.screen() or QApplication.primaryScreen()
    return screen.availableGeometry()


def fit_to_screen(dialog: QWidget, area: QRect | None = None) -> None:
    """``dialog`` (a window) no larger than ``area`` (its screen's available area) with its
    frame, and wholly on it."""
    area = area if area is not None else available(dialog)
    frame = dialog.frameGeometry().size() - dialog.geometry().size()  # title bar, borders
    room = QSize(area.width() - frame.width(), area.height() - frame.height())
    least = dialog.minimumSizeHint().expandedTo(dialog.minimumSize())
    if least.height() > room.height() or least.width() > room.width():
        _scroll_content(dialog)
    size = dialog.size().boundedTo(room)
    if size != dialog.size():
        dialog.resize(size)
    outer = dialog.frameGeometry()
    x = min(max(outer.x(), area.left()), area.right() + 1 - outer.width())
    y = min(max(outer.y(), area.top()), area.bottom() + 1 - outer.height())
    if (x, y) != (outer.x(), outer.y()):
        dialog.move(max(x, area.left()), max(y, area.top()))


def _scroll_content(dialog: QWidget) -> None:
    """The dialog's content, but for a buttons row at its end, moved into a scroll area (a
    dialog laid out in a row or column: every one of the app's)."""
    layout = dialog.layout()
    if not isinstance(layout, QBoxLayout) or dialog.property(SCROLLED):
        return
    dialog.setProperty(SCROLLED, True)
    body = QWidget()
    inner = QBoxLayout(layout.direction(), body)
    margins = layout.contentsMargins()
    inner.setContentsMargins(margins)
    inner.setSpacing(layout.spacing())
    last = layout.itemAt(layout.count() - 1) if layout.count() else None
    buttons = last.widget() if last is not None else None
    keep = 1 if isinstance(buttons, QDialogButtonBox) else 0
    while layout.count() > keep:
        stretch = layout.stretch(0)
        item = layout.takeAt(0)
        if item is None:
            break
        if (widget := item.widget()) is not None:
            inner.addWidget(widget, stretch, item.alignment())
        elif (child := item.layout()) is not None:
            inner.addLayout(child, stretch)
        else:
            inner.addItem(item)
    area = QScrollArea()
    area.setWidget(body)
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    layout.insertWidget(0, area, 1)
    layout.setContentsMargins(0, 0, 0, margins.bottom() if keep else 0)
    if keep:
        inner.setContentsMargins(margins.left(), margins.top(), margins.right(), 0)
    layout.activate()  # the dialog's least size is the scroll area's now
