"""A small, real OpenAI-compatible HTTP server for tests and benchmarks.

The server speaks just enough of the OpenAI REST API for the ``openai`` SDK:
``GET /v1/models`` and ``POST /v1/chat/completions`` (streaming over SSE or not).
Each configured model follows a :class:`ModelScript`: canned replies chosen by how
many assistant turns the request already holds, plus knobs for pacing, HTTP
failures and broken streams (cut, malformed, invalid UTF-8, stalled).

Thinking models are reproduced on the shapes captured from real servers (tests/core/test_sse.py
quotes each capture and names its source): the reply's ``<think>…</think>`` sent raw in
``content``, or separated into ``delta.reasoning_content`` / ``delta.reasoning`` chunks the way
DeepSeek, llama.cpp, vLLM and OpenRouter send them, or hidden as OpenAI's o-series do (only
``usage.completion_tokens_details.reasoning_tokens``), plus the 400s OpenAI answers to
parameters a reasoning model does not take (:data:`OPENAI_REASONING_REJECTS`).

It runs aiohttp on its own asyncio loop in a daemon thread bound to 127.0.0.1 on a
free port, so the code under test can use any event loop (``asyncio.run``, qasync…).

    with FakeOpenAIServer() as server:
        server.set_model("m1", ModelScript(replies=["Final Answer: 2"]))
        client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest
from aiohttp import web

from tests import fake_passback
from tests.fake_passback import PassbackMode
from tests.fake_tool_calls import (
    ToolCallStyle,
    call_deltas,
    finish_choice,
    has_calls,
    split_calls,
    unanswered_calls,
)
from tests.threaded_app import ThreadedApp

__all__ = [
    "OPENAI_REASONING_REJECTS",
    "FakeOpenAIServer",
    "ModelScript",
    "UnsupportedParam",
    "fake_server",
    "split_every",
    "tokenize",
]

# Punctuation the ReAct format leans on is a token of its own; everything else is
# split into word-ish pieces that carry their leading whitespace, like BPE tokens do.
# Every position matches one of the alternatives, so the pieces rebuild the text.
_PUNCT = r"[\[\]\(\),:]"
_TOKEN_RE = re.compile(rf"\s*{_PUNCT}|\s*\S+?(?=\s|$|{_PUNCT})|\s+")


def tokenize(text: str) -> list[str]:
    """Split ``text`` into small deterministic tokens; ``"".join(tokenize(t)) == t``."""
    return _TOKEN_RE.findall(text)


def split_every(n: int) -> Callable[[str], list[str]]:
    """A tokenizer that cuts text into ``n``-character pieces (the last may be shorter).

    For awkward chunk boundaries: ``split_every(4)`` streams ``"<think>hi"`` as
    ``"<thi"``, ``"nk>h"``, ``"i"``, so a client has to reassemble the tag.
    """
    if n < 1:
        raise ValueError(f"split_every needs n >= 1, not {n}")

    def split(text: str) -> list[str]:
        return [text[i : i + n] for i in range(0, len(text), n)]

    return split


@dataclass(frozen=True)
class UnsupportedParam:
    """A request parameter a model answers with HTTP 400, in OpenAI's error shape."""

    param: str  # the body key, also the error's ``param``
    message: str  # ``{value}`` in it becomes the value sent (0.0 shown as 0, like OpenAI)
    code: str = "unsupported_parameter"
    # Values that pass anyway (temperature: only the default 1). A null value always passes.
    allowed: tuple[Any, ...] = ()

    def rejects(self, body: dict[str, Any]) -> bool:
        value = body.get(self.param)
        if value is None:
            return False
        return not any(
            isinstance(value, bool) == isinstance(ok, bool) and value == ok for ok in self.allowed
        )

    def message_for(self, body: dict[str, Any]) -> str:
        return self.message.replace("{value}", _format_value(body.get(self.param)))


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return f"'{value}'"
    return json.dumps(value)


# What OpenAI's o-series and gpt-5 answer on Chat Completions, verbatim as reported in
# https://github.com/microsoft/vscode-copilot-release/issues/9954 (max_tokens),
# https://github.com/huggingface/smolagents/pull/1662 (stop) and
# https://github.com/owndev/Open-WebUI-Functions/issues/98 (temperature), checked in this
# order: the first one the request has is reported.
OPENAI_REASONING_REJECTS: tuple[UnsupportedParam, ...] = (
    UnsupportedParam(
        "max_tokens",
        "Unsupported parameter: 'max_tokens' is not supported with this model."
        " Use 'max_completion_tokens' instead.",
    ),
    UnsupportedParam("stop", "Unsupported parameter: 'stop' is not supported with this model."),
    UnsupportedParam(
        "temperature",
        "Unsupported value: 'temperature' does not support {value} with this model."
        " Only the default (1) value is supported.",
        code="unsupported_value",
        allowed=(1,),
    ),
)

ChunkStyle = Literal["deepseek", "sparse", "openrouter"]


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
    # Replies per question (the conversation's first user message), for runs that arrive in
    # any order (a test set run concurrently); a question not in it uses the above.
    by_question: dict[str, list[str]] | None = None
    # Replies worked out from the request's messages (a model whose answers depend on the
    # prompt's words: tests/fake_optimizer.py); None: the above. Called for each request.
    responder: Callable[[list[Any]], list[str]] | None = None
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
    # Cuts text into tokens (= SSE chunks); see ``tokenize`` and ``split_every``.
    tokenizer: Callable[[str], list[str]] = tokenize

    # ---- thinking models -------------------------------------------------------------
    # Where the reply's thinking goes. The thinking is the text before the first
    # ``</think>`` (or ``</thinking>``), after an optional leading ``<think>``/``<thinking>``;
    # a reply that opens a tag and never closes it is all thinking, one with no tags at all
    # has none. None: everything raw in ``content``, tags and all (reasoning_format none).
    # "reasoning_content" (DeepSeek, llama.cpp, vLLM <= 0.10) or "reasoning" (vLLM >= 0.11,
    # Ollama, OpenRouter): the thinking, tags stripped, streamed in ``delta.<field>`` chunks,
    # then the rest in ``delta.content`` chunks; non-streaming, ``message.<field>``. Each part
    # is tokenized on its own, so no chunk mixes the two.
    reasoning_field: Literal["reasoning_content", "reasoning"] | None = None
    # The delta shape when ``reasoning_field`` is set; None = "deepseek" for
    # "reasoning_content", "sparse" for "reasoning".
    # "deepseek": both keys always, the idle one null: {"content":null,"reasoning_content":"x"}
    #   then {"content":"x","reasoning_content":null}; finish delta {"content":"",…:null}.
    # "sparse": only the key in use, {"reasoning_content":"x"} (llama.cpp) or
    #   {"reasoning":"x"} (vLLM), then {"content":"x"}.
    # "openrouter": role on every chunk, {"role":"assistant","content":"","reasoning":"x",
    #   "reasoning_details":[{"type":"reasoning.text","text":"x","format":"unknown",
    #   "index":0}]} then {"role":"assistant","content":"x","reasoning":null,
    #   "reasoning_details":[]}.
    chunk_style: ChunkStyle | None = None
    # OpenAI o-series: this many reasoning tokens are "generated" before the reply but never
    # sent; they count in usage (and against max_completion_tokens, first).
    hidden_reasoning_tokens: int = 0
    # When the reply has thinking (or hidden reasoning), usage carries
    # completion_tokens_details.reasoning_tokens (OpenAI, DeepSeek, OpenRouter); False for a
    # server that does not (llama.cpp). completion_tokens always counts reasoning + content.
    report_reasoning_tokens: bool = True
    # ``stop`` and ``max_tokens`` apply to the raw reply, thinking included (llama.cpp,
    # Ollama, vLLM V1). True: stop strings are only looked for after ``</think>``
    # (vLLM PR #14550); max_tokens still counts the thinking.
    stop_skips_reasoning: bool = False
    # Request parameters answered with a 400 (see OPENAI_REASONING_REJECTS), checked in
    # order; the first one present in the body is reported. Counted in stats "errors".
    reject_params: tuple[UnsupportedParam, ...] = ()

    # ---- native tool calling (tests/fake_tool_calls.py) ------------------------------
    # When the request has "tools": how a reply's <tool_call> blocks are streamed as
    # delta.tool_calls; None: a server without a tool parser (the blocks stay in content).
    tool_call_style: ToolCallStyle | None = "openai"
    # Replies to requests that carry "tools", as a model answers when given them; None:
    # ``replies`` either way.
    native_replies: list[str] | None = None
    # (status, message) for any request with "tools": a model or server that cannot call
    # them (fake_tool_calls.OLLAMA_NO_TOOLS, LLAMA_CPP_NO_JINJA, VLLM_NO_TOOL_PARSER).
    rejects_tools: tuple[int, str] | None = None
    # The streamed reply's usage object, sent as it is instead of the counted one (a server
    # that reports nonsense: negative, huge or non-numeric counts).
    usage: dict[str, Any] | None = None
    # False: a stream with no usage at all, whatever stream_options asks (llama-cpp-python's
    # server: abetlen/llama-cpp-python#1082, #1640).
    sends_usage: bool = True
    # A server that requires a reply's reasoning back in a tool-calling turn and answers 400
    # without it (tests/fake_passback.py: "deepseek", "kimi", "gemini", "openrouter"); a
    # tool-calling reply's leading <think> block streams in that server's shape.
    passback: PassbackMode | None = None
    # Hold each passback refusal until this many are held (at most 5 s), then answer them
    # together: that many runs' requests were in flight when the first 400 came (eval's
    # concurrency), none of them yet knowing what the others learn from it.
    refusals_together: int = 0
    # ---- a small context window (the context meter, core/running/context_meter.py) ---
    # A server whose context holds this many tokens (``tokenize``'s): a longer prompt is cut
    # silently, keeping only the last messages that fit, and its prompt_tokens is the window
    # itself, as Ollama reports prompt_eval_count == num_ctx when it truncated (Ollama's
    # server/prompt.go drops the oldest messages; llm/server.go reports the evaluated count).
    # The messages it kept are in FakeOpenAIServer.kept. None: no limit.
    context_length: int | None = None


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
    param: str | None = None,
) -> web.Response:
    err_type, default_code = _ERROR_KINDS.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None)
    )
    body = {
        "error": {
            "message": message or _DEFAULT_MESSAGES.get(status, f"HTTP {status}"),
            "type": err_type,
            "param": param,
            "code": code if code is not None else default_code,
        }
    }
    headers: dict[str, str] = {}
    if retry_after is not None:
        headers["Retry-After"] = (
            str(int(retry_after)) if float(retry_after).is_integer() else str(retry_after)
        )
    return web.json_response(body, status=status, headers=headers)


def _message_tokens(message: Any) -> int:
    content = message.get("content") if isinstance(message, dict) else None
    return len(tokenize(content)) if isinstance(content, str) else 0


def _cut_to_context(messages: list[Any], limit: int) -> list[Any]:
    """The last messages whose tokens fit in ``limit`` (ModelScript.context_length)."""
    kept: list[Any] = []
    room = limit
    for message in reversed(messages):
        room -= _message_tokens(message)
        if room < 0:
            break
        kept.insert(0, message)
    return kept


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


_OPEN_THINK_RE = re.compile(r"\s*<(think|thinking)>")
_CLOSE_TAGS = ("</think>", "</thinking>")


def _find_thinking(text: str) -> tuple[int, int, int] | None:
    """Where the thinking of a raw reply is: ``(start, end, after)`` with the thinking
    ``text[start:end]`` (tags excluded) and the answer ``text[after:]``; None if it has none.

    Opened by a leading ``<think>``/``<thinking>``: thinking up to the matching close tag,
    or to the end if it never closes (vLLM's deepseek_r1 parser). Not opened (a template
    that pre-opens the tag): thinking up to the first ``</think>``/``</thinking>``, if any.
    """
    opened = _OPEN_THINK_RE.match(text)
    if opened is not None:
        start = opened.end()
        close = f"</{opened.group(1)}>"
        end = text.find(close, start)
        if end < 0:
            return start, len(text), len(text)
        return start, end, end + len(close)
    closes = [(i, tag) for tag in _CLOSE_TAGS if (i := text.find(tag)) >= 0]
    if not closes:
        return None
    end, tag = min(closes)
    return 0, end, end + len(tag)


@dataclass(slots=True)
class _Plan:
    """What to send for one request, worked out before the first byte."""

    tokens: list[str]  # streamed chunks: the first ``reasoning_chunks`` in the reasoning field
    reasoning_chunks: int
    finish_reason: str
    completion_tokens: int  # hidden + streamed tokens
    reasoning_tokens: int | None  # for usage.completion_tokens_details; None = no details


def _plan_reply(script: ModelScript, reply: str, stop: Any, limit: Any) -> _Plan:
    """Apply stop, split the thinking off, tokenize, apply the token limit.

    Stop cuts the raw reply (unless ``stop_skips_reasoning``, then only the answer after the
    thinking); the limit counts hidden reasoning, then thinking, then answer tokens.
    """
    if stop is not None:
        span = _find_thinking(reply) if script.stop_skips_reasoning else None
        if span is not None:
            reply = reply[: span[2]] + _apply_stop(reply[span[2] :], stop)
        else:
            reply = _apply_stop(reply, stop)
    span = _find_thinking(reply)
    if span is not None and script.reasoning_field is not None:
        start, end, after = span
        thinking = script.tokenizer(reply[start:end])
        tokens = thinking + script.tokenizer(reply[after:])
        reasoning_chunks = thinking_tokens = len(thinking)
    else:
        tokens = script.tokenizer(reply)
        reasoning_chunks = thinking_tokens = 0
        if span is not None:  # raw: the tokens that start before the end of the thinking
            position = 0
            for token in tokens:
                if position >= span[2]:
                    break
                position += len(token)
                thinking_tokens += 1
    hidden = max(script.hidden_reasoning_tokens, 0)
    finish_reason = "stop"
    if isinstance(limit, int) and not isinstance(limit, bool) and hidden + len(tokens) > limit:
        limit = max(limit, 0)
        hidden = min(hidden, limit)
        tokens = tokens[: limit - hidden]
        reasoning_chunks = min(reasoning_chunks, len(tokens))
        thinking_tokens = min(thinking_tokens, len(tokens))
        finish_reason = "length"
    has_thinking = span is not None or script.hidden_reasoning_tokens > 0
    return _Plan(
        tokens=tokens,
        reasoning_chunks=reasoning_chunks,
        finish_reason=finish_reason,
        completion_tokens=hidden + len(tokens),
        reasoning_tokens=(
            hidden + thinking_tokens if has_thinking and script.report_reasoning_tokens else None
        ),
    )


def _usage(prompt_tokens: int, plan: _Plan) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": plan.completion_tokens,
        "total_tokens": prompt_tokens + plan.completion_tokens,
    }
    if plan.reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": plan.reasoning_tokens}
    return usage


def _chunk_style(script: ModelScript) -> ChunkStyle:
    if script.chunk_style is not None:
        return script.chunk_style
    return "deepseek" if script.reasoning_field == "reasoning_content" else "sparse"


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
        self._held: dict[str, list[Any]] = {}  # refusals held, per model (refusals_together)
        self._authorizations: list[str] = []  # the Authorization header of each completion
        self._requests: list[dict[str, Any]] = []
        self._stats: dict[str, int] = {}
        self._reset_stats()
        self._ids = 0
        # DeepSeek and Kimi passback: the reasoning each tool call's reply streamed, by call id
        # (tests/fake_passback.py takes back only these bytes).
        self._reasoning_sent: dict[str, str] = {}
        # What a server with a small context kept of each prompt (ModelScript.context_length).
        self.kept: list[list[Any]] = []
        # GET /v1/models answers these bytes as JSON instead of the models set (a hostile list).
        self.models_body: bytes | None = None
        self._port: int | None = None
        # handler_cancellation: a client hanging up cancels its handler (e.g. a stall).
        self._server = ThreadedApp(
            "FakeOpenAIServer",
            self._app,
            before_stop=self._hang_up,
            handler_cancellation=True,
            shutdown_timeout=2.0,
        )
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
        self._stopping = False
        self._port = self._server.start(timeout)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        try:
            self._server.stop(timeout)
        except TimeoutError:
            raise RuntimeError(
                f"FakeOpenAIServer did not shut down within {timeout:g} s: "
                f"{len(self._active)} connections still open, counters {self.stats}"
            ) from None
        finally:
            self._port = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/v1/models", self._handle_models)
        app.router.add_post("/v1/chat/completions", self._handle_chat)
        # Not OpenAI: lets a benchmark read the counters of a server in another process.
        app.router.add_get("/_stats", self._handle_stats)
        self._add_routes(app)
        return app

    def _add_routes(self, app: web.Application) -> None:
        """A subclass's own endpoints (tests/fake_local_servers.py: each local server's)."""

    async def _hang_up(self) -> None:
        self._stopping = True
        # Hang up on open streams (stalled or slow): their handlers get cancelled the
        # same way as when a client disconnects.
        for transport in list(self._active):
            transport.abort()
        for _ in range(3):
            await asyncio.sleep(0)

    # ---- bookkeeping -------------------------------------------------------------

    def _reset_stats(self) -> None:
        self._stats = {"completions": 0, "errors": 0, "finished": 0, "aborted": 0, "cut": 0}

    def _bump(self, name: str) -> None:
        with self._changed:
            self._stats[name] = self._stats.get(name, 0) + 1
            self._changed.notify_all()

    async def _hold_together(self, name: str, together: int) -> None:
        """Wait (at most 5 s) until ``together`` refusals of ``name`` are held."""
        if together <= 1:
            return
        held = self._held.setdefault(name, [0, asyncio.Event()])
        held[0] += 1
        if held[0] >= together:
            held[1].set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(held[1].wait(), 5.0)

    def _next_id(self) -> str:
        with self._lock:
            self._ids += 1
            return f"chatcmpl-fake{self._ids}"

    # ---- handlers ----------------------------------------------------------------

    async def _handle_stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats)

    async def _handle_models(self, request: web.Request) -> web.Response:
        if self.models_body is not None:
            return web.Response(body=self.models_body, content_type="application/json")
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
        for rule in script.reject_params:
            if rule.rejects(body):
                self._bump("errors")
                return _error_response(
                    400, rule.message_for(body), code=rule.code, param=rule.param
                )
        if body.get("tools") and script.rejects_tools is not None:
            self._bump("errors")
            return _error_response(*script.rejects_tools)
        unanswered = unanswered_calls(messages)
        if unanswered:
            self._bump("errors")
            return _error_response(
                400,
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(unanswered)}",
                param="messages",
            )

        refused = None
        if script.passback:
            with self._lock:
                sent = dict(self._reasoning_sent)
            refused = fake_passback.refusal(script.passback, messages, sent)
        if refused is not None:
            self._bump("errors")
            await self._hold_together(name, script.refusals_together)
            return refused

        step = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
        replies = script.replies
        if body.get("tools") and script.native_replies is not None:
            replies = script.native_replies
        if script.by_question is not None:
            users = (m for m in messages if isinstance(m, dict) and m.get("role") == "user")
            asked = next((m.get("content") for m in users), None)
            replies = script.by_question.get(str(asked), replies)
        if script.responder is not None:
            replies = script.responder(messages)
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

        if body.get("tools") and script.tool_call_style and has_calls(reply) and body.get("stream"):
            return await self._stream_calls(request, script, name, reply, messages)
        limit = body.get("max_completion_tokens")
        if limit is None:
            limit = body.get("max_tokens")
        plan = _plan_reply(
            script,
            reply,
            body.get("stop") if script.honor_stop else None,
            limit if script.honor_max_tokens else None,
        )

        prompt_tokens = _prompt_tokens(messages)
        if script.context_length is not None:  # a small context: cut silently, as Ollama does
            kept = _cut_to_context(messages, script.context_length)
            with self._lock:
                self.kept.append(kept)
            counted = sum(_message_tokens(m) for m in messages)
            prompt_tokens = script.context_length if len(kept) < len(messages) else counted
        transport = request.transport
        if transport is not None:
            self._active.add(transport)
        try:
            if body.get("stream"):
                options = body.get("stream_options")
                include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
                return await self._stream(request, script, name, plan, prompt_tokens, include_usage)
            return await self._complete(request, script, name, plan, prompt_tokens)
        finally:
            if transport is not None:
                self._active.discard(transport)

    async def _stream_calls(
        self,
        request: web.Request,
        script: ModelScript,
        model: str,
        reply: str,
        messages: list[Any],
    ) -> web.StreamResponse:
        """A reply with tool calls, streamed in ``script.tool_call_style``'s shape: the text
        before the first call as content, then the calls, finish "tool_calls", usage."""
        assert script.tool_call_style is not None
        content, calls = split_calls(reply)
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        span = _find_thinking(content) if script.passback else None
        thinking: list[str] = []
        if span is not None and script.passback is not None:
            thinking = script.tokenizer(content[span[0] : span[1]])
            deltas += fake_passback.thinking_deltas(script.passback, thinking)
            content = content[span[2] :]
        deltas += [{"content": token} for token in script.tokenizer(content)]
        with self._lock:
            self._ids += 1
            first_id = self._ids * 16
        pieces = call_deltas(script.tool_call_style, calls, script.tokenizer, first_id)
        if script.passback is not None:
            pieces = fake_passback.sign_calls(script.passback, pieces)
            with self._lock:
                self._reasoning_sent.update(
                    (p["id"], "".join(thinking)) for d in pieces for p in d.get("tool_calls", ())
                    if "id" in p
                )  # fmt: skip
        deltas += pieces
        completion_id = self._next_id()
        head = {"id": completion_id, "object": "chat.completion.chunk", "model": model}
        interval = 1.0 / script.rate if script.rate else 0.0
        response = web.StreamResponse(status=200, headers=_SSE_HEADERS)
        try:
            await response.prepare(request)
            for delta in deltas:
                if interval:
                    await asyncio.sleep(interval)
                chunk = head | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
                await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
            tokens = len(deltas) - 1
            usage = {
                "prompt_tokens": _prompt_tokens(messages),
                "completion_tokens": tokens,
                "total_tokens": _prompt_tokens(messages) + tokens,
            }
            tail = [
                head | {"choices": [finish_choice(script.tool_call_style)]},
                head | {"choices": [], "usage": usage},
            ]
            for chunk in tail:
                await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
            await response.write(_DONE)
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

    def _abort(self, request: web.Request) -> None:
        if request.transport is not None:
            request.transport.abort()

    async def _complete(
        self,
        request: web.Request,
        script: ModelScript,
        model: str,
        plan: _Plan,
        prompt_tokens: int,
    ) -> web.StreamResponse:
        """A non-streaming answer: wait as long as generating would take, then send."""
        tokens = plan.tokens
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
        message: dict[str, Any] = {"role": "assistant", "content": "".join(tokens), "refusal": None}
        field_name = script.reasoning_field
        if field_name is not None:
            reasoning = "".join(tokens[: plan.reasoning_chunks]) or None
            message["content"] = "".join(tokens[plan.reasoning_chunks :])
            if reasoning is not None and not message["content"]:
                message["content"] = None  # all thinking, no answer (vLLM: content null)
            message[field_name] = reasoning
            if _chunk_style(script) == "openrouter":
                message["reasoning_details"] = (
                    [{"type": "reasoning.text", "text": reasoning, "format": "unknown", "index": 0}]
                    if reasoning is not None
                    else []
                )
        payload = {
            "id": self._next_id(),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": plan.finish_reason,
                }
            ],
            "usage": _usage(prompt_tokens, plan),
        }
        self._bump("finished")
        return web.json_response(payload)

    async def _stream(
        self,
        request: web.Request,
        script: ModelScript,
        model: str,
        plan: _Plan,
        prompt_tokens: int,
        include_usage: bool,
    ) -> web.StreamResponse:
        loop = asyncio.get_running_loop()
        completion_id = self._next_id()
        created = int(time.time())
        tokens = plan.tokens
        usage_head = (
            f'data: {{"id":{json.dumps(completion_id)},"object":"chat.completion.chunk",'
            f'"created":{created},"model":{json.dumps(model)},'
        ).encode()
        head = usage_head + b'"choices":[{"index":0,'
        # A chunk is prefix + token + suffix. Reasoning chunks (the first
        # ``plan.reasoning_chunks``) have their own r_* parts; with ``twice`` (OpenRouter,
        # whose text is in ``reasoning`` and again in ``reasoning_details``) a reasoning
        # chunk is r_prefix + token + twice + token + r_suffix.
        first_prefix = head + b'"delta":{"role":"assistant","content":'
        prefix = head + b'"delta":{"content":'
        suffix = r_suffix = b'},"finish_reason":null}]}\n\n'
        end_delta = b"{}"
        r_first_prefix = r_prefix = b""
        twice: bytes | None = None
        field_name = script.reasoning_field
        if field_name is not None:
            key = json.dumps(field_name).encode()
            style = _chunk_style(script)
            if style == "deepseek":  # both keys, the idle one null
                r_first_prefix = head + b'"delta":{"role":"assistant","content":null,' + key + b":"
                r_prefix = head + b'"delta":{"content":null,' + key + b":"
                suffix = b"," + key + b':null},"finish_reason":null}]}\n\n'
                end_delta = b'{"content":"",' + key + b":null}"
            elif style == "sparse":  # only the key in use
                r_first_prefix = head + b'"delta":{"role":"assistant",' + key + b":"
                r_prefix = head + b'"delta":{' + key + b":"
            else:  # openrouter: the role again on every chunk
                r_first_prefix = r_prefix = (
                    head + b'"delta":{"role":"assistant","content":"",' + key + b":"
                )
                twice = b',"reasoning_details":[{"type":"reasoning.text","text":'
                r_suffix = b',"format":"unknown","index":0}]},"finish_reason":null}]}\n\n'
                prefix = first_prefix
                suffix = b"," + key + b':null,"reasoning_details":[]},"finish_reason":null}]}\n\n'
        reasoning_chunks = plan.reasoning_chunks
        finish = head + (
            b'"delta":'
            + end_delta
            + f',"finish_reason":{json.dumps(plan.finish_reason)}}}]}}\n\n'.encode()
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
                    # A lone surrogate goes out as JSON's escape of it, as a real server's
                    # encoder writes one ("\ud800"): legal JSON, no UTF-8 character.
                    quoted = json.dumps(token, ensure_ascii=False)
                    content = encoded[token] = quoted.encode("utf-8", "backslashreplace")
                if sent >= reasoning_chunks:
                    await response.write((first_prefix if sent == 0 else prefix) + content + suffix)
                elif twice is None:
                    await response.write(
                        (r_first_prefix if sent == 0 else r_prefix) + content + r_suffix
                    )
                else:
                    await response.write(r_prefix + content + twice + content + r_suffix)
            tail = finish
            if include_usage and script.sends_usage:
                usage = json.dumps(script.usage or _usage(prompt_tokens, plan))
                tail += usage_head + f'"choices":[],"usage":{usage}}}\n\n'.encode()
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
