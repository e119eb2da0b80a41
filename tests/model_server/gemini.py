"""The Gemini API (``google-genai``): the Gemini kind's encoding of a :class:`ModelScript` reply.

Answers ``POST /v1beta/models/{model}:streamGenerateContent?alt=sse`` (the path the kind and
the SDK build from a custom ``base_url``; the key comes in the ``x-goog-api-key`` header) and
``GET /v1beta/models``. Chunks are shaped as the Gemini API documents them (Gemini API docs:
"Generating content" / streaming, "Gemini thinking" and "Thought signatures",
ai.google.dev/gemini-api/docs) and as the captured stream tests/data/streams/gemini.sse shows:
``data: {json}`` events (``\\r\\n\\r\\n`` apart) of ``candidates[0].content.parts`` with
``text``, the thinking as thought summaries ``{"text": …, "thought": true}``, each tool call a
``functionCall`` part carrying a ``thoughtSignature``; ``usageMetadata``
(``promptTokenCount``, ``candidatesTokenCount``, ``thoughtsTokenCount``,
``cachedContentTokenCount``) and the ``finishReason`` on the last chunk (``STOP``,
``MAX_TOKENS`` when ``maxOutputTokens`` cut it, or ``ModelScript.finish``).

Like Gemini 3, it refuses (400 INVALID_ARGUMENT) a request that sends a model's function
call back without the signature it came with, and one whose signature this server never
issued. Errors have Google's shape: ``{"error": {"code", "message", "status"}}``.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from aiohttp import web

from tests.model_server.events import send_events
from tests.model_server.script import choose_reply, reply_parts

if TYPE_CHECKING:
    from tests.model_server.server import ModelServer

MISSING_SIGNATURE = (
    "Function call is missing a thought_signature in functionCall parts. This is required "
    "for tools to work correctly, and missing thought_signature may lead to degraded model "
    "performance. Additional data, function call `default_api:{name}` , position {position}."
)
MALFORMED = b"data: {this is not json\r\n\r\n"
STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED"}
STATUS |= {404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


def signature_of(name: str, arguments: dict[str, Any]) -> str:
    """The thought signature this server sends with a call (and wants back with it)."""
    digest = hashlib.sha256(json.dumps([name, arguments], sort_keys=True).encode()).digest()
    return base64.b64encode(b"sig-" + digest[:12]).decode()


def error(
    code: int, message: str | None, retry_after: float | None = None, _: str | None = None
) -> web.Response:
    status = STATUS.get(code, "UNKNOWN")
    body = {"error": {"code": code, "message": message or status, "status": status}}
    return web.json_response(body, status=code)


async def models(server: ModelServer, request: web.Request) -> web.Response:
    server.record(request, {})
    for name in server.model_names:
        script = server.model(name)
        if script is not None and server.failing(name, script):
            assert script.fail_status is not None
            return error(script.fail_status, script.fail_message)
    models = [{"name": f"models/{name}", "displayName": name} for name in server.model_names]
    return web.json_response({"models": models})


async def _generate(server: ModelServer, request: web.Request) -> web.StreamResponse:
    model, _, method = request.match_info["call"].partition(":")
    if method != "streamGenerateContent" or request.query.get("alt") != "sse":
        return error(404, f"Method {method} is not served here.")
    missing = "models/{model} is not found for API version v1beta."
    admitted = await server.admit(request, error, name=model, missing=missing)
    if isinstance(admitted, web.Response):
        return admitted
    body, _, script = admitted
    refused = _check_signatures(server, body)
    if refused is not None:
        return refused
    contents = body.get("contents", [])
    turn = sum(1 for c in contents if c.get("role") == "model")
    reply = choose_reply(script, turn, None, contents, 0)
    if reply is None:
        return error(400, "The script has no reply for this turn.")
    limit = (body.get("generationConfig") or {}).get("maxOutputTokens")
    events = _events(server, reply, script.tokenizer, body, limit, script.finish)
    chunks = ((event, True) for event in events)  # every chunk carries content
    return await send_events(server, request, script, chunks, "text/event-stream", MALFORMED)


def _check_signatures(server: ModelServer, body: dict[str, Any]) -> web.Response | None:
    for content in body.get("contents", []):
        if content.get("role") != "model":
            continue
        for position, part in enumerate(content.get("parts", []), start=1):
            if "functionCall" not in part:
                continue
            signature = part.get("thoughtSignature")
            if not signature:
                name = part["functionCall"].get("name", "")
                return error(400, MISSING_SIGNATURE.format(name=name, position=position))
            if signature not in server.sent.values():
                return error(400, "Corrupted thought signature.")
    return None


def _events(
    server: ModelServer,
    reply: str,
    tokenizer: Any,
    body: dict[str, Any],
    limit: Any,
    finish: str | None,
) -> Iterator[bytes]:
    """The reply's SSE events: one token a chunk, each a whole GenerateContentResponse."""
    thinking, text, calls = reply_parts(reply)
    pieces: list[dict[str, Any]] = [{"text": t, "thought": True} for t in tokenizer(thinking)]
    answer = [{"text": t} for t in tokenizer(text)]
    reason = finish or "STOP"
    if isinstance(limit, int) and len(answer) > limit:
        answer, calls, reason = answer[:limit], [], finish or "MAX_TOKENS"
    pieces += answer
    for name, arguments in calls:
        signature = signature_of(name, arguments)
        server.sent[f"gemini:{signature}"] = signature
        pieces.append(
            {"functionCall": {"name": name, "args": arguments}, "thoughtSignature": signature}
        )
    prompt = len(json.dumps(body.get("contents", []))) // 4 + 1
    thoughts = candidates = 0
    for index, piece in enumerate(pieces or [{"text": ""}]):
        if piece.get("thought"):
            thoughts += 1
        else:
            candidates += 1
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [piece]}, "index": 0}
        # As captured: the counts so far, candidatesTokenCount only once the answer began.
        usage = {"promptTokenCount": prompt, "totalTokenCount": prompt + thoughts + candidates}
        if thoughts:
            usage["thoughtsTokenCount"] = thoughts
        if candidates:
            usage["candidatesTokenCount"] = candidates
        if index == max(len(pieces), 1) - 1:
            candidate["finishReason"] = reason
            usage["cachedContentTokenCount"] = 2
        chunk = {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "fake"}
        yield b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n"


def is_gemini(request: web.Request) -> bool:
    """A request from the Gemini kind or google-genai (``GET /v1/models`` is OpenAI's too)."""
    return "x-goog-api-key" in request.headers or "x-goog-api-client" in request.headers


# The kind takes the version from its base URL: v1beta from a bare host, v1 from ``…/v1``
# (ModelServer.base_url, which every kind can then share).
ROUTES = (
    ("GET", "/v1beta/models", models),
    ("POST", "/v1beta/models/{call}", _generate),
    ("POST", "/v1/models/{call}", _generate),
)


@pytest.fixture
def gemini_server() -> Iterator[ModelServer]:
    """A started test server, for a Gemini test (its SDK takes :attr:`ModelServer.root`)."""
    from tests.model_server.server import ModelServer

    with ModelServer() as server:
        yield server
