"""Streams read on the background network loop and handed to the caller's loop in batches."""

from __future__ import annotations

import asyncio
import threading
import time
import traceback
from collections.abc import AsyncGenerator

import pytest

from sandbox_app.backends.transport.network_loop import WAKE_EVERY_S, relay_stream
from sandbox_app.core.running.backend import BackendError, Delta, Usage


async def collect(stream: AsyncGenerator[Delta, None]) -> list[Delta]:
    return [delta async for delta in stream]


def test_a_fast_stream_arrives_whole_in_order_and_in_fewer_pieces() -> None:
    threads: set[str] = set()

    async def source() -> AsyncGenerator[Delta, None]:
        threads.add(threading.current_thread().name)
        yield Delta(notice="Rate limited (429): retrying in 1 s (1 of 3)")
        for i in range(3000):
            yield Delta(f"{i} ")
            if i % 50 == 0:
                await asyncio.sleep(0)  # like a socket read: other tasks may run
        yield Delta("end", Usage(10, 3000))

    started = time.perf_counter()
    received = asyncio.run(collect(relay_stream(source)))
    elapsed = time.perf_counter() - started
    assert threads == {"network"}  # not the caller's thread
    assert received[0].notice.startswith("Rate limited")
    assert received[-1].usage == Usage(10, 3000)
    assert received[-1].text == "end"
    text = "".join(delta.text for delta in received[1:-1])
    assert text == "".join(f"{i} " for i in range(3000))
    assert sum(delta.chunks for delta in received[1:-1]) == 3000  # for the tokens-saved count
    # Merged: the caller is woken at most once per WAKE_EVERY_S (plus at once for the first
    # text and the end), not per chunk. Bounded by the time the stream took in this run, so a
    # slow machine loosens the bound exactly as much as it stretches the stream; half the
    # period allows for timer rounding. Woken per chunk, 3,000 pieces would break it.
    wakes = elapsed / (WAKE_EVERY_S / 2) + 2
    assert len(received) <= wakes + 3, f"{len(received)} pieces in {elapsed * 1000:.0f} ms"
    assert len(received) < 3000


def test_an_error_reaches_the_caller_as_the_same_one_line_error() -> None:
    async def source() -> AsyncGenerator[Delta, None]:
        yield Delta("Thought: partial")
        raise BackendError("The stream from host broke after 1 chunks (the connection was lost).")

    async def run() -> tuple[list[Delta], BackendError]:
        got: list[Delta] = []
        try:
            async for delta in relay_stream(source):
                got.append(delta)
        except BackendError as err:
            return got, err
        raise AssertionError("the error did not reach the caller")

    got, err = asyncio.run(run())
    assert [d.text for d in got] == ["Thought: partial"]
    assert str(err) == "The stream from host broke after 1 chunks (the connection was lost)."
    # A fresh error: its traceback holds none of the network thread's frames (nor, through
    # them, its generators).
    frames = [frame.name for frame in traceback.extract_tb(err.__traceback__)]
    assert "source" not in frames
    assert "pump" not in frames


def test_stopping_early_closes_the_source_before_returning() -> None:
    closed = threading.Event()

    outlived: list[bool] = []

    async def source() -> AsyncGenerator[Delta, None]:
        try:
            for _ in range(10_000):  # ~10 s: a deadline, should the reader never close it
                yield Delta("x")
                await asyncio.sleep(0.001)
            outlived.append(True)
        finally:
            await asyncio.sleep(0.05)  # like closing a connection
            closed.set()

    async def read_a_little() -> None:
        stream = relay_stream(source)
        async for _ in stream:
            break
        await stream.aclose()
        assert closed.is_set(), "aclose() returned before the source was closed"

    asyncio.run(read_a_little())
    assert outlived == [], "the source ran to its end: closing the reader never reached it"


def test_cancelling_the_reader_closes_the_source() -> None:
    closed = threading.Event()
    started = threading.Event()

    async def source() -> AsyncGenerator[Delta, None]:
        try:
            started.set()  # set on the network thread, seen from the caller's
            await asyncio.sleep(3600)  # a stalled server
            yield Delta("never")
        finally:
            closed.set()

    async def stop_while_stalled() -> None:
        task = asyncio.ensure_future(collect(relay_stream(source)))
        assert await asyncio.to_thread(started.wait, 5), "the source never started in 5 s"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert closed.is_set(), "the reader was cancelled but the source is still open"

    asyncio.run(stop_while_stalled())
