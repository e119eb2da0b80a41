"""One background event loop for HTTP, so reading streams never competes with drawing.

Four fast lanes are about 8,000 SSE chunks a second, and every chunk costs 50-170 µs in the
HTTP stack (h11 parsing, httpx2 and anyio plumbing). On the GUI thread that is half a core or
more of work between frames: the heartbeat lagged and the trace fell seconds behind. Here the
chunks are read on a daemon thread running its own asyncio loop, and the caller's loop is
woken at most once per :data:`WAKE_EVERY_S` with everything that arrived meanwhile, merged.
The first text of a reply and its end are passed on at once: time to first token is not
delayed, and neither is the next step.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from collections.abc import AsyncGenerator, Callable, Coroutine
from contextlib import aclosing, suppress
from typing import Any, TypeVar

from sandbox_app.core.running.backend import BackendError, Delta

T = TypeVar("T")
log = logging.getLogger(__name__)

# Half a 60 Hz frame: the window draws what arrived in time for the next frame, and the
# caller's loop is woken ~120 times a second per stream instead of ~2,000.
WAKE_EVERY_S = 0.008
# How long a stopped stream may take to close its connection before the caller moves on.
CLOSE_WAIT_S = 2.0

_lock = threading.Lock()
_loops: dict[str, asyncio.AbstractEventLoop] = {}


def network_loop() -> asyncio.AbstractEventLoop:
    """The background loop for HTTP, started on first use."""
    return background_loop("network")


def background_loop(name: str) -> asyncio.AbstractEventLoop:
    """A loop of its own on a daemon thread named ``name`` (so it never blocks exit), started
    on first use: "network" for HTTP; the window's test set runs its engines on another."""
    with _lock:
        loop = _loops.get(name)
        if loop is None:
            # Not asyncio.new_event_loop(): under qasync's policy that would be a Qt loop,
            # which cannot run outside the main thread.
            loop = asyncio.SelectorEventLoop()
            # In debug mode (-X dev) asyncio reports steps over 0.1 s, a limit meant for a loop
            # that draws; this one does not, and a first request made while the start-up
            # imports are still running waits about that long for the import lock.
            loop.slow_callback_duration = 0.5
            thread = threading.Thread(target=loop.run_forever, name=name, daemon=True)
            thread.start()
            _loops[name] = loop
        return loop


async def call(coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` on the network loop from any other loop."""
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, network_loop()))


async def call_until_ended(
    coro: Coroutine[Any, Any, T], loop: asyncio.AbstractEventLoop, stop_wait_s: float = 5.0
) -> T:
    """Await ``coro`` on ``loop`` from another loop. Cancelled, it cancels ``coro`` and
    returns once that has ended (its streams closed, the callbacks it queued on the caller's
    loop delivered before), or after ``stop_wait_s``."""
    caller = asyncio.get_running_loop()
    ended: asyncio.Future[asyncio.Task[T]] = caller.create_future()
    tasks: list[asyncio.Task[T]] = []

    def settle(task: asyncio.Task[T]) -> None:
        if not ended.done():
            ended.set_result(task)

    def report(task: asyncio.Task[T]) -> None:  # on ``loop``, also for a task never started
        with suppress(RuntimeError):  # the caller's loop is closed
            caller.call_soon_threadsafe(settle, task)

    def start() -> None:
        tasks.append(loop.create_task(coro))
        tasks[0].add_done_callback(report)

    loop.call_soon_threadsafe(start)
    try:
        task = await asyncio.shield(ended)
    except asyncio.CancelledError:
        loop.call_soon_threadsafe(lambda: tasks and tasks[0].cancel())
        with suppress(TimeoutError):  # work that will not end must not hold the caller
            await asyncio.wait_for(ended, stop_wait_s)
        raise
    return task.result()  # its value, or its exception


class _End:
    """Marks the end of a relayed stream (normal end, error or cancellation)."""


_END = _End()


class _Relay:
    """Items from the network thread to one caller loop, with at most one wake-up pending."""

    def __init__(self, caller: asyncio.AbstractEventLoop) -> None:
        self._caller = caller
        self._items: deque[Delta | BaseException | _End] = deque()
        self._lock = threading.Lock()
        self._ready = asyncio.Event()  # belongs to the caller's loop
        self._wake_pending = False
        self._last_wake = 0.0
        self._text_seen = False
        self._delayed: asyncio.TimerHandle | None = None  # a batched wake-up still to come

    # -- network thread --

    def put(self, item: Delta | BaseException | _End) -> None:
        # Passed on at once: the first text (time to first token is measured on it; servers
        # often send an empty chunk before it) and the end (the caller's next step, a tool or
        # the next request, must not wait out the batching delay).
        first_text = (
            isinstance(item, Delta) and bool(item.text or item.reasoning) and not self._text_seen
        )
        self._text_seen = self._text_seen or first_text
        now = first_text or isinstance(item, _End)
        with self._lock:
            self._items.append(item)
            if self._wake_pending and not now:
                return  # the wake-up already on its way will take this item too
            self._wake_pending = True
        if self._delayed is not None:
            self._delayed.cancel()  # superseded by this wake-up
            self._delayed = None
        delay = self._last_wake + WAKE_EVERY_S - time.perf_counter()
        if delay > 0 and not now:
            self._delayed = asyncio.get_running_loop().call_later(delay, self._wake)
        else:
            self._wake()

    def _wake(self) -> None:
        self._delayed = None
        self._last_wake = time.perf_counter()
        with suppress(RuntimeError):  # the caller's loop is closed: nobody reads any more
            self._caller.call_soon_threadsafe(self._ready.set)

    # -- caller's loop --

    async def take(self) -> list[Delta | BaseException | _End]:
        await self._ready.wait()
        with self._lock:
            items = list(self._items)
            self._items.clear()
            self._ready.clear()
            self._wake_pending = False
        return items


def merged(items: list[Delta | BaseException | _End]) -> list[Delta | BaseException | _End]:
    """Consecutive deltas of only text (or only reasoning) become one; notices, usage, the
    finish reason, the send time and the end keep their place."""
    out: list[Delta | BaseException | _End] = []
    run: list[Delta] = []  # plain deltas of one kind, to merge

    def close_run() -> None:
        if run:
            out.append(
                Delta(
                    "".join(d.text for d in run),
                    reasoning="".join(d.reasoning for d in run),
                    chunks=sum(d.chunks for d in run),
                )
            )
            run.clear()

    for item in items:
        if isinstance(item, Delta) and item.plain:
            if not (item.text or item.reasoning):
                continue  # an empty chunk (the role) carries nothing
            if run and bool(run[0].text) != bool(item.text):
                close_run()  # thinking and content stay apart, in order
            run.append(item)
            continue
        close_run()
        out.append(item)
    close_run()
    return out


async def relay_stream(
    open_stream: Callable[[], AsyncGenerator[Delta, None]],
) -> AsyncGenerator[Delta, None]:
    """Iterate the stream ``open_stream()`` makes on the network loop, from the caller's loop.

    Closing this generator (a cut, Stop, an error downstream) cancels the network side and
    waits, up to :data:`CLOSE_WAIT_S`, until its connection is closed.
    """
    caller = asyncio.get_running_loop()
    relay = _Relay(caller)
    closed = caller.create_future()

    def mark_closed() -> None:
        if not closed.done():
            closed.set_result(None)

    async def pump() -> None:
        try:
            async with aclosing(open_stream()) as stream:
                async for delta in stream:
                    relay.put(delta)
        except asyncio.CancelledError:
            pass  # the caller stopped reading
        except Exception as err:
            if not isinstance(err, BackendError):  # a bug: keep its real traceback in the log
                log.exception("stream failed unexpectedly")
            # A fresh error of the same kind and message: the original's traceback holds this
            # thread's frames (and the generators in them) and must not travel to the caller.
            relay.put(_detached(err))
        finally:
            relay.put(_END)
            with suppress(RuntimeError):  # the caller's loop is closed
                caller.call_soon_threadsafe(mark_closed)

    # Cancelling ``running`` reaches the task through the network loop's queue, behind the
    # task's first step: pump() always enters its try block, so ``closed`` is always set.
    running = asyncio.run_coroutine_threadsafe(pump(), network_loop())
    try:
        while True:
            for item in merged(await relay.take()):
                if isinstance(item, _End):
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
    finally:
        running.cancel()
        # A connection that will not close must not hold up the caller.
        with suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(closed), CLOSE_WAIT_S)


def _detached(err: Exception) -> Exception:
    try:
        return type(err)(*err.args)
    except Exception:  # an exception class with an unusual constructor
        return RuntimeError(str(err))
