"""A small, real OpenAI-compatible HTTP server for tests and benchmarks.

The server speaks just enough of the OpenAI REST API for the ``openai`` SDK:
``GET /v1/models`` and ``POST /v1/chat/completions`` (streaming over SSE or not).
Each configured model follows a :class:`ModelScript`: canned replies chosen by how
many assistant turns the request already holds, plus knobs for pacing, HTTP
failures and broken streams (cut, malformed, invalid UTF-8, stalled).

It runs aiohttp on its own asyncio loop in a daemon thread bound to 127.0.0.1 on a
free port, so the code under test can use any event loop (``asyncio.run``, qasync…).

    with FakeOpenAIServer() as server:
        server.set_model("m1", ModelScript(replies=["Final Answer: 2"]))
        client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

__all__ = ["FakeOpenAIServer", "ModelScript", "fake_server", "tokenize"]

# Punctuation the ReAct format leans on is a token of its own; everything else is
# split into word-ish pieces that carry their leading whitespace, like BPE tokens do.
# Every position matches one of the alternatives, so the pieces rebuild the text.
_PUNCT = r"[\[\]\(\),:]"
_TOKEN_RE = re.compile(rf"\s*{_PUNCT}|\s*\S+?(?=\s|$|{_PUNCT})|\s+")


def tokenize(text: str) -> list[str]:
    """Split ``text`` into small deterministic tokens; ``"".join(tokenize(t)) == t``."""
    return _TOKEN_RE.findall(text)


@dataclass
class ModelScript:
    """How one fake model answers. See the module docstring and field comments."""

    # Reply for a request = replies[number of assistant messages already in it].
    replies: list[str] = field(default_factory=list)
    # Past the end of ``replies``: wrap around (True) or answer 400 "exhausted".
    cycle: bool = False
    # Different replies per conversation (repeated runs): conversation k, counted by the
    # requests with no assistant turn yet, uses runs[k % len(runs)] instead of ``replies``.
    runs: list[list[str]] | None = None
    # Tokens (SSE chunks) per second; None = as fast as the socket takes them.
    rate: float | None = None
    # Cut the reply at the earliest ``stop`` string of the request.
    honor_stop: bool = True
    # Cut the reply at the request's max_tokens (False: a server that ignores the limit).
    honor_max_tokens: bool = True
    # Fail the first ``fail_times`` requests (None = all) with this HTTP status.
    fail_status: int | None = None
    fail_times: int | None = None
    retry_after: float | None = None
    fail_message: str | None = None
    # Broken streams: each counts content chunks already sent.
    cut_after: int | None = None  # then abort the TCP connection
    malformed_after: int | None = None  # then one ``data: {this is not json`` line
    bad_bytes_after: int | None = None  # then one chunk with invalid UTF-8 content
    stall_after: int | None = None  # then send nothing more, ever
    # Seconds between the response headers and the first chunk.
    delay_first: float = 0.0
    tokenizer: Callable[[str], list[str]] = tokenize


_ERROR_KINDS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    502: ("server_error", None),
    503: ("server_error", "service_unavailable"),
}

_DEFAULT_MESSAGES: dict[int, str] = {
    400: "Bad request.",
    401: "Incorrect API key provided.",
    403: "Forbidden.",
    404: "Not found.",
    429: "Rate limit reached. Please try again later.",
    500: "The server had an error while processing your request.",
    502: "Bad gateway.",
    503: "The engine is currently overloaded, please try again later.",
}

_SSE_HEADERS = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    "Connection": "keep-alive",
}
_DONE = b"data: [DONE]\n\n"
_MALFORMED = b"data: {this is not json\n\n"
_BAD_CONTENT = b'"\xff\xfe"'


def _error_response(
    status: int,
    message: str | None = None,
    *,
    retry_after: float | None = None,
    code: str | None = None,
) -> web.Response:
    err_type, default_code = _ERROR_KINDS.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None)
    )
    body = {
        "error": {
            "message": message or _DEFAULT_MESSAGES.get(status, f"HTTP {status}"),
            "type": err_type,
            "param": None,
            "code": code if code is not None else default_code,
        }
    }
    headers: dict[str, str] = {}
    if retry_after is not None:
        headers["Retry-After"] = (
            str(int(retry_after)) if float(retry_after).is_integer() else str(retry_after)
        )
    return web.json_response(body, status=status, headers=headers)


def _prompt_tokens(messages: list[Any]) -> int:
    chars = 0
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    chars += len(part["text"])
    return chars // 4 + 1


def _apply_stop(text: str, stop: Any) -> str:
    """Cut ``text`` before the earliest occurrence of any stop string, as OpenAI does."""
    stops = [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else []
    cut = min(
        (i for s in stops if isinstance(s, str) and s and (i := text.find(s)) >= 0),
        default=-1,
    )
    return text[:cut] if cut >= 0 else text


@dataclass(frozen=True)
class StatWait:
    """What :meth:`FakeOpenAIServer.wait_for_stat` saw: true if the count was reached."""

    reached: bool
    name: str
    at_least: int
    timeout: float
    stats: dict[str, int]

    def __bool__(self) -> bool:
        return self.reached

    def __repr__(self) -> str:
        seen = self.stats.get(self.name, 0)
        if self.reached:
            return f"<stats[{self.name!r}] = {seen} (>= {self.at_least})>"
        return (
            f"<stats[{self.name!r}] still {seen} (< {self.at_least}) after {self.timeout:g} s;"
            f" all counters: {self.stats}>"
        )


class FakeOpenAIServer:
    """An OpenAI-compatible server on 127.0.0.1, on its own loop in a daemon thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._models: dict[str, ModelScript] = {}
        self._failures: dict[str, int] = {}
        self._conversations: dict[str, int] = {}  # conversations started, per model
        self._authorizations: list[str] = []  # the Authorization header of each completion
        self._requests: list[dict[str, Any]] = []
        self._stats: dict[str, int] = {}
        self._reset_stats()
        self._ids = 0
        self._port: int | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._active: set[asyncio.Transport] = set()  # open chat connections
        self._stopping = False

    # ---- configuration and inspection (any thread) -------------------------------

    def set_model(self, name: str, script: ModelScript) -> None:
        """Configure (or replace) a model; its failure counter starts again."""
        with self._lock:
            self._models[name] = script
            self._failures.pop(name, None)

    def remove_model(self, name: str) -> None:
        with self._lock:
            self._models.pop(name, None)
            self._failures.pop(name, None)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every chat.completions JSON body received, in order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def stats(self) -> dict[str, int]:
        """Counters (a copy): completions (requests received), errors (HTTP error
        answers), finished (responses sent to the end), aborted (client went away
        first), cut (connections dropped by ``cut_after``)."""
        with self._lock:
            return dict(self._stats)

    @property
    def authorizations(self) -> list[str]:
        """The Authorization header of every chat completion request, in order."""
        with self._lock:
            return list(self._authorizations)

    def reset(self) -> None:
        """Forget models, requests and stats."""
        with self._lock:
            self._models.clear()
            self._failures.clear()
            self._conversations.clear()
            self._requests.clear()
            self._reset_stats()

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
            raise RuntimeError("FakeOpenAIServer is not started")
        return self._port

    @property
    def host_port(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"http://{self.host_port}/v1"

    # ---- lifecycle ---------------------------------------------------------------

    def start(self, timeout: float = 10.0) -> FakeOpenAIServer:
        if self._thread is not None:
            raise RuntimeError("FakeOpenAIServer already started")
        ready = threading.Event()
        failure: list[BaseException] = []
        self._stopping = False
        self._thread = threading.Thread(
            target=self._thread_main, args=(ready, failure), name="FakeOpenAIServer", daemon=True
        )
        self._thread.start()
        if not ready.wait(timeout):
            raise RuntimeError(f"FakeOpenAIServer did not start within {timeout:g} s")
        if failure:
            self._thread.join(timeout)
            self._thread = None
            raise RuntimeError("FakeOpenAIServer failed to start") from failure[0]
        return self

    def stop(self, timeout: float = 10.0) -> None:
        thread, loop = self._thread, self._loop
        if thread is None or loop is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout)
        except TimeoutError:
            raise RuntimeError(
                f"FakeOpenAIServer did not shut down within {timeout:g} s: "
                f"{len(self._active)} connections still open, counters {self.stats}"
            ) from None
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
            self._thread = None
            self._port = None
        if thread.is_alive():
            raise RuntimeError(f"FakeOpenAIServer's thread still runs {timeout:g} s after stop")

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _thread_main(self, ready: threading.Event, failure: list[BaseException]) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        try:
            try:
                loop.run_until_complete(self._startup())
            except BaseException as exc:
                failure.append(exc)
                return
            finally:
                ready.set()
            loop.run_forever()
        finally:
            try:
                pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
                for task in pending:
                    task.cancel()
                if pending:
                    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.run_until_complete(loop.shutdown_default_executor())
            finally:
                asyncio.set_event_loop(None)
                loop.close()
                self._loop = None

    async def _startup(self) -> None:
        app = web.Application()
        app.router.add_get("/v1/models", self._handle_models)
        app.router.add_post("/v1/chat/completions", self._handle_chat)
        # Not OpenAI: lets a benchmark read the counters of a server in another process.
        app.router.add_get("/_stats", self._handle_stats)
        # handler_cancellation: a client hanging up cancels its handler (e.g. a stall).
        runner = web.AppRunner(
            app, access_log=None, handler_cancellation=True, shutdown_timeout=2.0
        )
        await runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", 0))
            site = web.SockSite(runner, sock)
            await site.start()  # listening once this returns
        except BaseException:
            sock.close()
            await runner.cleanup()
            raise
        self._runner = runner
        self._port = sock.getsockname()[1]

    async def _shutdown(self) -> None:
        self._stopping = True
        # Hang up on open streams (stalled or slow): their handlers get cancelled the
        # same way as when a client disconnects.
        for transport in list(self._active):
            transport.abort()
        for _ in range(3):
            await asyncio.sleep(0)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # ---- bookkeeping -------------------------------------------------------------

    def _reset_stats(self) -> None:
        self._stats = {"completions": 0, "errors": 0, "finished": 0, "aborted": 0, "cut": 0}

    def _bump(self, name: str) -> None:
        with self._changed:
            self._stats[name] = self._stats.get(name, 0) + 1
            self._changed.notify_all()

    def _next_id(self) -> str:
        with self._lock:
            self._ids += 1
            return f"chatcmpl-fake{self._ids}"

    # ---- handlers ----------------------------------------------------------------

    async def _handle_stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats)

    async def _handle_models(self, request: web.Request) -> web.Response:
        with self._lock:
            names = list(self._models)
        data = [{"id": n, "object": "model", "created": 0, "owned_by": "fake"} for n in names]
        return web.json_response({"object": "list", "data": data})

    async def _handle_chat(self, request: web.Request) -> web.StreamResponse:
        with self._lock:
            self._authorizations.append(request.headers.get("Authorization", ""))
        try:
            body = await request.json()
        except ValueError:
            self._bump("errors")
            return _error_response(400, "We could not parse the JSON body of your request.")
        if not isinstance(body, dict):
            self._bump("errors")
            return _error_response(400, "The request body must be a JSON object.")

        model = body.get("model")
        name = model if isinstance(model, str) else ""
        messages = body.get("messages")
        with self._changed:
            self._requests.append(body)
            self._stats["completions"] += 1
            script = self._models.get(name)
            failing = False
            if script is not None and script.fail_status is not None:
                failed = self._failures.get(name, 0)
                if script.fail_times is None or failed < script.fail_times:
                    self._failures[name] = failed + 1
                    failing = True
            self._changed.notify_all()

        if script is None:
            self._bump("errors")
            return _error_response(
                404, f"The model `{model}` does not exist or you do not have access to it."
            )
        if failing:
            self._bump("errors")
            assert script.fail_status is not None
            return _error_response(
                script.fail_status, script.fail_message, retry_after=script.retry_after
            )
        if not isinstance(messages, list):
            self._bump("errors")
            return _error_response(400, "'messages' is a required property")

        step = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
        replies = script.replies
        if script.runs:
            with self._lock:
                if step == 0:
                    self._conversations[name] = self._conversations.get(name, -1) + 1
                conversation = self._conversations.get(name, 0)
            replies = script.runs[conversation % len(script.runs)]
        if step < len(replies):
            reply = replies[step]
        elif script.cycle and replies:
            reply = replies[step % len(replies)]
        else:
            self._bump("errors")
            return _error_response(
                400,
                f"Fake model script for `{name}` is exhausted: step {step} requested, "
                f"{len(replies)} replies scripted.",
                code="script_exhausted",
            )

        finish_reason = "stop"
        if script.honor_stop:
            reply = _apply_stop(reply, body.get("stop"))
        tokens = script.tokenizer(reply)
        limit = body.get("max_completion_tokens", body.get("max_tokens"))
        honoured = script.honor_max_tokens and isinstance(limit, int)
        if honoured and not isinstance(limit, bool) and len(tokens) > limit:
            tokens = tokens[: max(limit, 0)]
            finish_reason = "length"

        prompt_tokens = _prompt_tokens(messages)
        transport = request.transport
        if transport is not None:
            self._active.add(transport)
        try:
            if body.get("stream"):
                options = body.get("stream_options")
                include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
                return await self._stream(
                    request, script, name, tokens, finish_reason, prompt_tokens, include_usage
                )
            return await self._complete(request, script, name, tokens, finish_reason, prompt_tokens)
        finally:
            if transport is not None:
                self._active.discard(transport)

    def _abort(self, request: web.Request) -> None:
        if request.transport is not None:
            request.transport.abort()

    async def _complete(
        self,
        request: web.Request,
        script: ModelScript,
        model: str,
        tokens: list[str],
        finish_reason: str,
        prompt_tokens: int,
    ) -> web.StreamResponse:
        """A non-streaming answer: wait as long as generating would take, then send."""
        try:
            wait = script.delay_first
            if script.rate:
                wait += len(tokens) / script.rate
            if wait > 0:
                await asyncio.sleep(wait)
            if script.stall_after is not None:
                await asyncio.Future()  # until the client or the server hangs up
            if script.cut_after is not None:
                self._abort(request)
                self._bump("cut")
                return web.Response()  # never reaches the wire
        except asyncio.CancelledError:
            if not self._stopping:
                self._bump("aborted")
            raise
        payload = {
            "id": self._next_id(),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "".join(tokens), "refusal": None},
                    "logprobs": None,
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": len(tokens),
                "total_tokens": prompt_tokens + len(tokens),
            },
        }
        self._bump("finished")
        return web.json_response(payload)

    async def _stream(
        self,
        request: web.Request,
        script: ModelScript,
        model: str,
        tokens: list[str],
        finish_reason: str,
        prompt_tokens: int,
        include_usage: bool,
    ) -> web.StreamResponse:
        loop = asyncio.get_running_loop()
        completion_id = self._next_id()
        created = int(time.time())
        usage_head = (
            f'data: {{"id":{json.dumps(completion_id)},"object":"chat.completion.chunk",'
            f'"created":{created},"model":{json.dumps(model)},'
        ).encode()
        head = usage_head + b'"choices":[{"index":0,'
        first_prefix = head + b'"delta":{"role":"assistant","content":'
        prefix = head + b'"delta":{"content":'
        suffix = b'},"finish_reason":null}]}\n\n'
        finish = (
            head + (f'"delta":{{}},"finish_reason":{json.dumps(finish_reason)}}}]}}\n\n').encode()
        )
        encoded: dict[str, bytes] = {}

        response = web.StreamResponse(status=200, headers=_SSE_HEADERS)
        try:
            await response.prepare(request)
            if script.delay_first > 0:
                await asyncio.sleep(script.delay_first)
            interval = 1.0 / script.rate if script.rate else 0.0
            start = loop.time()
            count = len(tokens)
            for sent in range(count + 1):
                # The fault hooks fire after `sent` content chunks (0 = before any).
                if sent == script.cut_after:
                    self._abort(request)
                    self._bump("cut")
                    return response
                if sent == script.stall_after:
                    await asyncio.Future()  # until the client or the server hangs up
                if sent == script.malformed_after:
                    await response.write(_MALFORMED)
                if sent == script.bad_bytes_after:
                    await response.write(prefix + _BAD_CONTENT + suffix)
                if sent == count:
                    break
                if interval:
                    # Paced against the start time, so sleep overshoot never accumulates.
                    delay = start + sent * interval - loop.time()
                    if delay > 0:
                        await asyncio.sleep(delay)
                elif sent & 63 == 63:
                    await asyncio.sleep(0)  # unthrottled: let other streams have a turn
                token = tokens[sent]
                content = encoded.get(token)
                if content is None:
                    content = encoded[token] = json.dumps(token, ensure_ascii=False).encode()
                await response.write((first_prefix if sent == 0 else prefix) + content + suffix)
            tail = finish
            if include_usage:
                usage = {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": count,
                    "total_tokens": prompt_tokens + count,
                }
                tail += usage_head + f'"choices":[],"usage":{json.dumps(usage)}}}\n\n'.encode()
            await response.write(tail + _DONE)
            await response.write_eof()
        except ConnectionResetError:
            if not self._stopping:
                self._bump("aborted")
            return response
        except asyncio.CancelledError:
            if not self._stopping:
                self._bump("aborted")
            raise
        self._bump("finished")
        return response


@pytest.fixture
def fake_server() -> Iterator[FakeOpenAIServer]:
    """A started :class:`FakeOpenAIServer`, stopped after the test."""
    server = FakeOpenAIServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
