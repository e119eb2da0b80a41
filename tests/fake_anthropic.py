"""A small, real Anthropic Messages API server for tests: ``POST /v1/messages`` (streaming)
and ``GET /v1/models``, on 127.0.0.1, for the official ``anthropic`` SDK.

The stream is built from Anthropic's streaming messages reference ("Streaming Messages",
docs.anthropic.com/en/docs/build-with-claude/streaming): ``message_start``, then per content
block ``content_block_start`` (text, thinking, redacted_thinking, tool_use),
``content_block_delta`` (``text_delta``, ``thinking_delta``, ``signature_delta``,
``input_json_delta``) and ``content_block_stop``, then ``message_delta`` (stop_reason and the
cumulative usage), ``message_stop``; ``ping`` events between them, and the ``error`` event
(an overloaded API) in the middle of a stream. Errors have the API's JSON shape
(``{"type": "error", "error": {"type": …, "message": …}}``) and statuses (401, 429 with
``retry-after``, 529).

As the real API does with extended thinking on ("Extended thinking", section "Preserving
thinking blocks"), a request whose last user turn carries ``tool_result`` blocks is refused
(400 invalid_request_error, the API's own wording) when the assistant message before it does
not start with its thinking block, and any thinking block whose ``signature`` is not the one
this server signed it with, or redacted block whose ``data`` is not what it sent, is refused too.

Each reply is scripted per request turn (the number of assistant messages the request holds).
Every request body and key is recorded for the tests to read.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

from tests.pacing import Pace
from tests.threaded_app import ThreadedApp

# The API's words for a tool-result turn sent back without its thinking block (as quoted in
# many agent frameworks' bug reports, e.g. deepset-ai/haystack-core-integrations#2146).
MISSING_THINKING = (
    "messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
    "`{found}`. When `thinking` is enabled, a final `assistant` message must start with a "
    "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We "
    "recommend you include thinking blocks from previous turns. To avoid this requirement, "
    "disable `thinking`. Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)
BAD_SIGNATURE = "messages.{index}.content.{block}: Invalid `signature` in `thinking` block"
# A redacted block is encrypted by the API, which refuses one it cannot decrypt; these words
# are this server's own, shaped as the signature's.
BAD_REDACTED = "messages.{index}.content.{block}: Invalid `data` in `redacted_thinking` block"


HOSTILE = "hostile-"  # a Thinking's own signature starts so: taken back as valid


def signature_of(thinking: str) -> str:
    """What this server signs a thinking block with: it checks it when the block comes back."""
    return "sig-" + hashlib.sha256(thinking.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Thinking:
    text: str
    # The signature sent instead of this server's own (a hostile size, say), sent in pieces
    # of 64 KB; it is taken back as valid.
    signature: str = ""


@dataclass(frozen=True)
class Redacted:
    data: str = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4"


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class ToolUse:
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class Raw:
    """An event written as it is (``payload["type"]`` its name): what a broken or hostile
    server sends, a delta for a block it never started, a tool_use without a name."""

    payload: dict[str, Any]


Block = Thinking | Redacted | Text | ToolUse | Raw


@dataclass(frozen=True)
class Turn:
    """One reply: its blocks, and a stop reason (default: tool_use when it calls, end_turn)."""

    blocks: tuple[Block, ...]
    stop_reason: str | None = None


@dataclass
class AnthropicScript:
    turns: list[Turn] = field(default_factory=list)
    # Fail the first ``fail_times`` requests (None: all) with this status.
    fail_status: int | None = None
    fail_times: int | None = None
    retry_after: float | None = None
    fail_message: str | None = None  # the error's message (None: the status's usual one)
    # Send the ``error`` event (overloaded) after this many content blocks.
    error_after: int | None = None
    # Prompt-cache figures reported in message_start's usage.
    cache_read: int = 0
    cache_write: int = 0
    # Characters per text/thinking delta event.
    piece: int = 5
    # Delta events per second (None: as fast as the loop writes them); benchmarks pace lanes.
    rate: float | None = None


_ERROR_TYPES = {
    401: ("authentication_error", "invalid x-api-key"),
    429: ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
    529: ("overloaded_error", "Overloaded"),
}
_SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def _error(status: int, kind: str, message: str, **headers: str) -> web.Response:
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return web.json_response(body, status=status, headers=headers)


class FakeAnthropicServer:
    """The Messages API on 127.0.0.1, on its own loop in a daemon thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._models: dict[str, AnthropicScript] = {}
        self._failures: dict[str, int] = {}
        self.requests: list[dict[str, Any]] = []  # every /v1/messages body, in order
        self.keys: list[str] = []  # the x-api-key of every request, in order
        self._redacted: set[str] = set()  # every redacted block's data sent: taken back only
        self._server = ThreadedApp("FakeAnthropicServer", self._app)
        self._port = 0

    def set_model(self, name: str, script: AnthropicScript) -> None:
        with self._lock:
            self._models[name] = script
            self._failures.pop(name, None)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    # ---- lifecycle -------------------------------------------------------------------

    def start(self) -> FakeAnthropicServer:
        self._port = self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/messages", self._handle_messages)
        app.router.add_get("/v1/models", self._handle_models)
        return app

    # ---- the API ---------------------------------------------------------------------

    async def _handle_models(self, _request: web.Request) -> web.Response:
        with self._lock:
            names = sorted(self._models)
        data = [
            {"type": "model", "id": n, "display_name": n, "created_at": "2026-01-01T00:00:00Z"}
            for n in names
        ]
        return web.json_response(
            {"data": data, "has_more": False, "first_id": None, "last_id": None}
        )

    async def _handle_messages(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
            self.keys.append(_key_of(request))
            script = self._models.get(body.get("model", ""))
            failed = self._failures.get(body.get("model", ""), 0)
        if script is None:
            return _error(404, "not_found_error", f"model: {body.get('model')}")
        if script.fail_status is not None and (
            script.fail_times is None or failed < script.fail_times
        ):
            with self._lock:
                self._failures[body["model"]] = failed + 1
            kind, message = _ERROR_TYPES.get(script.fail_status, ("api_error", "error"))
            message = script.fail_message or message
            headers = {}
            if script.retry_after is not None:
                headers["retry-after"] = f"{script.retry_after:g}"
            return _error(script.fail_status, kind, message, **headers)
        with self._lock:
            redacted = set(self._redacted)
        refusal = _thinking_refusal(body, redacted)
        if refusal:
            return _error(400, "invalid_request_error", refusal)
        turn_index = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if turn_index >= len(script.turns):
            return _error(400, "invalid_request_error", "the script has no more turns")
        return await self._stream(request, body, script, script.turns[turn_index])

    async def _stream(
        self, request: web.Request, body: dict[str, Any], script: AnthropicScript, turn: Turn
    ) -> web.StreamResponse:
        response = web.StreamResponse(status=200, headers=_SSE_HEADERS)
        await response.prepare(request)
        # As the API counts: the system prompt and the tools are part of the input.
        counted = [body.get("system"), body.get("tools"), body["messages"]]
        prompt = len(json.dumps(counted)) // 4
        start_usage = {
            "input_tokens": prompt,
            "output_tokens": 1,
            "cache_read_input_tokens": script.cache_read,
            "cache_creation_input_tokens": script.cache_write,
        }
        message = {
            "id": "msg_01fake",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": start_usage,
        }
        await response.write(_event("message_start", {"type": "message_start", "message": message}))
        await response.write(_event("ping", {"type": "ping"}))
        budget = body["max_tokens"]
        out_tokens = 0
        stop_reason = turn.stop_reason or (
            "tool_use" if any(isinstance(b, ToolUse) for b in turn.blocks) else "end_turn"
        )
        pace = Pace(script.rate)
        for index, block in enumerate(turn.blocks):
            if index == script.error_after:
                error = {"type": "overloaded_error", "message": "Overloaded"}
                await response.write(_event("error", {"type": "error", "error": error}))
                return response
            sent, cut = await self._block(response, index, block, budget - out_tokens, script, pace)
            out_tokens += sent
            if cut:
                stop_reason = "max_tokens"
                break
        usage = {"output_tokens": out_tokens}
        delta = {"stop_reason": stop_reason, "stop_sequence": None}
        await response.write(
            _event("message_delta", {"type": "message_delta", "delta": delta, "usage": usage})
        )
        await response.write(_event("message_stop", {"type": "message_stop"}))
        await response.write_eof()
        return response

    async def _block(
        self,
        response: web.StreamResponse,
        index: int,
        block: Block,
        budget: int,
        script: AnthropicScript,
        pace: Pace | None = None,
    ) -> tuple[int, bool]:
        """Stream one content block; (tokens it cost, whether max_tokens cut it)."""

        async def delta(payload: dict[str, Any]) -> None:
            if pace is not None:
                await pace()
            await response.write(
                _event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": payload},
                )
            )

        async def start(payload: dict[str, Any]) -> None:
            await response.write(
                _event(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": payload},
                )
            )

        sent, cut = 0, False
        if isinstance(block, Raw):
            await response.write(_event(str(block.payload["type"]), block.payload))
            return sent, cut
        if isinstance(block, Redacted):
            with self._lock:
                self._redacted.add(block.data)
            await start({"type": "redacted_thinking", "data": block.data})
        elif isinstance(block, ToolUse):
            tool_id = f"toolu_{index:02d}"
            await start({"type": "tool_use", "id": tool_id, "name": block.name, "input": {}})
            arguments = json.dumps(block.input)
            for at in range(0, len(arguments), script.piece):
                piece = arguments[at : at + script.piece]
                await delta({"type": "input_json_delta", "partial_json": piece})
                sent += 1
        else:
            thinking = isinstance(block, Thinking)
            kind, key = ("thinking", "thinking") if thinking else ("text", "text")
            await start({"type": kind, key: "", **({"signature": ""} if thinking else {})})
            for at in range(0, len(block.text), script.piece):
                if sent >= budget:
                    cut = True
                    break
                await delta({"type": f"{kind}_delta", key: block.text[at : at + script.piece]})
                sent += 1
            if thinking and not cut:
                assert isinstance(block, Thinking)
                signature = block.signature or signature_of(block.text)
                for at in range(0, len(signature), 65536):
                    await delta(
                        {"type": "signature_delta", "signature": signature[at : at + 65536]}
                    )
        await response.write(
            _event("content_block_stop", {"type": "content_block_stop", "index": index})
        )
        return sent, cut


def _key_of(request: web.Request) -> str:
    """The key a request carries: the API's ``x-api-key``, or the bearer token the SDK sends
    its ``api_key`` as."""
    bearer = request.headers.get("authorization", "")
    return request.headers.get("x-api-key") or bearer.removeprefix("Bearer ")


def _thinking_refusal(body: dict[str, Any], redacted: set[str]) -> str:
    """The 400 the real API answers a thinking request whose thinking did not come back as it
    was sent (module docstring), or "". ``redacted``: the redacted blocks' data sent."""
    if (body.get("thinking") or {}).get("type") != "enabled":
        return ""
    messages = body["messages"]
    for index, message in enumerate(messages):
        content = message["content"] if isinstance(message["content"], list) else []
        for number, block in enumerate(content):
            signature = block.get("signature")
            if (
                block.get("type") == "thinking"
                and signature != signature_of(block.get("thinking", ""))
                and not str(signature).startswith(HOSTILE)
            ):
                return BAD_SIGNATURE.format(index=index, block=number)
            if block.get("type") == "redacted_thinking" and block.get("data") not in redacted:
                return BAD_REDACTED.format(index=index, block=number)
    last = messages[-1]
    results = isinstance(last["content"], list) and any(
        b.get("type") == "tool_result" for b in last["content"]
    )
    if not results or len(messages) < 2 or messages[-2]["role"] != "assistant":
        return ""
    previous = messages[-2]["content"]
    first = previous[0] if isinstance(previous, list) and previous else {"type": "text"}
    if first.get("type") in ("thinking", "redacted_thinking"):
        return ""
    return MISSING_THINKING.format(index=len(messages) - 2, found=first.get("type"))


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropicServer]:
    """A started :class:`FakeAnthropicServer`, stopped after the test."""
    server = FakeAnthropicServer().start()
    try:
        yield server
    finally:
        server.stop()
