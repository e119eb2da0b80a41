"""OTLP trace files read into plain spans: the JSON an OTLP/HTTP collector takes (one
``ExportTraceServiceRequest`` per file, or one per line as the collector's file exporter
writes them) and the same request as protobuf.

A trace file comes from elsewhere and may be damaged or hostile, so it is read through the
one file reader (core/untrusted/file_reader.py: a regular file, a size limit counted while
reading, JSON nesting measured before parsing), protobuf is decoded by the official
generated messages (``opentelemetry-proto``; their decoder refuses a length that runs past
the end and nesting past its recursion limit), and every failure is one :class:`TraceError`
line. Attribute values become Python values (``intValue`` may be a JSON string, as protobuf's
JSON mapping writes 64-bit integers); span ids become lowercase hex whether written as hex
(OTLP/JSON) or base64 (protobuf's own JSON mapping).
"""

from __future__ import annotations

import base64
import binascii
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox_app.core.otel.otel_line_walk import RequestWalk
from sandbox_app.core.untrusted.file_reader import (
    ReadError,
    decode,
    display_name,
    iter_lines,
    parse_json,
    read_bytes,
)
from sandbox_app.core.untrusted.json_walk import JsonWalk

MAX_BYTES = 50 * 1024 * 1024  # one request read whole: as a recording
# The collector's file exporter's lines are read one at a time, never all at once: a long
# agent run's file may be larger (30,000 steps with their tools' spans: ~70 MB).
MAX_LINES_BYTES = 1024 * 1024 * 1024
MAX_SPANS = 250_000
_BLANK = b"\xef\xbb\xbf \t\r"
MAX_VALUE_ITEMS = 10_000  # an array or key-value list attribute


class TraceError(ReadError):
    """A trace file that cannot be opened, in one line."""


@dataclass(frozen=True)
class SpanEvent:
    name: str
    time_ns: int
    attributes: dict[str, Any]


@dataclass(frozen=True)
class Span:
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)
    events: tuple[SpanEvent, ...] = ()
    resource: dict[str, Any] = field(default_factory=dict)


def read_spans(path: str | Path) -> list[Span]:
    """Every span in the file, in the order written; TraceError names what is wrong."""
    return list(iter_spans(path))


def iter_spans(path: str | Path) -> Iterator[Span]:
    """The file's spans as they are read: a file of the collector's file exporter (one
    request a line) a line at a time, so a long trace's first steps come before its last line
    is read; one request (JSON or protobuf) is read whole. TraceError names what is wrong,
    when it is met."""
    name = display_name(path)
    try:
        lines = iter_lines(path, MAX_LINES_BYTES, "a trace")
        first = next((line for line in lines if line.strip(_BLANK)), b"")
        if first.strip(_BLANK)[:1] != b"{":  # protobuf (its first byte: 0x0A, a line's end)
            raw = read_bytes(path, MAX_BYTES, "a trace")
            yield from _checked(_from_protobuf(raw, name), name)
            return
        yield from _checked(_from_json(path, first, lines, name), name)
    except TraceError:
        raise
    except ReadError as err:
        raise TraceError(str(err)) from None


def _checked(spans: Iterator[Span], name: str) -> Iterator[Span]:
    count = 0
    try:
        for span in spans:
            count += 1
            if count > MAX_SPANS:
                raise TraceError(
                    f"{name}: more than {MAX_SPANS:,} spans; open one trace at a time."
                )
            yield span
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as err:
        if isinstance(err, ReadError):
            raise TraceError(str(err)) from None
        raise TraceError(f"{name}: not an OTLP trace ({_one_line(err)}).") from None
    if not count:
        raise TraceError(f"{name}: holds no spans (an OTLP trace file: resourceSpans → spans).")


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())[:120]
    return text or type(err).__name__


# ---- OTLP/JSON ------------------------------------------------------------------------------


def _from_json(path: str | Path, first: bytes, lines: Iterator[bytes], name: str) -> Iterator[Span]:
    second = next(lines, None)
    if second is None or first.strip()[-1:] != b"}":  # one request, maybe over many lines
        text = decode(read_bytes(path, MAX_BYTES, "a trace"), name)
        yield from _json_document(parse_json(text, name, "a trace"), name)
        return
    # The collector's file exporter: one request a line, a span at a time (otel_line_walk).
    for i, line in enumerate(itertools.chain((first, second), lines), 1):
        if line.strip():
            where = f"{name} line {i}"
            request = RequestWalk(JsonWalk(decode(line.rstrip(b"\r"), where), where, "a trace"))
            raw, resource = None, {}
            for span, attributes in request.spans():
                if attributes is not raw:  # a resource's spans share its attributes
                    raw, resource = attributes, _attributes(attributes)
                yield _json_span(span, resource)
            if not request.lists:
                raise TraceError(f'{name}: not an OTLP trace (no "resourceSpans" list).')


def _json_document(document: Any, name: str) -> Iterator[Span]:
    if not isinstance(document, dict) or not isinstance(
        document.get("resourceSpans", document.get("resource_spans")), list
    ):
        raise TraceError(f'{name}: not an OTLP trace (no "resourceSpans" list).')
    yield from _json_request(document)


def _json_request(document: dict[str, Any]) -> Iterator[Span]:
    for resource_spans in _list(document, "resourceSpans", "resource_spans"):
        resource = _attributes(_dict(resource_spans, "resource").get("attributes"))
        for scope_spans in _list(resource_spans, "scopeSpans", "scope_spans"):
            for span in _list(scope_spans, "spans"):
                yield _json_span(span, resource)


def _json_span(span: Any, resource: dict[str, Any]) -> Span:
    if not isinstance(span, dict):
        raise TypeError("a span is not an object")
    events = tuple(
        SpanEvent(
            str(e.get("name", "")), _int(e.get("timeUnixNano")), _attributes(e.get("attributes"))
        )
        for e in _list(span, "events")
        if isinstance(e, dict)
    )
    return Span(
        _id(span.get("traceId", span.get("trace_id"))),
        _id(span.get("spanId", span.get("span_id"))),
        _id(span.get("parentSpanId", span.get("parent_span_id"))),
        str(span.get("name", "")),
        _int(span.get("startTimeUnixNano", span.get("start_time_unix_nano"))),
        _int(span.get("endTimeUnixNano", span.get("end_time_unix_nano"))),
        _attributes(span.get("attributes")),
        events,
        resource,
    )


def _list(data: Any, *keys: str) -> list[Any]:
    for key in keys:
        value = data.get(key) if isinstance(data, dict) else None
        if isinstance(value, list):
            return value
    return []


def _dict(data: Any, key: str) -> dict[str, Any]:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _attributes(items: Any) -> dict[str, Any]:
    if not isinstance(items, list):
        return {}
    return {
        item["key"]: _value(item.get("value"))
        for item in items[:MAX_VALUE_ITEMS]
        if isinstance(item, dict) and isinstance(item.get("key"), str)
    }


def _value(value: Any) -> Any:
    """An AnyValue as JSON writes it; nesting is bounded by the reader's depth check."""
    if not isinstance(value, dict):
        return None
    for key in ("stringValue", "string_value"):
        if isinstance(value.get(key), str):
            return value[key]
    for key in ("intValue", "int_value"):
        if key in value:
            return _int(value[key])
    for key in ("doubleValue", "double_value"):
        if isinstance(value.get(key), int | float | str):
            return float(value[key])
    for key in ("boolValue", "bool_value"):
        if isinstance(value.get(key), bool):
            return value[key]
    array = _dict(value, "arrayValue") or _dict(value, "array_value")
    if array or "arrayValue" in value:
        return [_value(v) for v in _list(array, "values")[:MAX_VALUE_ITEMS]]
    kvlist = _dict(value, "kvlistValue") or _dict(value, "kvlist_value")
    if kvlist or "kvlistValue" in value:
        return _attributes(_list(kvlist, "values"))
    return None


def _int(value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit() and len(value) < 30:
        return int(value)
    if isinstance(value, float) and value == value and abs(value) < 1e30:
        return int(value)
    return 0


def _id(value: Any) -> str:
    """Hex (OTLP/JSON) or base64 (protobuf's JSON mapping) → lowercase hex."""
    if not isinstance(value, str) or not value:
        return ""
    if len(value) in (16, 32) and all(c in "0123456789abcdefABCDEF" for c in value):
        return value.lower()
    try:
        return base64.b64decode(value, validate=True).hex()
    except (binascii.Error, ValueError):
        return value[:64]


# ---- OTLP protobuf ----------------------------------------------------------------------------


def _from_protobuf(raw: bytes, name: str) -> Iterator[Span]:
    # Imported here: only a protobuf file pays for the generated messages.
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(raw)
    except (DecodeError, RuntimeError, ValueError) as err:
        raise TraceError(
            f"{name}: neither OTLP JSON nor OTLP protobuf ({_one_line(err)})."
        ) from None
    for resource_spans in request.resource_spans:
        resource = _pb_attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                yield _pb_span(span, resource)


def _pb_span(span: Any, resource: dict[str, Any]) -> Span:
    events = tuple(
        SpanEvent(e.name, e.time_unix_nano, _pb_attributes(e.attributes)) for e in span.events
    )
    return Span(
        bytes(span.trace_id).hex(),
        bytes(span.span_id).hex(),
        bytes(span.parent_span_id).hex(),
        span.name,
        span.start_time_unix_nano,
        span.end_time_unix_nano,
        _pb_attributes(span.attributes),
        events,
        resource,
    )


def _pb_attributes(items: Any) -> dict[str, Any]:
    return {item.key: _pb_value(item.value) for item in list(items)[:MAX_VALUE_ITEMS]}


def _pb_value(value: Any) -> Any:
    which = value.WhichOneof("value")
    if which == "array_value":
        return [_pb_value(v) for v in list(value.array_value.values)[:MAX_VALUE_ITEMS]]
    if which == "kvlist_value":
        return _pb_attributes(value.kvlist_value.values)
    if which == "bytes_value":
        return bytes(value.bytes_value).hex()
    return getattr(value, which) if which else None


# ---- which spans are what ---------------------------------------------------------------

LLM_OPERATIONS = ("chat", "text_completion", "generate_content")


def kind(span: Span) -> str:
    """``llm``, ``tool``, ``agent`` or "" (any other span)."""
    oi = str(span.attributes.get("openinference.span.kind", "")).upper()
    op = str(span.attributes.get("gen_ai.operation.name", ""))
    if oi == "LLM" or op in LLM_OPERATIONS:
        return "llm"
    if oi == "TOOL" or op == "execute_tool":
        return "tool"
    if oi == "AGENT" or op in ("invoke_agent", "create_agent"):
        return "agent"
    return ""


def unique(spans: list[Span]) -> list[Span]:
    """Each span once (a file written twice over, or exported by two processors)."""
    seen: dict[str, Span] = {}
    for span in spans:
        seen.setdefault(span.span_id or str(len(seen)), span)
    return list(seen.values())


def innermost(trace: list[Span], llms: list[Span]) -> list[Span]:
    """The model spans that wrap no other model span, by start; each once. Parents that form
    a cycle (a hostile or broken file) are no parents: a span whose ancestry comes back to
    itself wraps nothing, so every call in a cycle is a step of its own."""
    parents = {s.span_id: s.parent_id for s in trace}
    llm_ids = {s.span_id for s in llms}
    outer: set[str] = set()
    for span in llms:
        for parent in _ancestors(span.span_id, parents):
            if parent in llm_ids:
                outer.add(parent)
    inner = {s.span_id: s for s in llms if s.span_id not in outer}
    return sorted(inner.values(), key=lambda s: s.start_ns)


def _ancestors(span_id: str, parents: dict[str, str]) -> list[str]:
    """``span_id``'s parent, its parent's…; none when the chain comes back to it (a cycle),
    up to where it would repeat when it runs into a cycle further up."""
    chain: list[str] = []
    seen = {span_id}
    parent = parents.get(span_id, "")
    while parent and parent not in seen and len(chain) < 1000:
        chain.append(parent)
        seen.add(parent)
        parent = parents.get(parent, "")
    return [] if parent == span_id else chain
