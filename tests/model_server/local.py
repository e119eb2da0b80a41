"""Real HTTP servers on 127.0.0.1 that answer the health endpoints of Ollama, LM Studio,
llama.cpp and vLLM as the real ones do, for backends/local_servers/health.py and ``react-sandbox
doctor``.

Each is the one test server (tests/model_server/server.py) told which to imitate
(``ModelServer(imitate="llamacpp")``): its routes are always there, its model list and health
answers take that server's shape, and its models (:meth:`ModelServer.add`) answer chats too.
Ollama's routes are ollama.py's (the same as its native kind's). The shapes follow each
server's documentation, trimmed to the fields a client reads:

- Ollama: docs/api.md of github.com/ollama/ollama — ``GET /api/version``, ``POST /api/show``
  ("Show Model Information": ``model_info`` with ``<arch>.context_length``, ``capabilities``;
  404 ``{"error": "model 'x' not found"}``), ``GET /api/ps`` ("List Running Models": each
  with ``context_length``, ``size_vram``, ``expires_at``), ``GET /api/tags``.
- LM Studio: "REST API v0" (lmstudio.ai/docs/developer/rest/endpoints) — ``GET
  /api/v0/models``: ``type``, ``state`` "loaded" / "not-loaded", ``max_context_length``; a
  loaded model's ``loaded_context_length`` and ``capabilities`` ["tool_use"] as LM Studio
  0.3.x lists them.
- llama.cpp: tools/server/README.md of github.com/ggml-org/llama.cpp — ``GET /health`` (200
  ``{"status": "ok"}``, 503 ``{"error": {"code": 503, "message": "Loading model", "type":
  "unavailable_error"}}`` while loading), ``GET /props`` (``default_generation_settings.n_ctx``,
  ``model_path``, ``chat_template_caps``, ``modalities``), ``GET /v1/models`` (one model,
  ``meta.n_ctx_train``).
- vLLM: vllm/entrypoints/openai/protocol.py's ``ModelCard`` (github.com/vllm-project/vllm) —
  ``GET /v1/models`` with ``owned_by`` "vllm", ``root``, ``max_model_len``; ``GET /health``
  (200, empty body); ``GET /version``.

States: a model loaded (with its served context) or not, a missing model (not added), a
llama.cpp server still loading; :func:`nothing_listening` is a port where no server runs.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import pytest
from aiohttp import web

from tests.model_server.script import ModelScript

if TYPE_CHECKING:
    from tests.model_server.server import ModelServer

Imitated = Literal["ollama", "lmstudio", "llamacpp", "vllm"]
ANSWER = ModelScript(replies=["Thought: I know it.\nFinal Answer: 42"], cycle=True)


@dataclass(frozen=True)
class LocalModel:
    """A model on a local server: whether it is loaded, its served and maximum context, what
    the server says it can do ("tools", "thinking", "vision")."""

    name: str
    loaded: bool = True
    context: int = 4096  # as served now (Ollama's num_ctx, LM Studio's loaded context…)
    max_context: int = 40960  # the model's own maximum
    capabilities: tuple[str, ...] = ("tools",)
    type: str = "llm"  # LM Studio's: "llm", "vlm", "embeddings"
    size: int = 5_225_376_047  # Ollama's bytes on disk


def models_answer(server: ModelServer) -> web.Response | None:
    """``GET /v1/models`` as the imitated server answers it (None: OpenAI's shape)."""
    local = list(server.local.values())
    if server.imitate == "llamacpp":
        if server.loading:
            return _loading_answer()
        m = local[0]
        meta = {"vocab_type": 2, "n_vocab": 151936, "n_ctx_train": m.max_context}
        model = {"id": m.name, "object": "model", "created": 0, "owned_by": "llamacpp"}
        return web.json_response({"object": "list", "data": [{**model, "meta": meta}]})
    if server.imitate == "vllm":
        data: list[dict[str, object]] = [
            {
                "id": m.name,
                "object": "model",
                "created": 0,
                "owned_by": "vllm",
                "root": m.name,
                "parent": None,
                "max_model_len": m.context,
                "permission": [],
            }
            for m in local
        ]
        return web.json_response({"object": "list", "data": data})
    data = [
        {"id": n, "object": "model", "created": 0, "owned_by": "fake"} for n in server.model_names
    ]
    return web.json_response({"object": "list", "data": data})


async def _models_v0(server: ModelServer, request: web.Request) -> web.Response:
    """LM Studio's REST API v0 model list."""
    if server.imitate != "lmstudio":
        return web.Response(status=404)
    data: list[dict[str, object]] = []
    for m in server.local.values():
        entry: dict[str, object] = {
            "id": m.name,
            "object": "model",
            "type": m.type,
            "publisher": "lmstudio-community",
            "arch": "qwen3",
            "compatibility_type": "gguf",
            "quantization": "Q4_K_M",
            "state": "loaded" if m.loaded else "not-loaded",
            "max_context_length": m.max_context,
            "capabilities": ["tool_use"] if "tools" in m.capabilities else [],
        }
        if m.loaded:
            entry["loaded_context_length"] = m.context
        data.append(entry)
    return web.json_response({"object": "list", "data": data})


def _loading_answer() -> web.Response:
    error = {"code": 503, "message": "Loading model", "type": "unavailable_error"}
    return web.json_response({"error": error}, status=503)


async def _health(server: ModelServer, request: web.Request) -> web.Response:
    """llama.cpp's ``/health`` (503 while loading), vLLM's (200, empty)."""
    if server.imitate == "vllm":
        return web.Response(status=200)
    if server.imitate != "llamacpp":
        return web.Response(status=404)
    if server.loading:
        return _loading_answer()
    return web.json_response({"status": "ok"})


async def _version(server: ModelServer, request: web.Request) -> web.Response:
    if server.imitate != "vllm":
        return web.Response(status=404)
    return web.json_response({"version": "0.11.0"})


async def _props(server: ModelServer, request: web.Request) -> web.Response:
    """llama-server's ``/props``: it serves one model (the first added) whatever name a
    request gives."""
    if server.imitate != "llamacpp":
        return web.Response(status=404)
    if server.loading:
        return _loading_answer()
    m = next(iter(server.local.values()))
    return web.json_response(
        {
            "default_generation_settings": {
                "id": 0,
                "id_task": -1,
                "n_ctx": m.context,
                "speculative": False,
                "is_processing": False,
                "params": {"n_predict": -1, "temperature": 0.8, "max_tokens": -1},
            },
            "total_slots": 1,
            "model_path": f"/models/{m.name}",
            "chat_template": "{% for message in messages %}…{% endfor %}",
            "chat_template_caps": {
                "supports_tools": "tools" in m.capabilities,
                "supports_tool_calls": "tools" in m.capabilities,
                "supports_system_role": True,
            },
            "modalities": {"vision": "vision" in m.capabilities, "audio": False},
            "build_info": "b6700-1a2b3c4d",
            "is_sleeping": False,
        }
    )


ROUTES = (
    ("GET", "/api/v0/models", _models_v0),
    ("GET", "/health", _health),
    ("GET", "/version", _version),
    ("GET", "/props", _props),
)


def nothing_listening() -> str:
    """The base URL of a port on 127.0.0.1 where nothing listens (a server that is down)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def started(imitate: Imitated) -> Iterator[ModelServer]:
    from tests.model_server.server import ModelServer

    with ModelServer(imitate) as server:
        yield server


@pytest.fixture
def fake_ollama_health() -> Iterator[ModelServer]:
    yield from started("ollama")


@pytest.fixture
def fake_lmstudio() -> Iterator[ModelServer]:
    yield from started("lmstudio")


@pytest.fixture
def fake_llamacpp() -> Iterator[ModelServer]:
    yield from started("llamacpp")


@pytest.fixture
def fake_vllm() -> Iterator[ModelServer]:
    yield from started("vllm")
