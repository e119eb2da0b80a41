"""What a model backend is (a protocol and its value types), where the engine can import it.

Backends implement it (backends/), the engine consumes it (core/running/engine.py); living in core,
it keeps every dependency pointing one way: backends → core, never core → backends.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sandbox_app.core.scenarios.lane_settings import SETTINGS, LaneSettings

# A chat message as the API takes it: role and content, and with native tool calling an
# assistant's "tool_calls" or a tool result's "tool_call_id" (core/running/native_tools.py).
# An assistant message may also hold PROVIDER: what the backend that wrote the reply said
# must come back with it in a tool-calling turn (Delta.carry: signed thinking blocks,
# reasoning items, thought signatures, reasoning_content). It is the backend's own business:
# each backend reads back what it put there and never sends the key itself. The engine stamps
# it with who wrote it, and a fork on another model drops it (core/running/carried.py).
Message = dict[str, Any]
PROVIDER = "provider"
ToolSchema = dict[str, Any]  # one entry of the API's "tools": {"type": "function", …}


@dataclass(frozen=True)
class ToolCallPiece:
    """One streamed fragment of a native tool call (``delta.tool_calls[i]``): only ``index`` is
    always there; ``id`` and ``name`` come once, ``arguments`` in JSON fragments to join."""

    index: int
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int  # servers count the reasoning tokens in here too
    reasoning_tokens: int | None = None  # usage.completion_tokens_details, when reported
    # A count the server sent out of range or not a whole number: clamped, and shown as an
    # estimate (~), never as the server's word.
    doubtful: bool = False
    # Prompt tokens read from / written to the provider's prompt cache, when it says.
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None


@dataclass(frozen=True)
class Delta:
    """One piece of a streamed reply: text, reasoning, the server's usage report, the finish
    reason, or a notice for the trace."""

    # The reply's content: may still hold inline <think> tags (core/react_format/thinking.py).
    text: str = ""
    usage: Usage | None = None
    notice: str = ""  # e.g. "Rate limited (429): retrying in 2 s (1 of 3)"
    chunks: int = 1  # how many of the server's chunks the text came in (merged when relayed)
    # The model's thinking, from a reasoning field (reasoning_content / reasoning).
    reasoning: str = ""
    finish_reason: str | None = None  # "stop", "length", … as the server reported it
    # When the request went out (time.perf_counter()), for a time to first token that does
    # not include the client's own start-up; sent once, before any text.
    sent_at: float | None = None
    tool_calls: tuple[ToolCallPiece, ...] = ()  # native tool calling only
    # The request as it went out (its JSON body, never a key), sent once with ``sent_at``:
    # what the request inspector shows.
    request: dict[str, Any] | None = None
    # What must go back with this reply when the conversation continues in a tool-calling
    # turn (see PROVIDER): merged into the assistant message the engine sends back. Opaque
    # to the engine; the backend that yields it reads it back.
    carry: dict[str, Any] | None = None
    # Seconds the request waited before it was sent: for a place among its server's requests
    # or for the wait a 429 asked (backends/transport/throttle.py). Queue time, not the
    # model's: kept apart from the run's working time.
    queued_s: float = 0.0

    @property
    def plain(self) -> bool:
        """Only text or only reasoning: a piece the relay may merge with its neighbours."""
        return (
            self.usage is None
            and not self.notice
            and self.finish_reason is None
            and self.sent_at is None
            and self.request is None
            and not self.tool_calls
            and self.carry is None
            and not self.queued_s
            and not (self.text and self.reasoning)
        )


# One item a backend carries back (a signed thinking block, a reasoning item, a thought
# signature), as JSON: a real one is a few KB; a server that sent 20 MB would have it sent
# back with every later request (20, then 40 MB) and kept in every export.
MAX_CARRIED = 256 * 1024


def carried_notice(what: str, size: int) -> str:
    """The one line for a carried item over :data:`MAX_CARRIED`, left out."""
    return (
        f"The server's {what} is {size:,} bytes, over {MAX_CARRIED // 1024} KB: not kept, "
        "the next request goes without it."
    )


def bounded_carry(carry: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``carry`` (Delta.carry: a kind's key → its items, a list or an object of them, or one
    value) without any item over :data:`MAX_CARRIED` bytes of JSON, and a notice for each
    left out."""
    notices: list[str] = []

    def fits(item: Any, what: str) -> bool:
        size = len(json.dumps(item, ensure_ascii=False, default=str).encode())
        if size > MAX_CARRIED:
            notices.append(carried_notice(what, size))
        return size <= MAX_CARRIED

    kept: dict[str, Any] = {}
    for key, value in carry.items():
        what = f"reasoning item ({key})"
        if isinstance(value, list):
            kept[key] = [item for item in value if fits(item, what)]
        elif isinstance(value, dict):
            kept[key] = {name: item for name, item in value.items() if fits(item, what)}
        elif fits(value, what):
            kept[key] = value
    return kept, notices


@dataclass(frozen=True)
class StreamParams:
    model: str = ""
    temperature: float | None = 0.0
    max_tokens: int = 512
    stop: tuple[str, ...] = ()
    # "minimal", "low", "medium", "high"…; None sends nothing (the server's default).
    reasoning_effort: str | None = None
    # Native tool calling: the tools the model may call, sent as the API's "tools"; empty
    # for a ReAct text prompt.
    tools: tuple[ToolSchema, ...] = ()
    # The other request settings the lane set (core/scenarios: ``Setting.sent`` or a
    # ``request_key``), by setting name: each kind sends them where its request fields say
    # (backends/catalogue/request_fields.py), as it sends the three above.
    settings: tuple[tuple[str, Any], ...] = ()
    # Body fields a caller adds as they are, for a kind it knows takes them (the judge's
    # response_format, OpenAI-compatible only); never a lane setting.
    extra: tuple[tuple[str, Any], ...] = ()
    # Settings only some backend kinds take (core/scenarios/kind_settings.py); None: the
    # kind's or server's default. Each kind reads the ones it declares and ignores the rest.
    context_window: int | None = None  # tokens the server should hold (Ollama's num_ctx)
    thinking_budget: int | None = None  # tokens the model may think (Anthropic, Gemini)
    think: str | None = None  # "off", "on", "low", "medium", "high" (Ollama's think)
    keep_alive: str | None = None  # how long the server keeps the model loaded ("5m", "-1")
    prompt_cache: bool = False  # mark the system prompt for the provider's prompt cache

    def sent(self) -> dict[str, Any]:
        """Every request setting this request carries, by its setting's name: the lane's, and
        the engine's own temperature, max tokens (Auto worked out, asked again with more) and
        reasoning effort over them. None: not sent."""
        typed = {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "reasoning_effort": self.reasoning_effort,
        }
        return {k: v for k, v in {**dict(self.settings), **typed}.items() if v is not None}


class BackendError(Exception):
    """A failure the user can act on, in one line ("Cannot connect to … — is Ollama running?")."""


class Backend(Protocol):
    label: str

    def stream(
        self, messages: Sequence[Message], params: StreamParams
    ) -> AsyncGenerator[Delta, None]:
        """Stream one reply. Raises :class:`BackendError`; text already yielded stays valid."""
        ...

    async def list_models(self) -> list[str]: ...

    async def aclose(self) -> None: ...


def stream_params(
    settings: LaneSettings, model: str, max_tokens: int, **given: Any
) -> StreamParams:
    """A request with these settings: the one mapping of lane settings to ``StreamParams``
    (the engine's, the judge's). ``max_tokens``: the limit worked out (Auto is the caller's);
    ``given``: the caller's own fields (stop, tools, extra)."""
    request = tuple(
        (name, settings[name])
        for name, setting in SETTINGS.items()
        if (setting.sent or setting.request_key) and settings[name] is not None
    )
    return StreamParams(
        model=model,
        temperature=settings.temperature,
        max_tokens=max_tokens,
        reasoning_effort=settings.reasoning_effort,
        settings=request,
        context_window=settings.context_window,
        thinking_budget=settings.thinking_budget,
        think=settings.think,
        keep_alive=settings.keep_alive,
        prompt_cache=settings.prompt_cache,
        **given,
    )
