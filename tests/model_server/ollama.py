"""Ollama's own API (not its /v1 layer): the native kind's encoding of a :class:`ModelScript`
reply, and the model routes its panel and the health check read.

Shapes from Ollama's API reference, docs/api.md in github.com/ollama/ollama ("Generate a
chat completion", "List Local Models", "List Running Models", "Show Model Information",
"Version", "Pull a Model"), its server/routes.go for the errors, and the stream captured in
tests/data/streams/ollama.jsonl (its source in ollama.jsonl.md):

- ``POST /api/chat``: newline-delimited JSON, one object per chunk: ``{"model", "created_at",
  "message": {"role": "assistant", "content", "thinking"?, "tool_calls"?}, "done": false}``;
  tool calls come whole, ``{"function": {"name", "arguments": {…}}}`` (an object, not JSON
  text); the last chunk ``done: true`` with ``done_reason`` and the counts and durations. A
  model it lacks: 404 ``{"error": "model \\"M\\" not found, try pulling it first"}``.
- ``GET /api/tags``, ``GET /api/ps`` (``size_vram``, ``expires_at``, ``context_length``),
  ``POST /api/show`` (``capabilities``, ``model_info``), ``GET /api/version``: the server's
  local models (:class:`LocalModel`, :meth:`ModelServer.add`).
- ``POST /api/pull``: progress lines, ``success``; a name the registry lacks: ``{"error":
  "pull model manifest: file does not exist"}`` in the stream, as Ollama sends it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest
from aiohttp import web

from tests.model_server.events import send_events
from tests.model_server.local import LocalModel
from tests.model_server.script import ModelScript, choose_reply, reply_parts

if TYPE_CHECKING:
    from tests.model_server.server import ModelServer

Handler = Callable[["ModelServer", web.Request], Awaitable[web.StreamResponse]]
STAMP = "2025-05-10T08:06:48.639712648-07:00"
DIGEST = "a2af6cc3eb7fa8be8504abaf9b04e88f17a119ec3f04a3addf55f92841195f5a"
MALFORMED = b"{this is not json\n"
PULLED = ModelScript(replies=["Answer: pulled"], cycle=True)


def _error(
    status: int, message: str | None, retry_after: float | None = None, code: str | None = None
) -> web.Response:
    return web.json_response({"error": message or f"HTTP {status}"}, status=status)


async def _chat(server: ModelServer, request: web.Request) -> web.StreamResponse:
    missing = 'model "{model}" not found, try pulling it first'
    admitted = await server.admit(request, _error, missing=missing)
    if isinstance(admitted, web.Response):
        return admitted
    body, name, script = admitted
    messages = body.get("messages") or []
    turns = sum(1 for m in messages if m.get("role") == "assistant")
    reply = choose_reply(script, turns, None, messages, 0)
    if reply is None:
        return _error(400, "the script has no reply for this turn")
    if name in server.local:
        server.local[name] = dataclasses.replace(server.local[name], loaded=True)
    thinking, text, calls = reply_parts(reply)
    limit = (body.get("options") or {}).get("num_predict")
    prompt = sum(len(str(m.get("content") or "")) for m in messages) // 4 + 1
    lines = _lines(name, script, thinking, text, calls, limit, prompt)
    events = ((line, True) for line in lines)  # every line carries content
    return await send_events(server, request, script, events, "application/x-ndjson", MALFORMED)


def _lines(
    name: str,
    script: ModelScript,
    thinking: str,
    text: str,
    calls: list[tuple[str, Any]],
    limit: Any,
    prompt: int,
) -> Iterator[bytes]:
    """The reply's lines: its thinking and text a token a line, its calls whole, then done."""

    def line(message: dict[str, Any], **final: Any) -> bytes:
        chunk = {"model": name, "created_at": STAMP, "message": message, "done": bool(final)}
        return (json.dumps(chunk | final) + "\n").encode()

    pieces = [("thinking", p) for p in script.tokenizer(thinking)]
    pieces += [("content", p) for p in script.tokenizer(text)]
    done_reason, chunks = script.finish or "stop", 0
    for key, piece in pieces:
        if isinstance(limit, int) and chunks >= limit:
            done_reason, calls = "length", []
            break
        yield line({"role": "assistant", "content": ""} | {key: piece})
        chunks += 1
    if calls:
        wire = [{"function": {"name": n, "arguments": a}} for n, a in calls]
        yield line({"role": "assistant", "content": "", "tool_calls": wire})
        chunks += 1
    yield line(
        {"role": "assistant", "content": ""},
        done_reason=done_reason,
        total_duration=4_883_583_458,
        load_duration=1_334_875,
        prompt_eval_count=prompt,
        prompt_eval_duration=342_546_000,
        eval_count=chunks,
        eval_duration=4_535_599_000,
    )


def _details() -> dict[str, object]:
    return {
        "parent_model": "",
        "format": "gguf",
        "family": "qwen3",
        "families": ["qwen3"],
        "parameter_size": "8.2B",
        "quantization_level": "Q4_K_M",
    }


def _entry(m: LocalModel) -> dict[str, Any]:
    return {"name": m.name, "model": m.name, "size": m.size, "digest": DIGEST} | {
        "details": _details()
    }


async def _tags(server: ModelServer, request: web.Request) -> web.Response:
    models = [_entry(m) | {"modified_at": STAMP} for m in server.local.values()]
    return web.json_response({"models": models})


async def _ps(server: ModelServer, request: web.Request) -> web.Response:
    running = [
        _entry(m) | {"expires_at": STAMP, "size_vram": m.size, "context_length": m.context}
        for m in server.local.values()
        if m.loaded
    ]
    return web.json_response({"models": running})


async def _show(server: ModelServer, request: web.Request) -> web.Response:
    body = await request.json()
    server.record(request, body)
    name = str(body.get("model") or body.get("name") or "")
    model = server.local.get(name) or server.local.get(name.removesuffix(":latest"))
    if model is None:
        return web.json_response({"error": f"model '{name}' not found"}, status=404)
    return web.json_response(
        {
            "modelfile": '# Modelfile generated by "ollama show"\nFROM qwen3\n',
            "parameters": "temperature 0.6\ntop_k 20",
            "template": "{{ .Prompt }}",
            "details": _details(),
            "model_info": {
                "general.architecture": "qwen3",
                "general.parameter_count": 8190735360,
                "qwen3.context_length": model.max_context,
                "qwen3.embedding_length": 4096,
            },
            "capabilities": ["completion", *model.capabilities],
            "modified_at": STAMP,
        }
    )


async def _version(server: ModelServer, request: web.Request) -> web.Response:
    return web.json_response({"version": "0.12.6"})


async def _pull(server: ModelServer, request: web.Request) -> web.StreamResponse:
    body = await request.json()
    server.record(request, body)
    name = str(body.get("model", ""))
    response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
    await response.prepare(request)

    async def send(line: dict[str, Any]) -> None:
        await response.write((json.dumps(line) + "\n").encode())

    try:
        await send({"status": "pulling manifest"})
        total = server.registry.get(name)
        if total is None:
            await send({"error": "pull model manifest: file does not exist"})
            return response
        layer = {"status": f"pulling {DIGEST[:12]}", "digest": f"sha256:{DIGEST}"}
        step = max(total // 4, 1)
        completed = 0
        while completed < total or server.hold_pull:
            completed = min(completed + step, total - 1 if server.hold_pull else total)
            await send(layer | {"total": total, "completed": completed})
            if server.hold_pull:
                await asyncio.sleep(0.02)  # the pace of a download, until hung up on
        for status in ("verifying sha256 digest", "writing manifest", "success"):
            await send({"status": status})
        server.add(LocalModel(name, loaded=False, size=total), PULLED)
        await response.write_eof()
    except (ConnectionResetError, asyncio.CancelledError):
        server.pull_closed.set()  # the client closed the stream
        raise
    return response


def _ollama_only(handler: Handler) -> Handler:
    """A route only Ollama has: a server not imitating Ollama answers 404, as another would
    (the health check tells servers apart by it)."""

    async def route(server: ModelServer, request: web.Request) -> web.StreamResponse:
        if server.imitate != "ollama":
            return web.Response(status=404)
        return await handler(server, request)

    return route


ROUTES = tuple(
    (method, path, _ollama_only(handler))
    for method, path, handler in (
        ("POST", "/api/chat", _chat),
        ("GET", "/api/tags", _tags),
        ("GET", "/api/ps", _ps),
        ("POST", "/api/show", _show),
        ("GET", "/api/version", _version),
        ("POST", "/api/pull", _pull),
    )
)


@pytest.fixture
def fake_ollama() -> Iterator[ModelServer]:
    """A started test server imitating Ollama (its own API at :attr:`ModelServer.root`)."""
    from tests.model_server.server import ModelServer

    with ModelServer("ollama") as server:
        yield server
