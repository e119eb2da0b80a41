"""The Gemini kind's own stream reading (backends/gemini_api/gemini_stream.py), through the real
HTTP client.

A realistic stream (tests/data/streams/gemini.sse, its source in its header) replayed byte for
byte and cut mid-line and mid-character; the request as the REST API takes it; the SDK never
loaded for a run; and every way a request fails as one line.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox_app.backends.catalogue.presets import Preset, ServerConfig
from sandbox_app.backends.gemini_api.gemini_contents import CARRY_KEY
from sandbox_app.backends.gemini_api.gemini_kind import GeminiBackend
from sandbox_app.core.running.backend import (
    BackendError,
    Delta,
    StreamParams,
    ToolCallPiece,
    Usage,
)
from tests.model_server import ModelScript, ModelServer
from tests.model_server.gemini import gemini_server
from tests.model_server.replay import Recording

__all__ = ["gemini_server"]  # the fixture, imported for pytest

ROOT = Path(__file__).resolve().parents[2]
CAPTURE = ROOT / "tests" / "data" / "streams" / "gemini.sse"
MARKER = b"# ---- the stream, byte for byte, from the next line ----\n"
SIGNATURE = "CiQBPM/oGLQeqGc3grIIAbPS8ky9qZzXOMvif91byVNh7p+P89nP2hEBDPt7flPKWR7o"
SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Searches the team's documents.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
    },
}


def backend(server: ModelServer, key: str = "test-key") -> GeminiBackend:
    url = server.root
    return GeminiBackend(ServerConfig(url, key, Preset("custom", url, url), timeout_s=10))


def stream(server: ModelServer, params: StreamParams, key: str = "test-key") -> list[Delta]:
    messages = [{"role": "system", "content": "Use the tools."}, {"role": "user", "content": "q"}]

    async def read() -> list[Delta]:
        gemini = backend(server, key)
        try:
            return [d async for d in gemini.stream(messages, params)]
        finally:
            await gemini.aclose()

    return asyncio.run(read())


def failure(server: ModelServer) -> str:
    with pytest.raises(BackendError) as raised:
        stream(server, StreamParams(model="m"))
    line = str(raised.value)
    assert "\n" not in line
    assert "Traceback" not in line
    return line


def capture() -> bytes:
    _, marker, body = CAPTURE.read_bytes().partition(MARKER)
    assert marker
    assert body.startswith(b"data: ")
    return body


def cut(body: bytes) -> list[bytes]:
    """Pieces of 37 bytes, one cut also inside the em dash's three UTF-8 bytes."""
    inside = body.index("—".encode()) + 1
    offsets = sorted({*range(0, len(body), 37), inside})
    return [body[a:b] for a, b in zip(offsets, [*offsets[1:], len(body)], strict=True)]


def test_a_gemini_stream_replayed_byte_for_byte(gemini_server: ModelServer) -> None:
    body = capture()
    assert b"[DONE]" not in body
    assert body.count(b"\r\n\r\n") == 4
    gemini_server.replay(Recording.of(*cut(body)))
    params = StreamParams(model="gemini-3-pro-preview", reasoning_effort="high", tools=(SEARCH,))
    deltas = stream(gemini_server, params)
    # The request as sent, shown by the inspector: the REST API's own (camelCase) body.
    (sent,) = gemini_server.requests
    assert deltas[0].request == sent
    assert deltas[0].sent_at is not None
    assert sent["systemInstruction"] == {"parts": [{"text": "Use the tools."}]}
    assert sent["generationConfig"]["thinkingConfig"] == {
        "includeThoughts": True,
        "thinkingLevel": "high",
    }
    (declared,) = sent["tools"][0]["functionDeclarations"]
    assert declared["parametersJsonSchema"] == SEARCH["function"]["parameters"]  # type: ignore[index]
    # The thought summaries as thinking, the reply's text as text, the call whole.
    thinking = "".join(d.reasoning for d in deltas)
    assert thinking.startswith("**Pricing the team**\n\nThe question wants a yearly figure")
    assert "seven developers — I should" in thinking
    assert "(× 12 × 7)" in thinking
    assert "".join(d.text for d in deltas) == "I need the price per developer first."
    calls = [piece for d in deltas for piece in d.tool_calls]
    arguments = json.dumps({"query": "Brightgrid Pro price per developer"})
    assert calls == [ToolCallPiece(0, "gemini-call-0", "search", arguments)]
    # The end: the last chunk's usage (thoughts counted in the completion), the signature
    # to send back with the call, and a finish for a turn that called a tool.
    (usage,) = [d.usage for d in deltas if d.usage is not None]
    assert usage == Usage(231, 26 + 71, reasoning_tokens=71, cache_read_tokens=128)
    (carry,) = [d.carry for d in deltas if d.carry is not None]
    assert carry == {CARRY_KEY: {"gemini-call-0": SIGNATURE}}
    assert [d.finish_reason for d in deltas if d.finish_reason] == ["tool_calls"]


def test_a_run_never_loads_the_sdk(gemini_server: ModelServer) -> None:
    """The stream is read without google-genai (its per-chunk validation was the cost); the
    SDK is loaded only for the models list."""
    gemini_server.set_model("m", ModelScript(replies=["Final Answer: done"]))
    code = f"""
import asyncio, sys
from sandbox_app.backends.gemini_api.gemini_kind import GeminiBackend
from sandbox_app.backends.catalogue.presets import Preset, ServerConfig
from sandbox_app.core.running.backend import StreamParams
url = {gemini_server.root!r}

async def main():
    gemini = GeminiBackend(ServerConfig(url, "k", Preset("custom", url, url), timeout_s=10))
    try:
        deltas = [d async for d in gemini.stream([{{"role": "user", "content": "q"}}],
                                                 StreamParams(model="m"))]
        print("".join(d.text for d in deltas))
        print("google.genai" in sys.modules)
        print(await gemini.list_models())
        print("google.genai" in sys.modules)
    finally:
        await gemini.aclose()

asyncio.run(main())
"""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.splitlines() == ["Final Answer: done", "False", "['m']", "True"], done.stderr


@pytest.mark.parametrize(
    ("fail", "expected"),
    [
        (
            (403, "Permission denied: Consumer 'api_key:x' has been suspended."),
            "refused access (403 PERMISSION_DENIED): Permission denied: Consumer 'api_key:x' "
            "has been suspended.",
        ),
        ((500, "An internal error has occurred."), "Server error 500 from"),
        ((404, "models/m is not found for API version v1beta."), "(404): model 'm'"),
    ],
)
def test_an_error_reply_is_one_line(
    gemini_server: ModelServer, fail: tuple[int, str], expected: str
) -> None:
    gemini_server.set_model("m", ModelScript(fail_status=fail[0], fail_message=fail[1]))
    assert expected in failure(gemini_server)


def test_a_web_page_is_not_gemini(gemini_server: ModelServer) -> None:
    page = b"<!doctype html><title>Router</title>\n<p>Welcome</p>\n"
    gemini_server.replay(Recording.of(page, content_type="text/html; charset=utf-8"))
    line = failure(gemini_server)
    assert line.startswith(f"127.0.0.1:{gemini_server.root.rsplit(':', 1)[1]} answered")
    assert "a web page, not Gemini's API — check the base URL" in line
    gemini_server.replay(Recording.of(page, status=404, content_type="text/html"))
    assert "a web page (404), not Gemini's API" in failure(gemini_server)
    gemini_server.replay(
        Recording.of(page, status=502, content_type="text/html")
    )  # a proxy's page: its status, not its markup
    assert failure(gemini_server).endswith(": Bad Gateway. Try again later.")


def test_an_error_mid_stream_and_a_cut_stream(gemini_server: ModelServer) -> None:
    first = capture().split(b"\r\n\r\n")[0] + b"\r\n\r\n"
    overloaded = {
        "error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}
    }
    error = b"data: " + json.dumps(overloaded).encode() + b"\r\n\r\n"
    gemini_server.replay(Recording.of(first, error))
    assert "Server error 503 from" in failure(gemini_server)
    gemini_server.replay(Recording.of(first, b'data: {"candidates": [{"content": {"par'))
    line = failure(gemini_server)
    assert line.startswith("The stream from 127.0.0.1:"), line
    assert line.endswith("; the partial reply is kept."), line


def test_a_keyless_server_gets_no_key_header(gemini_server: ModelServer) -> None:
    """A key goes only where one was given for: a keyless server gets no header at all."""
    gemini_server.set_model("m", ModelScript(replies=["ok"], cycle=True))
    for key in ("test-key", ""):
        assert "".join(d.text for d in stream(gemini_server, StreamParams(model="m"), key)) == "ok"
    assert gemini_server.keys == ["test-key", ""]
