"""A local OTLP/HTTP traces receiver for tests: an aiohttp server on 127.0.0.1 that accepts
``POST /v1/traces`` (protobuf, as the official exporter sends) and keeps each request parsed
with ``opentelemetry-proto``, with its headers. Fixture: ``otlp_receiver``.

``answer`` makes it answer as endpoints that are not a collector (or not a willing one) do:
``"redirect"`` (302 to a login page), ``"html"`` (200 with a login page),
``"reject"`` (200, every span rejected in the OTLP response's ``partial_success``),
``"reject json"`` (the same in OTLP/JSON)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.threaded_app import ThreadedApp

LOGIN_PAGE = "<!doctype html><html><body><form>Sign in</form></body></html>"
REJECTED = "spans rejected: the tenant's quota is spent"


class OtlpReceiver:
    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._server = ThreadedApp("OtlpReceiver", self._app)
        self.port = 0
        self.answer = "ok"

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
        count = len(message.resource_spans[0].scope_spans[0].spans) if message.resource_spans else 0
        if self.answer == "redirect":
            raise web.HTTPFound("/login?next=/v1/traces")
        if self.answer == "html":
            return web.Response(text=LOGIN_PAGE, content_type="text/html")
        if self.answer == "reject json":
            body = {"partialSuccess": {"rejectedSpans": str(count), "errorMessage": REJECTED}}
            return web.json_response(body)
        response = ExportTraceServiceResponse()
        if self.answer == "reject":
            response.partial_success.CopyFrom(
                ExportTracePartialSuccess(rejected_spans=count, error_message=REJECTED)
            )
        return web.Response(
            body=response.SerializeToString(), content_type="application/x-protobuf"
        )

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
