"""The window's frame clock: work that would happen per token happens at most once per frame.

One timer for the whole window. On each tick the run controllers hand over the engine events
gathered since the last frame, then the trace panes write what those events queued, in the
same frame: one frame of delay from a token's arrival to the screen, not one per stage.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from enum import IntEnum

from PySide6.QtCore import QObject, QTimer
from shiboken6 import isValid

log = logging.getLogger(__name__)
FRAME_MS = 16


class Phase(IntEnum):
    DELIVER = 0  # engine events to their listeners
    DRAW = 1  # queued text into the documents


class FrameClock(QObject):
    def __init__(self) -> None:
        super().__init__()
        self._due: dict[Callable[[], None], Phase] = {}  # bound methods, deduplicated
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._tick)
        self._ticked_at = 0.0
        self._drawing: list[Callable[[], None]] = []

    def schedule(self, callback: Callable[[], None], phase: Phase) -> None:
        """Run ``callback`` (once, however often it is scheduled) on the next tick."""
        self._due[callback] = phase
        if not self._timer.isActive():
            self._timer.start(self._until_next_frame())

    def _until_next_frame(self) -> int:
        # Zero when the last tick is already a frame old: what just arrived goes out at the
        # end of this event-loop pass instead of a whole frame later.
        elapsed_ms = (time.perf_counter() - self._ticked_at) * 1000
        return max(0, round(FRAME_MS - elapsed_ms))

    def _tick(self) -> None:
        self._ticked_at = time.perf_counter()
        for callback in self._take(Phase.DELIVER):
            _call(callback)
        # What DELIVER queued is drawn in this same frame, one pane per event-loop pass, so
        # that input and timers get their turn between panes instead of after all four.
        chain_running = bool(self._drawing)  # the previous frame's panes are still going
        self._drawing.extend(self._take(Phase.DRAW))
        if not chain_running:
            self._draw_next()

    def _draw_next(self) -> None:
        if self._drawing:
            _call(self._drawing.pop(0))
        if self._drawing:
            QTimer.singleShot(0, self, self._draw_next)
        elif self._due and not self._timer.isActive():  # a pane with a backlog: next frame
            self._timer.start(self._until_next_frame())

    def _take(self, phase: Phase) -> list[Callable[[], None]]:
        due = [callback for callback, p in self._due.items() if p is phase]
        for callback in due:
            del self._due[callback]
        return due


def _call(callback: Callable[[], None]) -> None:
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, QObject) and not isValid(owner):
        return  # deleted since it asked
    try:
        callback()
    except Exception:  # a bug in one pane must not stop every pane's frames
        log.exception("frame callback failed")


@functools.cache
def frame_clock() -> FrameClock:
    return FrameClock()
