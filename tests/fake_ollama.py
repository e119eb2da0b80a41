"""A small, real Ollama server for tests: Ollama's own API (not its /v1 layer) on 127.0.0.1.

Shapes from Ollama's API reference, docs/api.md in github.com/ollama/ollama ("Generate a
chat completion", "List Local Models", "List Running Models", "Show Model Information",
"Version", "Pull a Model"), and its server/routes.go for the errors:

- ``POST /api/chat``: newline-delimited JSON, one object per chunk: ``{"model", "created_at",
  "message": {"role": "assistant", "content", "thinking"?, "tool_calls"?}, "done": false}``;
  tool calls come whole, ``{"function": {"name", "arguments": {…}}}`` (an object, not JSON
  text); the last chunk ``done: true`` with ``done_reason``, ``total_duration``,
  ``load_duration``, ``prompt_eval_count``, ``prompt_eval_duration``, ``eval_count``,
  ``eval_duration``. A model it lacks: 404 ``{"error": "model \\"M\\" not found, try pulling
  it first"}`` (routes.go ``handleScheduleError``).
- ``GET /api/tags``, ``GET /api/ps`` (with ``size_vram``, ``expires_at``, ``context_length``),
  ``POST /api/show`` (``capabilities``, ``model_info``), ``GET /api/version``.
- ``POST /api/pull``: progress lines ``{"status": "pulling manifest"}``, ``{"status": "pulling
  <digest>", "digest", "total", "completed"}``, ``verifying sha256 digest``, ``writing
  manifest``, ``success``; a name the registry lacks: ``{"error": "pull model manifest: file
  does not exist"}`` in the stream, as Ollama sends it.

Every request body is recorded. Runs aiohttp on its own loop in a daemon thread, so the code
under test may use any loop.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

from tests.pacing import Pace
from tests.threaded_app import ThreadedApp

STAMP = "2025-05-10T08:06:48.639712648-07:00"
DIGEST = "a2af6cc3eb7fa8be8504abaf9b04e88f17a119ec3f04a3addf55f92841195f5a"


@dataclass(frozen=True)
class Reply:
    """One assistant reply: its thinking, its text, its tool calls (name, arguments)."""

    content: str = ""
    thinking: str = ""
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    done_reason: str = "stop"
    rate: float | None = None  # chunks per second (None: as fast as the loop writes them)


@dataclass
class Model:
    """A model the server has: its replies, chosen by the assistant turns a request holds."""

    replies: list[Reply]
    size: int = 5_225_376_047
    loaded: bool = False
    capabilities: tuple[str, ...] = ("completion", "tools", "thinking")
    # (status, message): /api/chat answers {"error": message} with that status instead.
    fails: tuple[int, str] | None = None


@dataclass
class FakeOllama:
    models: dict[str, Model] = field(default_factory=dict)
    # What /api/pull can fetch: name → bytes of its one big layer.
    registry: dict[str, int] = field(default_factory=dict)
    # A pull that keeps sending progress (never finishing) until the client hangs up.
    hold_pull: bool = False
    pull_closed: threading.Event = field(default_factory=threading.Event)
    _requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)  # each request's header, if any
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _port: int = 0
    _server: ThreadedApp = field(init=False)

    def __post_init__(self) -> None:
        self._server = ThreadedApp("FakeOllama", self._app)

    # ---- inspection --------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self._port}"

    def requests(self, path: str = "/api/chat") -> list[dict[str, Any]]:
        """The JSON bodies received at ``path``, in order (a copy)."""
        with self._lock:
            return [body for where, body in self._requests if where == path]

    # ---- lifecycle ---------------------------------------------------------------

    def start(self) -> FakeOllama:
        self._port = self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/api/chat", self._chat)
        app.router.add_get("/api/tags", self._tags)
        app.router.add_get("/api/ps", self._ps)
        app.router.add_post("/api/show", self._show)
        app.router.add_get("/api/version", self._version)
        app.router.add_post("/api/pull", self._pull)
        return app

    # ---- handlers ----------------------------------------------------------------

    async def _body(self, request: web.Request) -> dict[str, Any]:
        body = await request.json() if request.can_read_body else {}
        with self._lock:
            self._requests.append((request.path, body))
            if "Authorization" in request.headers:
                self.authorizations.append(request.headers["Authorization"])
        return body

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await self._body(request)
        name = body.get("model", "")
        model = self.models.get(name)
        if model is None:
            error = {"error": f'model "{name}" not found, try pulling it first'}
            return web.json_response(error, status=404)
        if model.fails is not None:
            status, message = model.fails
            return web.json_response({"error": message}, status=status)
        turns = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        reply = model.replies[min(turns, len(model.replies) - 1)]
        model.loaded = True
        response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await response.prepare(request)
        chunks = 0

        pace = Pace(reply.rate)

        async def send(message: dict[str, Any], **final: Any) -> None:
            await pace()
            line = {"model": name, "created_at": STAMP, "message": message, "done": bool(final)}
            await response.write((json.dumps(line | final) + "\n").encode())

        for piece in _words(reply.thinking):
            await send({"role": "assistant", "content": "", "thinking": piece})
            chunks += 1
        for piece in _words(reply.content):
            await send({"role": "assistant", "content": piece})
            chunks += 1
        if reply.tool_calls:
            calls = [{"function": {"name": n, "arguments": a}} for n, a in reply.tool_calls]
            await send({"role": "assistant", "content": "", "tool_calls": calls})
            chunks += 1
        prompt = sum(len(str(m.get("content") or "")) for m in body["messages"]) // 4 + 1
        await send(
            {"role": "assistant", "content": ""},
            done_reason=reply.done_reason,
            total_duration=4_883_583_458,
            load_duration=1_334_875,
            prompt_eval_count=prompt,
            prompt_eval_duration=342_546_000,
            eval_count=chunks,
            eval_duration=4_535_599_000,
        )
        await response.write_eof()
        return response

    def _entry(self, name: str, model: Model) -> dict[str, Any]:
        details = {
            "parent_model": "",
            "format": "gguf",
            "family": "qwen3",
            "families": ["qwen3"],
            "parameter_size": "8.2B",
            "quantization_level": "Q4_K_M",
        }
        return {"name": name, "model": name, "size": model.size, "digest": DIGEST} | {
            "details": details
        }

    async def _tags(self, request: web.Request) -> web.Response:
        models = [
            self._entry(n, m) | {"modified_at": STAMP} for n, m in sorted(self.models.items())
        ]
        return web.json_response({"models": models})

    async def _ps(self, request: web.Request) -> web.Response:
        running = [
            self._entry(n, m) | {"expires_at": STAMP, "size_vram": m.size, "context_length": 4096}
            for n, m in sorted(self.models.items())
            if m.loaded
        ]
        return web.json_response({"models": running})

    async def _show(self, request: web.Request) -> web.Response:
        name = (await self._body(request)).get("model", "")
        model = self.models.get(name)
        if model is None:
            return web.json_response({"error": f"model '{name}' not found"}, status=404)
        return web.json_response(
            {
                "modelfile": f"FROM {name}",
                "parameters": "temperature 0.6",
                "template": "{{ .Prompt }}",
                "details": self._entry(name, model)["details"],
                "model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960},
                "capabilities": list(model.capabilities),
                "modified_at": STAMP,
            }
        )

    async def _version(self, request: web.Request) -> web.Response:
        return web.json_response({"version": "0.12.6"})

    async def _pull(self, request: web.Request) -> web.StreamResponse:
        name = (await self._body(request)).get("model", "")
        response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await response.prepare(request)

        async def send(line: dict[str, Any]) -> None:
            await response.write((json.dumps(line) + "\n").encode())

        try:
            await send({"status": "pulling manifest"})
            total = self.registry.get(name)
            if total is None:
                await send({"error": "pull model manifest: file does not exist"})
                return response
            layer = {"status": f"pulling {DIGEST[:12]}", "digest": f"sha256:{DIGEST}"}
            step = max(total // 4, 1)
            completed = 0
            while completed < total or self.hold_pull:
                completed = min(completed + step, total - 1 if self.hold_pull else total)
                await send(layer | {"total": total, "completed": completed})
                if self.hold_pull:
                    await asyncio.sleep(0.02)  # the pace of a download, until hung up on
            for status in ("verifying sha256 digest", "writing manifest", "success"):
                await send({"status": status})
            self.models[name] = Model([Reply("Answer: pulled")], size=total)
            await response.write_eof()
        except (ConnectionResetError, asyncio.CancelledError):
            self.pull_closed.set()  # the client closed the stream
            raise
        return response


def _words(text: str) -> list[str]:
    """Text in word-sized chunks, each with its leading space, as a model streams it."""
    pieces: list[str] = []
    for index, word in enumerate(text.split(" ")):
        pieces.append(word if index == 0 else " " + word)
    return [p for p in pieces if p]


@pytest.fixture
def fake_ollama() -> Iterator[FakeOllama]:
    server = FakeOllama().start()
    try:
        yield server
    finally:
        server.stop()
