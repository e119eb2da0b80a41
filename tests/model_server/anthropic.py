"""Anthropic's Messages API (``POST /v1/messages`` streamed, ``GET /v1/models`` asked with an
``anthropic-version`` header): the Anthropic kind's encoding of a :class:`ModelScript` reply.

The stream follows Anthropic's streaming messages reference ("Streaming Messages",
docs.anthropic.com/en/docs/build-with-claude/streaming) and the capture
tests/data/streams/anthropic.sse: ``message_start``, ``ping``, then per content block
``content_block_start`` (thinking, redacted_thinking, text, tool_use), ``content_block_delta``
(``thinking_delta``, ``signature_delta``, ``text_delta``, ``input_json_delta``) and
``content_block_stop``, then ``message_delta`` (stop_reason: ``tool_use``, ``end_turn``,
``max_tokens`` when ``max_tokens`` cut it, or ``ModelScript.finish``; the output tokens) and
``message_stop``. Errors have the API's JSON shape (``{"type": "error", "error": {"type": …,
"message": …}}``) and statuses (401, 429 with ``retry-after``, 529).

A reply's blocks come from its raw text: leading ``<redacted_thinking>DATA</redacted_thinking>``
and ``<think>…</think>`` blocks in order (``<think signature="S">`` sends S instead of this
server's own signature, and S is taken back as valid), then the text, then its
``<tool_call>`` blocks as tool_use blocks.

As the real API does with extended thinking on ("Extended thinking", "Preserving thinking
blocks"), a request whose last user turn carries ``tool_result`` blocks is refused (400
invalid_request_error, the API's own wording) when the assistant message before it does not
start with its thinking block, and a thinking block whose ``signature`` is not one this
server sent, or a redacted block whose ``data`` it never sent, is refused too.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from aiohttp import web

from tests.model_server.chat_calls import split_calls
from tests.model_server.events import send_events
from tests.model_server.script import ModelScript, choose_reply

if TYPE_CHECKING:
    from tests.model_server.server import ModelServer

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
MALFORMED = b"event: content_block_delta\ndata: {this is not json\n\n"
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4"
_ERRORS = {
    401: ("authentication_error", "invalid x-api-key"),
    429: ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
    529: ("overloaded_error", "Overloaded"),
}
_LEADING = re.compile(
    r"\s*(?:<redacted_thinking>(?P<data>.*?)</redacted_thinking>"
    r'|<think(?: signature="(?P<signature>[^"]*)")?>(?P<thinking>.*?)</think>)',
    re.DOTALL,
)


def signature_of(thinking: str) -> str:
    """What this server signs a thinking block with: it checks it when the block comes back."""
    return "sig-" + hashlib.sha256(thinking.encode()).hexdigest()[:24]


def blocks(reply: str) -> list[dict[str, Any]]:
    """A raw reply's content blocks, in order (module docstring)."""
    found: list[dict[str, Any]] = []
    while (match := _LEADING.match(reply)) is not None:
        if match["data"] is not None:
            found.append({"type": "redacted_thinking", "data": match["data"] or REDACTED})
        else:
            thinking = match["thinking"]
            signature = match["signature"] or signature_of(thinking)
            found.append({"type": "thinking", "thinking": thinking, "signature": signature})
        reply = reply[match.end() :]
    text, calls = split_calls(reply)
    if text:
        found.append({"type": "text", "text": text})
    for index, (name, arguments) in enumerate(calls, start=len(found)):
        found.append({"type": "tool_use", "id": f"toolu_{index:02d}", "name": name})
        found[-1]["input"] = arguments
    return found


def _error(
    status: int, message: str | None, retry_after: float | None = None, _: str | None = None
) -> web.Response:
    kind, usual = _ERRORS.get(status, ("invalid_request_error" if status < 500 else "api_error",
                                       "error"))  # fmt: skip
    body = {"type": "error", "error": {"type": kind, "message": message or usual}}
    headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else {}
    return web.json_response(body, status=status, headers=headers)


def models_answer(server: ModelServer) -> web.Response:
    data = [
        {"type": "model", "id": n, "display_name": n, "created_at": "2026-01-01T00:00:00Z"}
        for n in sorted(server.model_names)
    ]
    return web.json_response({"data": data, "has_more": False, "first_id": None, "last_id": None})


async def _messages(server: ModelServer, request: web.Request) -> web.StreamResponse:
    admitted = await server.admit(request, _error, missing="model: {model}")
    if isinstance(admitted, web.Response):
        return admitted
    body, _, script = admitted
    refusal = _thinking_refusal(body, server.sent)
    if refusal:
        return _error(400, refusal)
    messages = body["messages"]
    turn = sum(1 for m in messages if m["role"] == "assistant")
    reply = choose_reply(script, turn, None, messages, 0)
    if reply is None:
        return _error(400, "the script has no more turns")
    events = _events(server, script, body, reply)
    return await send_events(server, request, script, events, "text/event-stream", MALFORMED)


def _event(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


def _events(
    server: ModelServer, script: ModelScript, body: dict[str, Any], reply: str
) -> Iterator[tuple[bytes, bool]]:
    """The reply's events, each with whether it is a delta (what pacing spaces out)."""
    # As the API counts: the system prompt and the tools are part of the input.
    prompt = len(json.dumps([body.get("system"), body.get("tools"), body["messages"]])) // 4
    usage = {"input_tokens": prompt, "output_tokens": 1}
    usage |= {"cache_creation_input_tokens": script.cache_write_tokens}
    usage |= {"cache_read_input_tokens": script.cached_tokens}
    message: dict[str, Any] = {"id": "msg_01fake", "type": "message", "role": "assistant"}
    message |= {"model": body["model"], "content": [], "stop_reason": None}
    message |= {"stop_sequence": None, "usage": usage}
    yield _event({"type": "message_start", "message": message}), False
    yield _event({"type": "ping"}), False
    found = blocks(reply)
    stop = script.finish or (
        "tool_use" if found and found[-1]["type"] == "tool_use" else "end_turn"
    )
    budget, spent = int(body["max_tokens"]), 0
    for index, block in enumerate(found):
        start = dict(block)
        kind = block["type"]
        if kind == "thinking":
            start |= {"thinking": "", "signature": ""}
            server.sent[f"anthropic:{block['signature']}"] = block["thinking"]
        elif kind == "redacted_thinking":
            server.sent[f"anthropic:{block['data']}"] = block["data"]
        elif kind == "tool_use":
            start["input"] = {}
        elif kind == "text":
            start["text"] = ""
        head = {"type": "content_block_start", "index": index, "content_block": start}
        yield _event(head), False
        pieces: list[dict[str, Any]] = []
        if kind in ("thinking", "text"):
            pieces = [{"type": f"{kind}_delta", kind: t} for t in script.tokenizer(block[kind])]
        elif kind == "tool_use":
            arguments = (
                json.dumps(block["input"])
                if not isinstance(block["input"], str)
                else (block["input"])
            )
            pieces = [{"type": "input_json_delta", "partial_json": t}
                      for t in script.tokenizer(arguments)]  # fmt: skip
        for piece in pieces:
            if spent >= budget:
                stop = "max_tokens"
                break
            spent += 1
            delta = {"type": "content_block_delta", "index": index, "delta": piece}
            yield _event(delta), True
        if kind == "thinking" and stop != "max_tokens":
            signature = block["signature"]
            for at in range(0, len(signature), 65536):
                piece = {"type": "signature_delta", "signature": signature[at : at + 65536]}
                yield _event({"type": "content_block_delta", "index": index, "delta": piece}), True
        yield _event({"type": "content_block_stop", "index": index}), False
        if stop == "max_tokens":
            break
    delta = {"stop_reason": stop, "stop_sequence": None}
    yield (
        _event({"type": "message_delta", "delta": delta, "usage": {"output_tokens": spent}}),
        False,
    )
    yield _event({"type": "message_stop"}), False


def _thinking_refusal(body: dict[str, Any], sent: dict[str, str]) -> str:
    """The 400 the real API answers a thinking request whose thinking did not come back as it
    was sent (module docstring), or ""."""
    if (body.get("thinking") or {}).get("type") != "enabled":
        return ""
    messages = body["messages"]
    for index, message in enumerate(messages):
        content = message["content"] if isinstance(message["content"], list) else []
        for number, block in enumerate(content):
            kind = block.get("type")
            if kind == "thinking" and sent.get(f"anthropic:{block.get('signature')}") != (
                block.get("thinking")
            ):
                return BAD_SIGNATURE.format(index=index, block=number)
            if kind == "redacted_thinking" and f"anthropic:{block.get('data')}" not in sent:
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


ROUTES = (("POST", "/v1/messages", _messages),)


@pytest.fixture
def fake_anthropic() -> Iterator[ModelServer]:
    """A started test server, for an Anthropic test: its base URL the root the SDK takes."""
    from tests.model_server.server import ModelServer

    with ModelServer() as server:
        server.base_path = ""
        yield server
