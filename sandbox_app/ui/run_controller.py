"""Owns the asyncio task of one lane's run and turns engine events into Qt signals.

Starting a new run cancels the old one (one run per lane); Stop cancels the task, and the
engine's stream closes on the way out. Cancellation is the normal way a run ends early, so it
is caught here and never reported as a crash.
"""

from __future__ import annotations

import asyncio
import time

from PySide6.QtCore import QObject, Signal

from sandbox_app.backends.base import Backend
from sandbox_app.core.engine import ReactEngine, drive
from sandbox_app.core.events import Event, RunFinished


class RunController(QObject):
    """Runs one engine at a time on the qasync loop.

    Signals:
        engineEvent(object): every engine event, in order, including the final RunFinished.
        runningChanged(bool): a run started (True) or ended and the UI may be restored (False).
    """

    engineEvent = Signal(object)  # not 'event': that would hide QObject.event()
    runningChanged = Signal(bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._task: asyncio.Task[None] | None = None
        self.last_result: RunFinished | None = None
        self.stop_requested_at: float | None = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self, engine: ReactEngine, backend: Backend) -> None:
        if self.running:
            self.stop()
        self.last_result = None
        self.stop_requested_at = None
        self._task = asyncio.ensure_future(self._run(engine, backend))
        self.runningChanged.emit(True)

    def stop(self) -> None:
        if self.running and self._task is not None:
            self.stop_requested_at = time.perf_counter()
            self._task.cancel()

    async def wait(self) -> None:
        """Until the current run (if any) has fully ended, its stream closed."""
        task = self._task
        if task is not None and not task.done():
            await asyncio.wait({task})

    async def _run(self, engine: ReactEngine, backend: Backend) -> None:
        try:
            self.last_result = await drive(engine, self._emit)
        except asyncio.CancelledError:
            pass  # Stop or close: drive() already emitted the 'stopped' RunFinished
        finally:
            await backend.aclose()
            if self._task is asyncio.current_task():  # not replaced by a newer run meanwhile
                self.runningChanged.emit(False)

    def _emit(self, event: Event) -> None:
        if isinstance(event, RunFinished):
            self.last_result = event
        self.engineEvent.emit(event)
