"""Every backend kind's stream as a run meets it: a real local HTTP server answers each request
with a recorded stream of that kind (tests/data/streams), damaged (tests/hostile_input.py:
events cut, dropped or repeated, wrong types at every field, 10,000-deep, 10 MB strings,
lone surrogates, escapes, bytes that are not UTF-8), read through the kind's SDK or HTTP
client and its decoder, as ``Backend.stream`` gives it to the engine.

A stream gives deltas anything can write, or ends in one ``BackendError`` line that says
what the server did, in words: never a traceback, and never Python's own words for a bug
(``KeyError``, ``'list' object has no attribute``, ``RecursionError``). Ollama's stream is
parsed by the ``ollama`` library itself, so only this test reaches its decoder.
"""

from __future__ import annotations

import asyncio
import builtins
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.backends.registry import config_for, make_backend
from sandbox_app.core.running.backend import Backend, BackendError, Delta, StreamParams
from tests.helpers import builtin
from tests.hostile_input import (
    check_deltas,
    hostile_bytes,
    hostile_json,
    hostile_payloads,
    sse_payloads,
    stream_sample,
)
from tests.webpage_server import serving


@dataclass(frozen=True)
class Kind:
    backend: str  # the registry's id
    sample: str
    content_type: str
    sse: bool  # SSE data lines; else one JSON object a line (Ollama)
    error: dict[str, Any]  # the body of a refused request, as the API's reference shows it
    done: bool = False  # ends with data: [DONE]


# Error bodies from each API's reference: OpenAI's "Error codes", Anthropic's "Errors",
# Google's "Troubleshooting" (google.rpc.Status as JSON), Ollama's docs/api.md ("Errors").
OPENAI_ERROR = {"error": {"message": "Bad input.", "type": "invalid_request_error", "code": None}}
KINDS = [
    Kind("custom", "chat_completions.sse", "text/event-stream", True, OPENAI_ERROR, done=True),
    Kind(
        "anthropic",
        "anthropic.sse",
        "text/event-stream",
        True,
        {"type": "error", "error": {"type": "invalid_request_error", "message": "Bad input."}},
    ),
    Kind(
        "gemini",
        "gemini.sse",
        "text/event-stream",
        True,
        {"error": {"code": 400, "message": "Bad input.", "status": "INVALID_ARGUMENT"}},
    ),
    Kind("responses", "responses.sse", "text/event-stream", True, OPENAI_ERROR),
    Kind("ollama-native", "ollama.jsonl", "application/x-ndjson", False, {"error": "Bad input."}),
]


def _payloads(kind: Kind) -> list[str]:
    text = stream_sample(kind.sample)
    return sse_payloads(text) if kind.sse else [line for line in text.splitlines() if line]


def _framed(kind: Kind, payloads: list[str]) -> bytes:
    if kind.sse:
        text = "".join(f"data: {p}\n\n" for p in payloads) + ("data: [DONE]\n\n" * kind.done)
    else:
        text = "".join(p + "\n" for p in payloads)
    return text.encode("utf-8", "surrogatepass")  # a raw lone surrogate stays raw: not UTF-8


class Answer:
    """What the server sends next: its status, one body, its content type (set per example)."""

    status = 200
    body = b""
    content_type = "text/event-stream"
    lock = threading.Lock()


class StreamHandler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(Answer.status)
        self.send_header("Content-Type", Answer.content_type)
        self.send_header("Content-Length", str(len(Answer.body)))
        self.end_headers()
        self.wfile.write(Answer.body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with serving(StreamHandler) as url:  # "http://127.0.0.1:PORT/v1"
        yield url.removesuffix("/v1")


# Python's own words for a bug: an exception's name, an attribute it looked for.
_PYTHON = re.compile(
    r"\b(?:"
    + "|".join(n for n in dir(builtins) if n.endswith(("Error", "Exception")))
    + r")\b|object has no attribute|object is not|Traceback|maximum recursion"
)


def _backend(kind: Kind, base_url: str) -> Backend:
    url = base_url + ("/v1" if kind.backend in ("custom", "responses") else "")
    config = config_for(kind.backend, url, "m", timeout_s=10.0)
    return make_backend(config, builtin("brightgrid"), KeyStore(False))


async def _read(backend: Backend) -> tuple[list[Delta], str | None]:
    deltas: list[Delta] = []
    try:
        async for delta in backend.stream([{"role": "user", "content": "Hi"}], StreamParams("m")):
            deltas.append(delta)
    except BackendError as err:
        return deltas, str(err)
    finally:
        await backend.aclose()
    return deltas, None


def _streams_or_says_why(kind: Kind, base_url: str, answer: tuple[int, bytes]) -> None:
    status, body = answer
    with Answer.lock:
        Answer.status, Answer.body = status, body
        Answer.content_type = kind.content_type if status == 200 else "application/json"
        deltas, error = asyncio.run(_read(_backend(kind, base_url)))
    check_deltas(deltas)
    if status != 200:
        assert error is not None, deltas
        # A status said is the reply's: "Server error 1234…" only if the server answered so.
        said = re.findall(r"Server error (\d+)|\((\d{3})\b", error)
        assert {a or b for a, b in said} <= {str(status)}, (status, error)
    if error is not None:
        error.encode("utf-8")
        assert "\n" not in error, error
        assert not _PYTHON.search(error), error


def test_every_sample_streams_as_recorded(base_url: str) -> None:
    for kind in KINDS:
        with Answer.lock:
            Answer.status, Answer.content_type = 200, kind.content_type
            Answer.body = _framed(kind, _payloads(kind))
            deltas, error = asyncio.run(_read(_backend(kind, base_url)))
        assert error is None, (kind.backend, error)
        assert any(d.text or d.tool_calls for d in deltas), kind.backend


@st.composite
def hostile_body(draw: st.DrawFn, kind: Kind) -> tuple[int, bytes]:
    """A 200 with the kind's stream damaged, or a refusal with its error body damaged."""
    status = draw(st.sampled_from([200, 200, 200, 400, 500]), label="status")
    if status == 200:
        framed = _framed(kind, draw(hostile_payloads(_payloads(kind)), label="payloads"))
    else:
        framed = draw(hostile_json(kind.error), label="error").encode("utf-8", "surrogatepass")
    return status, draw(st.just(framed) | hostile_bytes(framed), label="body")


# One HTTP request an example, some of 10 MB: a tenth of the profile's examples a kind (20 a
# run, 1,000 under ci-deep).
FEWER = settings(max_examples=max(10, settings.default.max_examples // 10))


@FEWER
@given(data=st.data())
@example(data=None).via("Ollama: a line that is a list: 'AttributeError: 'list' object…'")
def test_ollama_stream(base_url: str, data: st.DataObject | None) -> None:
    kind = KINDS[4]
    answer = (200, b"[1, 2]\n") if data is None else data.draw(hostile_body(kind))
    _streams_or_says_why(kind, base_url, answer)


@FEWER
@given(data=st.data())
def test_chat_completions_stream(base_url: str, data: st.DataObject) -> None:
    _streams_or_says_why(KINDS[0], base_url, data.draw(hostile_body(KINDS[0])))


@FEWER
@given(data=st.data())
def test_anthropic_stream(base_url: str, data: st.DataObject) -> None:
    _streams_or_says_why(KINDS[1], base_url, data.draw(hostile_body(KINDS[1])))


@FEWER
@given(data=st.data())
@example(data=None).via("a 400 whose error names code 10**23: 'Server error 1234… from'")
def test_gemini_stream(base_url: str, data: st.DataObject | None) -> None:
    huge = b'{"error": {"code": 123456789012345678901234, "message": "m", "status": "X"}}'
    answer = (400, huge) if data is None else data.draw(hostile_body(KINDS[2]))
    _streams_or_says_why(KINDS[2], base_url, answer)


@FEWER
@given(data=st.data())
def test_responses_stream(base_url: str, data: st.DataObject) -> None:
    _streams_or_says_why(KINDS[3], base_url, data.draw(hostile_body(KINDS[3])))
