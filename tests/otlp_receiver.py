"""A local OTLP/HTTP traces receiver for tests: an aiohttp server on 127.0.0.1 that accepts
``POST /v1/traces`` (protobuf, as the official exporter sends) and keeps each request parsed
with ``opentelemetry-proto``, with its headers. Fixture: ``otlp_receiver``."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


class OtlpReceiver:
    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/traces"

    def spans(self) -> list[Any]:
        """Every span received so far, in arrival order."""
        with self._lock:
            return [
                span
                for request in self.requests
                for resource in request.resource_spans
                for scope in resource.scope_spans
                for span in scope.spans
            ]

    async def _traces(self, request: web.Request) -> web.Response:
        message = ExportTraceServiceRequest()
        message.ParseFromString(await request.read())
        with self._lock:
            self.requests.append(message)
            self.headers.append(dict(request.headers))
        body = ExportTraceServiceResponse().SerializeToString()
        return web.Response(body=body, content_type="application/x-protobuf")

    def start(self) -> OtlpReceiver:
        ready = threading.Event()

        def main() -> None:
            # Not new_event_loop(): under qasync (the benchmark) the policy's loop is Qt's.
            loop = asyncio.SelectorEventLoop()
            asyncio.set_event_loop(loop)
            self._loop = loop

            async def setup() -> None:
                app = web.Application()
                app.router.add_post("/v1/traces", self._traces)
                self._runner = web.AppRunner(app, access_log=None)
                await self._runner.setup()
                site = web.TCPSite(self._runner, "127.0.0.1", 0)
                await site.start()
                self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

            loop.run_until_complete(setup())
            ready.set()
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=main, name="OtlpReceiver", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the OTLP receiver did not start in 10 s")
        return self

    def stop(self) -> None:
        loop, runner = self._loop, self._runner
        if loop is None or runner is None or self._thread is None:
            return
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(10)


@pytest.fixture
def otlp_receiver() -> Iterator[OtlpReceiver]:
    receiver = OtlpReceiver().start()
    try:
        yield receiver
    finally:
        receiver.stop()
