"""Owns the asyncio task of one lane's runs and turns engine events into Qt signals.

Starting a new run cancels the old one (one task per lane); Stop cancels the task, and the
engine's stream closes on the way out. Cancellation is the normal way a run ends early, so it
is caught here and never reported as a crash.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, QTimer, Signal

from sandbox_app.core.running.events import Event, RunFinished
from sandbox_app.core.running.metrics import RunMetrics
from sandbox_app.lazy_import import lazy_import
from sandbox_app.ui.common.frames import Phase, frame_clock

if TYPE_CHECKING:
    import asyncio
else:
    asyncio = lazy_import("asyncio")


if TYPE_CHECKING:  # asyncio and the engine: imported at the first run, after the first frame
    from sandbox_app.core.running.engine import Runnable

log = logging.getLogger(__name__)


class Closable(Protocol):
    async def aclose(self) -> None: ...


# A run and what it talks to: an engine and its backend, or a recording and nothing.
RunFactory = Callable[[], "tuple[Runnable, Closable]"]


class RunController(QObject):
    """Runs one engine at a time on the qasync loop, optionally several times in a row.

    Signals:
        engineEvents(list): engine events, in order, including each RunFinished. Delivered
            at most once per frame, on the window's frame clock (ui/common/frames.py): at 2,000
            tokens/s per lane, one Qt signal per token would cost more than drawing them.
        repeatStarted(int): repeat number ``i`` (from 0) is about to start.
        runningChanged(bool): runs started (True), or ended and the UI may be restored (False).
    """

    engineEvents = Signal(list)
    repeatStarted = Signal(int)
    runningChanged = Signal(bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._task: asyncio.Task[None] | None = None
        self._starting: tuple[RunFactory, int] | None = None  # a run waiting for the loop
        self._active = False
        self._pending: list[Event] = []
        self.stop_requested_at: float | None = None

    @property
    def running(self) -> bool:
        # A flag, not task.done(): listeners of runningChanged(False) run inside the task's
        # last step, when the task is not done yet but the run is over.
        return self._active

    def start(self, make_run: RunFactory, repeats: int = 1) -> None:
        """Run ``repeats`` times, each with a fresh engine and backend from ``make_run``."""
        if self.running:
            self.stop()
        self.deliver()
        self.stop_requested_at = None
        self._starting = (make_run, repeats)
        self._active = True
        self._begin()
        self.runningChanged.emit(True)

    def _begin(self) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # the window is drawn before its loop runs (ui/window/app.py):
            # a run a script starts meanwhile begins at the loop's first turn
            QTimer.singleShot(0, self, self._begin)
            return
        starting, self._starting = self._starting, None
        if starting is not None:  # not stopped meanwhile
            self._task = asyncio.ensure_future(self._run(*starting))

    def stop(self) -> None:
        if self._starting is not None:  # not begun yet: it never will
            self._starting, self._active = None, False
            self.runningChanged.emit(False)
            return
        # Once only: a second cancel would land inside the cleanup that closes the stream.
        if self.running and self._task is not None and not self._task.cancelling():
            self.stop_requested_at = time.perf_counter()
            self._task.cancel()

    async def wait(self) -> None:
        """Until the current runs (if any) have fully ended, their streams closed."""
        task = self._task
        if task is not None and not task.done():
            await asyncio.wait({task})

    async def _run(self, make_run: RunFactory, repeats: int) -> None:
        from sandbox_app.core.running.engine import drive

        try:
            for repeat in range(repeats):
                engine, backend = make_run()
                self.deliver()  # the previous repeat's last events belong before this signal
                self.repeatStarted.emit(repeat)
                try:
                    await drive(engine, self._emit)
                finally:
                    await backend.aclose()
        except asyncio.CancelledError:
            pass  # Stop or close: drive() already emitted the 'stopped' RunFinished
        except Exception as err:  # a bug must end the run with a message, not a dead task
            log.exception("run failed unexpectedly")
            self._emit(RunFinished("failed", f"Unexpected error: {err}", None, RunMetrics()))
        finally:
            if self._task is asyncio.current_task():  # not replaced by a newer run meanwhile
                self.deliver()
                self._active = False
                self.runningChanged.emit(False)

    def _emit(self, event: Event) -> None:
        self._pending.append(event)
        frame_clock().schedule(self.deliver, Phase.DELIVER)

    def deliver(self) -> None:
        """Hand the events gathered since the last frame to the listeners now."""
        if self._pending:
            events, self._pending = self._pending, []
            self.engineEvents.emit(events)
