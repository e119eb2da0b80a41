"""The one test server: every backend kind's routes on one aiohttp app on 127.0.0.1.

Models are set with :meth:`ModelServer.set_model` (a :class:`ModelScript`, tests/model_server/
script.py) and answered through whichever API a request comes by: Chat Completions
(chat.py), Responses (responses.py), Anthropic Messages (anthropic.py), Gemini (gemini.py),
Ollama's own API (ollama.py), ``GET /v1/models``, and the local servers' health routes
(local.py). What is shared lives here: the models and their failure counters, every request
body and key received, the counters a test waits on, the hang-up on stop, and the replay mode
(:meth:`ModelServer.replay`, replay.py) that answers with a recorded stream byte for byte.

    with ModelServer() as server:
        server.set_model("m1", ModelScript(replies=["Final Answer: 2"]))
        client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from aiohttp import web

from tests.model_server import anthropic, chat, gemini, local, ollama, responses
from tests.model_server.local import LocalModel
from tests.model_server.replay import Recording
from tests.model_server.script import ModelScript
from tests.model_server.stat_wait import StatWait
from tests.threaded_app import ThreadedApp

# A kind's error answer: (status, message or None for the status's usual one, retry-after).
# The kind's error code, when it has one, last (None: the status's usual one).
ErrorShape = Callable[[int, str | None, float | None, str | None], web.Response]

# Each kind's routes: (method, path, handler(server, request)).
ROUTES: tuple[tuple[str, str, Callable[..., Any]], ...] = (
    *chat.ROUTES,
    *responses.ROUTES,
    *anthropic.ROUTES,
    *ollama.ROUTES,
    *gemini.ROUTES,
    *local.ROUTES,
)


class ModelServer:
    """Every kind's API on 127.0.0.1, on its own loop in a daemon thread. ``imitate``: the
    local server whose health routes and model list it answers as (local.py)."""

    def __init__(self, imitate: local.Imitated | None = None) -> None:
        self.imitate = imitate
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._models: dict[str, ModelScript] = {}
        self._failures: dict[str, int] = {}
        self._conversations: dict[str, int] = {}  # conversations started, per model
        self._held: dict[str, list[Any]] = {}  # refusals held, per model (refusals_together)
        self._authorizations: list[str] = []  # the Authorization header of each model request
        self._requests: list[tuple[str, dict[str, Any]]] = []  # (path, body)
        self._keys: list[str] = []
        self._stats: dict[str, int] = {}
        self._reset_stats()
        self._ids = 0
        # Reasoning and signatures this server sent, by call or block id: what a kind that
        # wants them back (passback.py, anthropic.py, gemini.py, responses.py) checks.
        self.sent: dict[str, str] = {}
        # What a server with a small context kept of each prompt (ModelScript.context_length).
        self.kept: list[list[Any]] = []
        # GET /v1/models answers these bytes as JSON instead of the models set (a hostile list).
        self.models_body: bytes | None = None
        # The local servers' models (local.py) and llama.cpp's loading state.
        self.local: dict[str, LocalModel] = {}
        self.loading = False
        # Ollama's registry for /api/pull: name → bytes of its one layer (ollama.py).
        self.registry: dict[str, int] = {}
        self.hold_pull = False
        self.pull_closed = threading.Event()
        self._replay: Recording | None = None
        self._port: int | None = None
        self.base_path = "/v1"  # what base_url adds to the root ("" for Anthropic's SDK)
        # handler_cancellation: a client hanging up cancels its handler (e.g. a stall).
        self._server = ThreadedApp(
            "ModelServer",
            self._app,
            before_stop=self._hang_up,
            handler_cancellation=True,
            shutdown_timeout=2.0,
        )
        self.active: set[asyncio.Transport] = set()  # open model connections
        self.stopping = False

    # ---- configuration and inspection (any thread) -------------------------------

    def set_model(self, name: str, script: ModelScript) -> None:
        """Configure (or replace) a model; its failure counter starts again."""
        with self._lock:
            self._models[name] = script
            self._failures.pop(name, None)

    def add(self, model: LocalModel, script: ModelScript = local.ANSWER) -> LocalModel:
        """A local server's model (local.py), which also answers chats."""
        self.local[model.name] = model
        self.set_model(model.name, script)
        return model

    def replay(self, recording: Path | Recording | None, **options: Any) -> None:
        """Answer every model request with the recorded stream at ``recording``'s path, or
        with a :class:`replay.Recording`'s bytes (replay.py); None: back to the scripts."""
        if isinstance(recording, Path):
            recording = Recording.load(recording, **options)
        self._replay = recording

    def model(self, name: str) -> ModelScript | None:
        with self._lock:
            return self._models.get(name)

    @property
    def model_names(self) -> list[str]:
        return list(self._models)  # a copy: dict reads are atomic

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every model request's JSON body (any kind), in order (a copy)."""
        with self._lock:
            return [body for path, body in self._requests if is_model_request(path)]

    def requests_to(self, path: str) -> list[dict[str, Any]]:
        """The JSON bodies received at ``path``, in order (a copy)."""
        with self._lock:
            return [body for where, body in self._requests if where == path]

    @property
    def stats(self) -> dict[str, int]:
        """Counters (a copy): completions (requests received), errors (HTTP error
        answers), finished (responses sent to the end), aborted (client went away
        first), cut (connections dropped by ``cut_after``)."""
        with self._lock:
            return dict(self._stats)

    @property
    def authorizations(self) -> list[str]:
        """The Authorization header of every model request, in order."""
        with self._lock:
            return list(self._authorizations)

    @property
    def keys(self) -> list[str]:
        """The key every request carried (bearer token, x-api-key or x-goog-api-key)."""
        with self._lock:
            return list(self._keys)

    def reset(self) -> None:
        """Forget models, requests and stats."""
        with self._lock:
            self._models.clear()
            self._failures.clear()
            self._conversations.clear()
            self._held.clear()
            self._requests.clear()
            self._reset_stats()
            self.kept.clear()

    def wait_for_stat(self, name: str, at_least: int, timeout: float = 5.0) -> StatWait:
        """Block until ``stats[name] >= at_least``, at most ``timeout`` seconds.

        The answer is true when the count was reached; false, it says what was seen, so
        ``assert server.wait_for_stat("aborted", 1)`` fails with the counters in its message.
        """
        with self._changed:
            reached = self._changed.wait_for(lambda: self._stats.get(name, 0) >= at_least, timeout)
            return StatWait(reached, name, at_least, timeout, dict(self._stats))

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("ModelServer is not started")
        return self._port

    @property
    def host_port(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def root(self) -> str:
        """The URL Anthropic's, Gemini's and Ollama's SDKs take (they add their own path)."""
        return f"http://{self.host_port}"

    @property
    def base_url(self) -> str:
        """The base URL a kind's SDK takes: the root and ``base_path``."""
        return f"{self.root}{self.base_path}"

    # ---- lifecycle ---------------------------------------------------------------

    def start(self, timeout: float = 10.0) -> ModelServer:
        self.stopping = False
        self._port = self._server.start(timeout)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        try:
            self._server.stop(timeout)
        except TimeoutError:
            raise RuntimeError(
                f"ModelServer did not shut down within {timeout:g} s: "
                f"{len(self.active)} connections still open, counters {self.stats}"
            ) from None
        finally:
            self._port = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _app(self) -> web.Application:
        app = web.Application()
        for method, path, handler in ROUTES:
            app.router.add_route(method, path, _bound(self, handler))
        # Not an API: lets a benchmark read the counters of a server in another process.
        app.router.add_get("/_stats", self._handle_stats)
        return app

    async def _hang_up(self) -> None:
        self.stopping = True
        # Hang up on open streams (stalled or slow): their handlers get cancelled the
        # same way as when a client disconnects.
        for transport in list(self.active):
            transport.abort()
        for _ in range(3):
            await asyncio.sleep(0)

    async def _handle_stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats)

    # ---- what every kind's handler does (on the server's loop) --------------------

    def record(self, request: web.Request, body: dict[str, Any]) -> None:
        """Keep a request's body and key; a model request also counts as a completion."""
        bearer = request.headers.get("Authorization", "")
        key = (
            request.headers.get("x-api-key")
            or request.headers.get("x-goog-api-key")
            or bearer.removeprefix("Bearer ")
        )
        with self._changed:
            self._requests.append((request.path, body))
            self._keys.append(key)
            if is_model_request(request.path):
                self._authorizations.append(bearer)
                self._stats["completions"] += 1
            self._changed.notify_all()

    async def admit(
        self,
        request: web.Request,
        error: ErrorShape,
        name: str | None = None,
        missing: str = "The model `{model}` does not exist or you do not have access to it.",
    ) -> tuple[dict[str, Any], str, ModelScript] | web.Response:
        """A model request's body, model name and script, recorded; or the error answer
        (in the kind's ``error`` shape) for a body that is no JSON object, a model not set
        (``missing``'s words), or a request ``fail_status`` answers. ``name``: the model when
        the path names it."""
        try:
            body = await request.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self.record(request, {})
            self.bump("errors")
            return error(400, "We could not parse the JSON body of your request.", None, None)
        self.record(request, body)
        model = body.get("model") if name is None else name
        name = model if isinstance(model, str) else ""
        script = self.model(name)
        if script is None:
            self.bump("errors")
            return error(404, missing.format(model=model), None, None)
        if self.failing(name, script):
            self.bump("errors")
            assert script.fail_status is not None
            return error(
                script.fail_status, script.fail_message, script.retry_after, script.fail_code
            )
        return body, name, script

    def failing(self, name: str, script: ModelScript) -> bool:
        """Whether this request is one ``fail_status`` answers (the counter moves on)."""
        if script.fail_status is None:
            return False
        with self._lock:
            failed = self._failures.get(name, 0)
            if script.fail_times is None or failed < script.fail_times:
                self._failures[name] = failed + 1
                return True
        return False

    def conversation(self, name: str, step: int) -> int:
        """How many conversations ``name`` began before this one (a step-0 request begins one)."""
        with self._lock:
            if step == 0:
                self._conversations[name] = self._conversations.get(name, -1) + 1
            return self._conversations.get(name, 0)

    def bump(self, name: str) -> None:
        with self._changed:
            self._stats[name] = self._stats.get(name, 0) + 1
            self._changed.notify_all()

    def next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    async def hold_together(self, name: str, together: int) -> None:
        """Wait (at most 5 s) until ``together`` refusals of ``name`` are held."""
        if together <= 1:
            return
        held = self._held.setdefault(name, [0, asyncio.Event()])
        held[0] += 1
        if held[0] >= together:
            held[1].set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(held[1].wait(), 5.0)

    def _reset_stats(self) -> None:
        self._stats = {"completions": 0, "errors": 0, "finished": 0, "aborted": 0, "cut": 0}


MODEL_PATHS = frozenset({"/v1/chat/completions", "/v1/responses", "/v1/messages", "/api/chat"})


def is_model_request(path: str) -> bool:
    """A request for a reply (Gemini's path names the model)."""
    return path in MODEL_PATHS or path.startswith(("/v1beta/models/", "/v1/models/"))


def _bound(server: ModelServer, handler: Callable[..., Any]) -> Callable[[web.Request], Any]:
    async def handle(request: web.Request) -> web.StreamResponse:
        recording = server._replay
        if recording is not None and is_model_request(request.path):
            server.record(request, await request.json() if request.can_read_body else {})
            return await recording.serve(request)
        return cast(web.StreamResponse, await handler(server, request))

    return handle


@pytest.fixture
def fake_server() -> Iterator[ModelServer]:
    """A started :class:`ModelServer`, stopped after the test."""
    with ModelServer() as server:
        yield server
