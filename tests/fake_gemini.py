"""A small, real Gemini API server for tests: what the Gemini kind and ``google-genai`` talk to.

Answers ``POST /v1beta/models/{model}:streamGenerateContent?alt=sse`` (the path the kind and
the SDK build from a custom ``base_url``; the key comes in the ``x-goog-api-key`` header) and
``GET /v1beta/models`` (the SDK's models list). Chunks are shaped as the Gemini API documents
them (Gemini API docs: "Generating content" / streaming, "Gemini thinking" and "Thought signatures",
ai.google.dev/gemini-api/docs): ``data: {json}`` events of ``candidates[0].content.parts``
with ``text``, thought summaries as ``{"text": …, "thought": true}``, ``functionCall`` parts
carrying a ``thoughtSignature``; ``usageMetadata`` (``promptTokenCount``,
``candidatesTokenCount``, ``thoughtsTokenCount``, ``cachedContentTokenCount``) and the
``finishReason`` on the last chunk.

Like Gemini 3, it refuses (400 INVALID_ARGUMENT) a request that sends a model's function
call back without the signature it came with, and one whose signature was altered. Errors
have Google's shape: ``{"error": {"code", "message", "status"}}``.

    with FakeGeminiServer() as server:
        server.replies["m"] = [Reply([thought("…"), text("…")])]
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

from tests.pacing import Pace
from tests.threaded_app import ThreadedApp

MISSING_SIGNATURE = (
    "Function call is missing a thought_signature in functionCall parts. This is required "
    "for tools to work correctly, and missing thought_signature may lead to degraded model "
    "performance. Additional data, function call `default_api:{name}` , position {position}."
)
STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED"}
STATUS |= {404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL"}


def text(words: str) -> dict[str, Any]:
    return {"text": words}


def thought(words: str) -> dict[str, Any]:
    return {"text": words, "thought": True}


def function_call(name: str, signature: str, **args: Any) -> dict[str, Any]:
    return {"functionCall": {"name": name, "args": args}, "thoughtSignature": signature}


@dataclass
class Reply:
    """One model turn: its parts in order (text parts are streamed ``words`` words a chunk)."""

    parts: list[dict[str, Any]]
    finish: str = "STOP"
    words: int = 3  # words a text chunk carries
    rate: float | None = None  # chunks per second (None: as fast as the loop writes them)


@dataclass
class FakeGeminiServer:
    # Replies per model, chosen by how many model turns the request already holds.
    replies: dict[str, list[Reply]] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)  # bodies received
    keys: list[str] = field(default_factory=list)  # x-goog-api-key of each request
    fail: tuple[int, str] | None = None  # answer every request with this status and message
    # Answer every streamGenerateContent request with these bytes, written piece by piece
    # (a captured stream replayed; cut where a network read may cut it), with this status
    # and content type.
    raw: list[bytes] | None = None
    raw_reply: tuple[int, str] = (200, "text/event-stream")

    def __post_init__(self) -> None:
        self._server = ThreadedApp("FakeGeminiServer", self._app)
        self._port = 0
        self._issued: set[str] = set()  # signatures sent: one sent back must be one of these

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    # ---- lifecycle -------------------------------------------------------------------
    def start(self) -> FakeGeminiServer:
        self._port = self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/v1beta/models", self._models)
        app.router.add_post("/v1beta/models/{call}", self._generate)
        return app

    def __enter__(self) -> FakeGeminiServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # ---- handlers --------------------------------------------------------------------
    async def _models(self, request: web.Request) -> web.Response:
        self.keys.append(request.headers.get("x-goog-api-key", ""))
        if self.fail is not None:
            return error(*self.fail)
        models = [{"name": f"models/{name}", "displayName": name} for name in self.replies]
        return web.json_response({"models": models})

    async def _generate(self, request: web.Request) -> web.StreamResponse:
        self.keys.append(request.headers.get("x-goog-api-key", ""))
        model, _, method = request.match_info["call"].partition(":")
        if method != "streamGenerateContent" or request.query.get("alt") != "sse":
            return error(404, f"Method {method} is not served here.")
        body = await request.json()
        self.requests.append(body)
        if self.fail is not None:
            return error(*self.fail)
        if self.raw is not None:
            return await self._replay(request, self.raw)
        if model not in self.replies:
            return error(404, f"models/{model} is not found for API version v1beta.")
        refused = self._check_signatures(body)
        if refused is not None:
            return refused
        turn = sum(1 for c in body.get("contents", []) if c.get("role") == "model")
        script = self.replies[model]
        if turn >= len(script):
            return error(400, "The script has no reply for this turn.")
        reply = script[turn]
        stream = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await stream.prepare(request)
        pace = Pace(reply.rate)
        for event in self._events(reply, body):
            await pace()
            await stream.write(event)
        await stream.write_eof()
        return stream

    async def _replay(self, request: web.Request, pieces: list[bytes]) -> web.StreamResponse:
        status, content_type = self.raw_reply
        stream = web.StreamResponse(status=status, headers={"Content-Type": content_type})
        await stream.prepare(request)
        for piece in pieces:
            await stream.write(piece)
        await stream.write_eof()
        return stream

    def _check_signatures(self, body: dict[str, Any]) -> web.Response | None:
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
                if signature not in self._issued:
                    return error(400, "Corrupted thought signature.")
        return None

    def _events(self, reply: Reply, body: dict[str, Any]) -> Iterator[bytes]:
        """The reply's SSE events: one part a chunk, each a whole GenerateContentResponse."""
        prompt = len(json.dumps(body.get("contents", []))) // 4 + 1
        counts = {"thoughts": 0, "candidates": 0}
        pieces: list[dict[str, Any]] = []
        for part in reply.parts:
            if "thoughtSignature" in part:
                self._issued.add(part["thoughtSignature"])
            if "text" not in part:
                pieces.append(part)
                continue
            words, n = part["text"].split(" "), reply.words
            for i in range(0, len(words), n):
                piece = dict(
                    part, text=" ".join(words[i : i + n]) + (" " if i + n < len(words) else "")
                )
                pieces.append(piece)
        templates: dict[tuple[tuple[str, Any], ...], tuple[bytes, bytes, bytes]] = {}
        for index, piece in enumerate(pieces):
            counts["thoughts" if piece.get("thought") else "candidates"] += 1
            if index == len(pieces) - 1:
                chunk = _response(piece, prompt, counts["candidates"], reply.finish)
                usage = chunk["usageMetadata"]
                usage |= {"thoughtsTokenCount": counts["thoughts"], "cachedContentTokenCount": 2}
                usage["totalTokenCount"] = prompt + counts["thoughts"] + counts["candidates"]
                yield _event(json.dumps(chunk))
                continue
            shape = tuple((k, v) for k, v in piece.items() if k != "text")
            if "text" not in piece or not all(isinstance(v, str | bool) for _, v in shape):
                yield _event(json.dumps(_response(piece, prompt, counts["candidates"])))
                continue
            # The benchmark's hot path (tests/perf/serve_kind.py, one word a chunk): the same
            # bytes as json.dumps of the chunk, from a template cut at the text and the count,
            # so this server, sharing the machine's cores with the app it measures, costs a
            # third less per chunk (fakeserver.py's streams do the same).
            if shape not in templates:
                templates[shape] = _template(piece, prompt)
            head, middle, tail = templates[shape]
            text = json.dumps(piece["text"]).encode()
            yield head + text + middle + str(counts["candidates"]).encode() + tail


TEXT_MARK, COUNT_MARK = "\u0000text\u0000", "\u0000count\u0000"


def _response(
    piece: dict[str, Any], prompt: int, candidates: int | str, finish: str | None = None
) -> dict[str, Any]:
    """One streamed GenerateContentResponse holding ``piece``; the finish reason on the last."""
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": [piece]}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    usage = {"promptTokenCount": prompt, "candidatesTokenCount": candidates}
    return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "fake"}


def _template(piece: dict[str, Any], prompt: int) -> tuple[bytes, bytes, bytes]:
    """``_event(json.dumps(_response(piece, …)))`` cut where the text and the count go."""
    marked = json.dumps(_response(dict(piece, text=TEXT_MARK), prompt, COUNT_MARK))
    head, rest = _event(marked).split(json.dumps(TEXT_MARK).encode())
    middle, tail = rest.split(json.dumps(COUNT_MARK).encode())
    return head, middle, tail


def _event(data: str) -> bytes:
    return b"data: " + data.encode() + b"\r\n\r\n"


def error(code: int, message: str) -> web.Response:
    status = STATUS.get(code, "UNKNOWN")
    return web.json_response(
        {"error": {"code": code, "message": message, "status": status}}, status=code
    )


@pytest.fixture
def gemini_server() -> Iterator[FakeGeminiServer]:
    with FakeGeminiServer() as server:
        yield server
