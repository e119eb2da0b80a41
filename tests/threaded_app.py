"""An aiohttp application on 127.0.0.1, served by its own event loop in a daemon thread.

Each test server (the one that answers every backend kind, tests/model_server/, and the OTLP
receiver) is one of these plus its routes: the app under test talks to it over
real sockets while the test's thread (or Qt's) goes on. Starting waits until the socket
listens and says why it did not; stopping runs the server's own hang-up first, then cleans up
the runner, cancels what is left on the loop and joins the thread, each with a deadline.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Awaitable, Callable
from typing import Any


class ThreadedApp:
    """``build()`` makes the application (on the server's loop); ``runner`` options are
    aiohttp's ``AppRunner`` keywords (``handler_cancellation=True``: a client that hangs up
    cancels its handler, as a real server's does)."""

    def __init__(
        self,
        name: str,
        build: Callable[[], Any],
        before_stop: Callable[[], Awaitable[None]] | None = None,
        **runner: Any,
    ) -> None:
        self.name = name
        self._build = build
        self._before_stop = before_stop
        self._runner_options = {"access_log": None, "shutdown_timeout": 1.0, **runner}
        self.port: int | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: Any = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self, timeout: float = 10.0) -> int:
        """Serve; the port, once it listens."""
        if self._thread is not None:
            raise RuntimeError(f"{self.name} already started")
        ready = threading.Event()
        failure: list[BaseException] = []
        self._thread = threading.Thread(
            target=self._main, args=(ready, failure), name=self.name, daemon=True
        )
        self._thread.start()
        if not ready.wait(timeout):
            raise RuntimeError(f"{self.name} did not start within {timeout:g} s")
        if failure:
            self._thread.join(timeout)
            self._thread = None
            raise RuntimeError(f"{self.name} failed to start") from failure[0]
        assert self.port is not None
        return self.port

    def stop(self, timeout: float = 10.0) -> None:
        thread, loop = self._thread, self.loop
        if thread is None or loop is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
            self._thread = None
            self.port = None
        if thread.is_alive():
            raise RuntimeError(f"{self.name}'s thread still runs {timeout:g} s after stop")

    def _main(self, ready: threading.Event, failure: list[BaseException]) -> None:
        # A selector loop, not new_event_loop(): under qasync (the benchmark's window) the
        # policy's new loop would be Qt's, on a thread without a Qt event loop.
        loop = self.loop = asyncio.SelectorEventLoop()
        asyncio.set_event_loop(loop)
        try:
            try:
                loop.run_until_complete(self._startup())
            except BaseException as exc:
                failure.append(exc)
                return
            finally:
                ready.set()
            loop.run_forever()
        finally:
            try:
                pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
                for task in pending:
                    task.cancel()
                if pending:
                    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.run_until_complete(loop.shutdown_default_executor())
            finally:
                asyncio.set_event_loop(None)
                loop.close()
                self.loop = None

    async def _startup(self) -> None:
        from aiohttp import web

        runner = web.AppRunner(self._build(), **self._runner_options)
        await runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", 0))
            await web.SockSite(runner, sock).start()  # listening once this returns
        except BaseException:
            sock.close()
            await runner.cleanup()
            raise
        self._runner, self.port = runner, sock.getsockname()[1]

    async def _shutdown(self) -> None:
        if self._before_stop is not None:
            await self._before_stop()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
