"""A long trace's file read on a thread of its own, ahead of where it is shown: each span
and, for a model call, what it sent and got back (otel_messages.model_call, a quarter of a
millisecond a call: its attributes' JSON parsed and measured), so the window's thread only
builds steps from calls already read. Reading still takes the GIL, but in pieces the
interpreter hands back within its switch interval (the window sets 1 ms), never a whole line
of the file (~12 ms for a line of 100 steps) inside one of the window's turns.

An error met on the thread (a damaged line, an attribute nested too deeply) is raised where
the spans are taken, as if they were read there.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator

from sandbox_app.core.otel.otel_messages import ModelCall, model_call
from sandbox_app.core.otel.otel_spans import Span, kind

Read = tuple[Span, ModelCall | None]
AHEAD = 400  # spans read ahead of those taken: a few frames' worth, memory bounded
_END = object()


def read_ahead(spans: Iterator[Span]) -> Iterator[Read]:
    """``spans`` read on a thread, each with its model call (None for other spans)."""
    handed: queue.Queue[object] = queue.Queue(maxsize=AHEAD)
    stop = threading.Event()

    def put(item: object) -> bool:
        """Hand ``item`` over when there is room; False once the reader has left."""
        while not stop.is_set():
            try:
                handed.put(item, timeout=0.5)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for span in spans:
                if not put((span, model_call(span) if kind(span) == "llm" else None)):
                    return
            put(_END)
        except Exception as err:  # handed over, raised where the spans are taken
            put(err)

    threading.Thread(target=work, name="trace-reader", daemon=True).start()
    try:
        while (item := handed.get()) is not _END:
            if isinstance(item, Exception):
                raise item
            yield item  # type: ignore[misc]
    finally:
        stop.set()  # a trace left before its end: the thread stops at its next span
