"""Panels a splitter collapsed, given room again (View → Restore collapsed panels).

Dragging a splitter's handle to its end collapses the panel there to nothing: the Compare
tab's table became a 2-px line with no visible way back. Panels stay collapsible (one out of
the way is sometimes what the user wants); one menu entry brings every collapsed one back.
The splitters are found by walking the window, so one added later is covered with no more
code; a panel hidden on purpose (presenter mode's editors, a lane shown one at a time) is not
collapsed, and stays hidden.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QWidget

SHARE = 3  # a panel brought back gets a third of its splitter (or what it needs, if more)


def restore_collapsed(root: QWidget) -> int:
    """Every panel collapsed to nothing in a splitter under ``root`` given a share of its
    splitter, taken from the largest panel beside it; how many were."""
    restored = 0
    for splitter in root.findChildren(QSplitter):
        sizes = splitter.sizes()
        total = sum(sizes)
        shut = [i for i, size in enumerate(sizes) if size == 0 and _shown(splitter.widget(i))]
        if total == 0 or not shut:  # never laid out yet, or nothing collapsed
            continue
        for i in shut:
            largest = max(range(len(sizes)), key=sizes.__getitem__)
            share = max(total // SHARE, _least(splitter, i))
            sizes[largest] -= share
            sizes[i] = share
        splitter.setSizes(sizes)
        restored += len(shut)
    return restored


def _shown(widget: QWidget | None) -> bool:
    return widget is not None and not widget.isHidden()


def _least(splitter: QSplitter, index: int) -> int:
    """What the panel needs at least along the splitter, as its layout says."""
    widget = splitter.widget(index)
    assert widget is not None
    least = widget.minimumSizeHint().expandedTo(widget.minimumSize())
    return least.height() if splitter.orientation() == Qt.Orientation.Vertical else least.width()
