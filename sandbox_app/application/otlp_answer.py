"""What an OTLP/HTTP endpoint really answered an export.

The SDK's exporter takes any status from 200 to 399 as "sent" and never reads the body: a
redirect (a proxy sending the request to its login page), a 200 with an HTML login page and a
200 whose OTLP answer rejects every span (``partial_success``) all counted as spans sent.
Here a response is read as the OTLP/HTTP specification says a collector answers: an
``ExportTraceServiceResponse`` in protobuf (or JSON), or nothing; a web page is no answer.
Another body (a server's "OK") is taken. What is wrong is one short reason; the server's own
words in it are one line, cut short.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sandbox_app.core.untrusted.file_reader import ReadError, one_line, parse_json_text
from sandbox_app.core.untrusted.outside_text import clean as from_outside

MAX_ANSWER = 1_000_000  # bytes of an answer read (an OTLP answer is a few bytes)


@dataclass(frozen=True)
class Answer:
    problem: str = ""  # not an OTLP answer: nothing it was sent counts as sent
    rejected: int = 0  # spans the endpoint said it rejected
    why: str = ""  # its words for them


def answer_of(status: int, headers: Any, body: bytes) -> Answer:
    """A response to an export that the SDK took as a success (a status from 200 to 399)."""
    if 300 <= status < 400:
        where = one_line(from_outside(str(headers.get("location") or "")), 80)
        return Answer(
            f"the endpoint answered a redirect (HTTP {status}{' to ' * bool(where)}{where})"
        )
    kind = str(headers.get("content-type") or "").split(";")[0].strip().lower()
    if not body.strip():
        return Answer()  # nothing to say: every span taken
    if len(body) > MAX_ANSWER:
        return Answer(f"the endpoint answered {len(body):,} bytes, not OTLP")
    if kind == "application/x-protobuf":
        return _protobuf(body)
    if kind == "application/json":
        return _json(body)
    if kind in ("text/html", "application/xhtml+xml"):  # a login page, a proxy's error page
        return Answer(f"the endpoint answered {kind}, not OTLP")
    return Answer()  # another server's own words for "taken" ("OK" as text/plain)


def _protobuf(body: bytes) -> Answer:
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceResponse,
    )

    answer = ExportTraceServiceResponse()
    try:
        answer.ParseFromString(body)
    except DecodeError:
        return Answer("the endpoint answered protobuf that is not an OTLP answer")
    partial = answer.partial_success
    return _rejected(partial.rejected_spans, partial.error_message)


def _json(body: bytes) -> Answer:
    try:
        data = parse_json_text(body.decode("utf-8", "replace"), "the endpoint's answer")
    except ReadError:
        return Answer("the endpoint answered JSON that is not an OTLP answer")
    partial = data.get("partialSuccess") if isinstance(data, dict) else None
    if not isinstance(partial, dict):
        return (
            Answer()
            if isinstance(data, dict)
            else Answer("the endpoint answered JSON that is not an OTLP answer")
        )
    try:  # OTLP/JSON writes 64-bit integers as strings
        rejected = int(partial.get("rejectedSpans") or 0)
    except (TypeError, ValueError):
        return Answer("the endpoint answered JSON that is not an OTLP answer")
    return _rejected(rejected, str(partial.get("errorMessage") or ""))


def _rejected(count: int, message: str) -> Answer:
    if count <= 0:
        return Answer()
    return Answer(rejected=count, why=one_line(from_outside(message), 120))
