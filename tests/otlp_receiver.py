"""A local OTLP/HTTP traces receiver for tests: an aiohttp server on 127.0.0.1 that accepts
``POST /v1/traces`` (protobuf, as the official exporter sends) and keeps each request parsed
with ``opentelemetry-proto``, with its headers. Fixture: ``otlp_receiver``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.threaded_app import ThreadedApp


class OtlpReceiver:
    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._server = ThreadedApp("OtlpReceiver", self._app)
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
        self.port = self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/traces", self._traces)
        return app


@pytest.fixture
def otlp_receiver() -> Iterator[OtlpReceiver]:
    receiver = OtlpReceiver().start()
    try:
        yield receiver
    finally:
        receiver.stop()
