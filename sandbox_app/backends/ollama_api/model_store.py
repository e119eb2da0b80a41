"""What a server that stores models can do besides chat: say each model's size and whether it
is loaded, and pull (download) one, with progress.

A backend that can is a :class:`ModelStore` (Ollama's, ollama_kind.py); the model panel asks
``isinstance``, never which kind it is. Its kind declares the "pull" field, so the panel's
Pull button is enabled before any backend is made.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import aclosing, suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar, runtime_checkable

from sandbox_app.core.running.backend import BackendError
from sandbox_app.lazy_import import lazy_import

if TYPE_CHECKING:
    import asyncio
else:
    asyncio = lazy_import("asyncio")

T = TypeVar("T")


@dataclass(frozen=True)
class PullProgress:
    """One line of a pull's progress: "pulling manifest", a layer's bytes, "success"."""

    status: str
    completed: int | None = None
    total: int | None = None

    @property
    def fraction(self) -> float | None:
        """How much of the layer being fetched has arrived (0–1), None when unknown."""
        if not self.total or self.completed is None:
            return None
        return min(max(self.completed / self.total, 0.0), 1.0)


def size_text(size: int | None) -> str:
    """Bytes as people read a download: "5.2 GB", "387 MB"."""
    if not size:
        return ""
    if size >= 1e9:
        return f"{size / 1e9:.1f} GB"
    if size >= 1e6:
        return f"{size / 1e6:.0f} MB"
    return f"{size / 1e3:.0f} KB"


@runtime_checkable
class ModelStore(Protocol):
    @property
    def model_notes(self) -> Mapping[str, str]:
        """Filled by list_models: each model's size and whether it is loaded ("5.2 GB,
        loaded"), by name."""
        ...

    def pull(self, model: str) -> AsyncIterator[PullProgress]:
        """Fetch ``model``, yielding its progress; raises BackendError (one line). Closing
        the iterator stops the download (the connection is closed)."""
        ...


_END = object()


async def relayed(open_stream: Callable[[], AsyncGenerator[T, None]]) -> AsyncGenerator[T, None]:
    """Iterate ``open_stream()`` on the network loop (network_loop.py) from the caller's
    loop, item by item (a pull sends a few lines a second, nothing to batch). Closing this
    generator cancels the network side and waits until its connection is closed."""
    from sandbox_app.backends.transport import network_loop

    caller = asyncio.get_running_loop()
    queue: asyncio.Queue[object] = asyncio.Queue()
    closed = caller.create_future()

    def mark_closed() -> None:
        if not closed.done():
            closed.set_result(None)

    def put(item: object) -> None:
        with suppress(RuntimeError):  # the caller's loop is closed: nobody reads any more
            caller.call_soon_threadsafe(queue.put_nowait, item)

    async def pump() -> None:
        try:
            async with aclosing(open_stream()) as stream:
                async for item in stream:
                    put(item)
        except asyncio.CancelledError:
            pass  # the caller stopped reading
        except BackendError as err:  # a fresh one: this thread's frames stay here
            put(BackendError(str(err)))
        except Exception as err:
            put(err)
        finally:
            put(_END)
            with suppress(RuntimeError):
                caller.call_soon_threadsafe(mark_closed)

    running = asyncio.run_coroutine_threadsafe(pump(), network_loop.network_loop())
    try:
        while True:
            item = await queue.get()
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            yield item  # type: ignore[misc]  # what open_stream yields: a T
    finally:
        running.cancel()
        with suppress(TimeoutError):  # a connection that will not close must not hold us
            await asyncio.wait_for(asyncio.shield(closed), network_loop.CLOSE_WAIT_S)
