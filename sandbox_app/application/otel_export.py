"""Runs sent out as OpenTelemetry traces: an OTLP JSON file, or an OTLP/HTTP endpoint
(Phoenix, Langfuse, a collector), through the official SDK.

The spans are planned by ``core/otel/otel_attributes.py``; here they become SDK spans with
the plan's times, in a tracer provider of the export's own (never the global one: an app that
instruments itself is not mixed in). A file is encoded with the OTLP exporter's own encoder
and written in the OTLP/HTTP JSON protocol's shape (hex trace and span ids, enums as numbers).
An endpoint gets them behind a BatchSpanProcessor, whose thread does the network; an
unreachable one is one line (:attr:`Sent.line`), and the SDK's own log lines are kept quiet.

OpenTelemetry is imported inside the functions only: the window's start never loads it.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from sandbox_app.application.otlp_answer import Answer, answer_of
from sandbox_app.core.otel.otel_attributes import SpanPlan

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

TRACES_PATH = "/v1/traces"
SEND_TIMEOUT_S = 5.0  # per request; the SDK retries inside it, then gives up


@dataclass(frozen=True)
class OtlpTarget:
    """Where spans go: an endpoint (``http://localhost:6006/v1/traces``) or a file, with
    headers for the endpoint (an API key, a project). ``content``: None is the default —
    message content in a file (it stays on this machine), none sent to an endpoint."""

    endpoint: str = ""
    file: Path | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    content: bool | None = None
    timeout_s: float = SEND_TIMEOUT_S

    @property
    def with_content(self) -> bool:
        return self.content if self.content is not None else self.file is not None

    @property
    def where(self) -> str:
        return str(self.file) if self.file is not None else urlsplit(self.endpoint).netloc


def endpoint_url(text: str) -> str:
    """An OTLP/HTTP traces URL from what a person types: ``localhost:4318``,
    ``http://host:6006`` and Langfuse's ``…/api/public/otel`` get ``/v1/traces`` (a path that
    ends in ``/traces`` is kept); a ValueError (one line) for anything else."""
    text = text.strip()
    if text and "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{text or 'an empty endpoint'}: not an http(s) URL of an OTLP endpoint")
    try:
        parts.port  # noqa: B018 - raises on "host:notaport"
    except ValueError:
        raise ValueError(f"{text}: the port is not a number") from None
    return text if parts.path.rstrip("/").endswith("/traces") else text.rstrip("/") + TRACES_PATH


def parse_header(text: str) -> tuple[str, str]:
    """``Authorization=Bearer x`` (or ``Name: value``) → the pair; a ValueError otherwise."""
    name, sep, value = text.partition("=")
    if not sep or ":" in name:
        name, sep, value = text.partition(":")
    name = name.strip()
    if not sep or not re.fullmatch(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+", name):
        raise ValueError(f"{text!r}: a header is NAME=VALUE")
    if any(c in value for c in "\r\n\0"):
        raise ValueError(f"{name}: a header value is one line")
    return name, value.strip()


@dataclass(frozen=True)
class Sent:
    """What became of an export: its spans and one line for the status bar or terminal."""

    spans: int
    ok: bool
    line: str


# ---- the SDK ------------------------------------------------------------------------------


def tracer_provider(processor: SpanProcessor) -> TracerProvider:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import SpanLimits, TracerProvider

    # A long run's messages are many attributes; the SDK's default keeps 128.
    limits = SpanLimits(max_span_attributes=4096, max_span_attribute_length=None)
    resource = Resource.create({"service.name": "react-sandbox"})
    provider = TracerProvider(resource=resource, span_limits=limits, shutdown_on_exit=False)
    provider.add_span_processor(processor)
    return provider


def make_spans(
    provider: TracerProvider, plans: Iterable[SpanPlan], start_ns: int, parent: Context | None
) -> int:
    """Each plan and its children as spans at ``start_ns`` + their offsets; returns how many.
    ``parent``: the context a root plan hangs from (None: a trace of its own)."""
    from opentelemetry.context import Context
    from opentelemetry.trace import SpanKind, Status, StatusCode, set_span_in_context

    tracer = provider.get_tracer("react_sandbox")
    count = 0

    def make(plan: SpanPlan, context: Context) -> None:
        nonlocal count
        kind = (
            SpanKind.CLIENT
            if plan.attributes.get("gen_ai.operation.name") == "chat"
            else (SpanKind.INTERNAL)
        )
        span = tracer.start_span(
            plan.name,
            context=context,
            kind=kind,
            attributes=plan.attributes,
            start_time=start_ns + round(plan.start_s * 1e9),
        )
        if plan.error:
            span.set_status(Status(StatusCode.ERROR, plan.error))
        inside = set_span_in_context(span, context)
        for child in plan.children:
            make(child, inside)
        span.end(end_time=start_ns + round(max(plan.end_s, plan.start_s) * 1e9))
        count += 1

    for plan in plans:
        make(plan, parent if parent is not None else Context())
    return count


def start_of(plans: Sequence[SpanPlan]) -> int:
    """When a finished subject began, as if it ended now (records keep durations, not dates)."""
    longest = max((plan.end_s for plan in plans), default=0.0)
    return time.time_ns() - round(longest * 1e9)


# ---- a file ---------------------------------------------------------------------------------


def otlp_json(spans: Sequence[ReadableSpan]) -> str:
    """Spans as an OTLP/HTTP JSON request body (ExportTraceServiceRequest): protobuf's JSON
    mapping with the protocol's two differences — ids in hex, enums as numbers."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    document = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource in document.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = _hex(span[key])
                for link in span.get("links", []):
                    for key in ("traceId", "spanId"):
                        link[key] = _hex(link[key])
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"


def _hex(base64_id: str) -> str:
    import base64

    return base64.b64decode(base64_id).hex()


def file_contents(plans: Sequence[SpanPlan], start_ns: int | None = None) -> str:
    """The OTLP JSON of these plans, made through the SDK and kept in memory."""
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    provider = tracer_provider(SimpleSpanProcessor(memory))
    make_spans(provider, plans, start_of(plans) if start_ns is None else start_ns, None)
    provider.shutdown()
    return otlp_json(memory.get_finished_spans())


# ---- an endpoint ----------------------------------------------------------------------------


class _Quiet(logging.Handler):
    """The OTLP exporter logs each failed attempt: kept here as the reason, not printed."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.last = ""

    def emit(self, record: logging.LogRecord) -> None:
        self.last += record.getMessage() + "\n"  # the first attempt's says why


_QUIET = _Quiet()


def _silence() -> None:
    """Once: the SDK's loggers report to :data:`_QUIET` (Python's last-resort handler would
    print each retry on stderr, and the window's run would look broken)."""
    logger = logging.getLogger("opentelemetry")
    if _QUIET not in logger.handlers:
        logger.addHandler(_QUIET)
        logger.propagate = False


def reason(message: str) -> str:
    """The SDK's long log line as a short reason: "Connection refused", "code 401…"."""
    if found := re.search(r"\[Errno -?\d+\] ([^'\")]+)", message):
        return found.group(1).strip()
    if found := re.search(r"code:? (\d{3})", message):
        return f"the server answered HTTP {found.group(1)}"
    if "timeout" in message.lower() or "timed out" in message.lower():
        return "no answer in time"
    return message.splitlines()[0][:120] if message else "no answer"


class WatchedExporter:
    """The OTLP/HTTP exporter, counting what the endpoint took (application/otlp_answer.py:
    its answer read, not only its status) and keeping its first failure."""

    def __init__(self, target: OtlpTarget, on_failure: Callable[[str], None] | None = None) -> None:
        import requests
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        _silence()
        self.target, self.on_failure = target, on_failure
        session = requests.Session()
        self._answers: list[Answer] = []
        session.hooks["response"].append(self._answered)
        self.inner: SpanExporter = OTLPSpanExporter(
            endpoint=target.endpoint,
            headers=dict(target.headers),
            timeout=target.timeout_s,
            session=session,
        )
        self.sent = self.rejected = 0
        self.failure = self.why = ""

    def _answered(self, response: Any, *_: Any, **__: Any) -> None:
        if 200 <= response.status_code < 400:  # what the SDK takes as sent
            self._answers.append(
                answer_of(response.status_code, response.headers, response.content)
            )

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        from opentelemetry.sdk.trace.export import SpanExportResult

        _QUIET.last, self._answers = "", []
        result = self.inner.export(spans)
        answer = self._answers[-1] if self._answers else Answer()
        if result is SpanExportResult.SUCCESS and answer.problem:
            result = SpanExportResult.FAILURE
        if result is SpanExportResult.SUCCESS:
            self.sent += len(spans) - min(answer.rejected, len(spans))
            self.rejected += min(answer.rejected, len(spans))
            self.why = self.why or answer.why
            if answer.rejected:
                self._failed(rejected_line(answer.rejected, len(spans), answer.why))
        else:
            self._failed(answer.problem or reason(_QUIET.last))
        return result

    def _failed(self, why: str) -> None:
        """Said once: the first failure's reason."""
        if not self.failure:
            self.failure = why
            if self.on_failure is not None:
                self.on_failure(failure_line(self.target, why))

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def rejected_line(rejected: int, of: int, why: str) -> str:
    return f"the endpoint rejected {rejected} of {of} spans" + (f": {why}" if why else "")


def batch_processor(exporter: WatchedExporter) -> SpanProcessor:
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

    class _Adapter(SpanExporter):  # the SDK's base class, around the watcher
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            return exporter.export(spans)

        def shutdown(self) -> None:
            exporter.shutdown()

    return BatchSpanProcessor(_Adapter(), schedule_delay_millis=200)


def failure_line(target: OtlpTarget, why: str) -> str:
    return f"OpenTelemetry: could not send spans to {target.where} ({why}); nothing else changed"


def send(plans: Sequence[SpanPlan], target: OtlpTarget, start_ns: int | None = None) -> Sent:
    """The plans to the target's endpoint, waiting for them to go (or fail): one line."""
    watched = WatchedExporter(target)
    provider = tracer_provider(batch_processor(watched))
    count = make_spans(provider, plans, start_of(plans) if start_ns is None else start_ns, None)
    provider.force_flush(round((target.timeout_s + 2) * 1000))
    provider.shutdown()
    if watched.rejected and watched.sent + watched.rejected == count:  # all of it answered
        why = rejected_line(watched.rejected, count, watched.why)
        return Sent(count, False, failure_line(target, why))
    if watched.failure or watched.sent < count:
        return Sent(count, False, failure_line(target, watched.failure or "no answer in time"))
    return Sent(count, True, f"OpenTelemetry: {count} spans sent to {target.where}")


def export(plans: Sequence[SpanPlan], target: OtlpTarget, start_ns: int | None = None) -> Sent:
    """To the file (OSError when the disk says no) or the endpoint; ``start_ns``: when the
    plans' offsets begin (None: as if the longest ended now)."""
    if target.file is None:
        return send(plans, target, start_ns)
    text = file_contents(plans, start_ns)
    target.file.write_text(text, encoding="utf-8")
    count = sum(len(plan.walk()) for plan in plans)
    return Sent(count, True, f"OpenTelemetry: {count} spans written to {target.file}")
