"""Reading one model reply as it streams: thinking apart, content guarded, metrics measured.

A backend's deltas carry content (which may hold inline ``<think>`` tags), reasoning from a
field of its own, usage, the finish reason and when the request was sent. The reader makes
them the run's events: ``ReasoningDelta`` for thinking (never parsed, never cut), ``TokenDelta``
for the content the :class:`TurnScanner` certifies as the model's own; it closes the stream as
soon as the model writes its own observation. Native tool calls' content is not parsed: it
is the step's Thought, the call pieces its Action lines (native_tools.py); the engine decides,
once the reply ends, whether the content was the answer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from sandbox_app.core.react_format.dialects import Dialect
from sandbox_app.core.react_format.parser import Turn, TurnScanner, parse_kept
from sandbox_app.core.react_format.scanner import REPEATED_LINES
from sandbox_app.core.react_format.thinking import ThinkSplitter
from sandbox_app.core.running.backend import (
    Backend,
    BackendError,
    Delta,
    Message,
    StreamParams,
    Usage,
    bounded_carry,
)
from sandbox_app.core.running.events import (
    CallMade,
    Event,
    Exchange,
    FabricationCut,
    Notice,
    ReasoningDelta,
    RepetitionCut,
    ThinkingReclassified,
    TokenDelta,
    call_lines,
)
from sandbox_app.core.running.model_traits import THINKING_MAX_TOKENS, ModelTraits
from sandbox_app.core.running.native_tools import (
    ACTION_LABEL,
    THOUGHT_LABEL,
    CallCollector,
    NativeCall,
)

# Chunks that arrive together (a fast server, or a client catching up) are handled in one
# go; hand control back to the event loop this often so the window keeps drawing meanwhile.
YIELD_EVERY_S = 0.004
# A reply longer than this many characters per allowed token means the server ignored
# max_tokens (a token is about 4 characters); reading on would only fill memory and the trace.
CHARS_PER_TOKEN_LIMIT = 16


@dataclass
class TurnOutcome:
    """What one request produced, for the engine's next move and the step's metrics."""

    turn: Turn = field(default_factory=lambda: Turn("none"))
    usage: Usage | None = None
    ttft_s: float | None = None  # from the request's send to its first token of any kind
    thinking_s: float | None = None
    chunks: int = 0
    tokens_saved: int = 0
    received: str = ""  # the content, kept and cut
    reasoning: list[str] = field(default_factory=list)
    finish_reason: str | None = None
    ended_in_thinking: bool = False  # the reply stopped before its thinking was over
    # Read as starting inside thinking (a pre-opened template), it never closed the block.
    unclosed_preopened: bool = False
    tool_calls: list[NativeCall] = field(default_factory=list)  # native tool calling only
    repeated: str | None = None  # a degenerate reply's line, said over and over: cut there
    # What the backend said must go back with this reply (Delta.carry), merged in order.
    carry: dict[str, Any] = field(default_factory=dict)
    queued_s: float = 0.0  # waited before it was sent (Delta.queued_s): not the model's time

    @property
    def content(self) -> str:
        """The reply's own text (native tool calling: the Thought, or the answer)."""
        return self.turn.kept.strip()

    @property
    def cut_by_limit(self) -> bool:
        return self.finish_reason == "length"

    @property
    def reasoning_text(self) -> str:
        return "".join(self.reasoning)


class TurnReader:
    """Streams one reply from ``backend`` into events and a :class:`TurnOutcome`."""

    def __init__(
        self, step: int, traits: ModelTraits, dialect: Dialect | None, *, native: bool = False
    ) -> None:
        self.step = step
        self.traits = traits
        self.dialect = dialect
        self.native = native
        self._calls = CallCollector()
        self._native_raw: list[str] = []  # native: the content, as the model wrote it
        self._mid_line = False  # native: the last text shown did not end its line
        self.out = TurnOutcome()
        self._scanner = TurnScanner()
        self._started_inside = traits.starts_inside
        self._splitter = ThinkSplitter(starts_inside=traits.starts_inside)
        self._sent_at = time.perf_counter()  # replaced by the backend's own send time
        self._first_reasoning_at: float | None = None
        self._request: dict[str, Any] = {}
        self._messages: tuple[Message, ...] = ()
        self._last_token_at: float | None = None
        self._first_content_at: float | None = None

    async def read(
        self, backend: Backend, messages: list[Message], params: StreamParams
    ) -> AsyncIterator[Event]:
        out = self.out
        self._messages = tuple(dict(m) for m in messages)  # as sent: the list changes later
        max_chars = params.max_tokens * CHARS_PER_TOKEN_LIMIT
        received_chars = 0
        last_yield = time.perf_counter()
        try:
            async with aclosing(backend.stream(messages, params)) as stream:
                async for delta in stream:
                    if delta.sent_at is not None:
                        self._sent_at = delta.sent_at
                    if delta.request is not None:
                        self._request = delta.request
                    if delta.notice:
                        yield Notice(self.step, delta.notice)
                    out.queued_s += delta.queued_s
                    if delta.usage is not None:
                        out.usage = delta.usage
                    if delta.finish_reason is not None:
                        out.finish_reason = delta.finish_reason
                    if delta.carry:  # each item bounded: one over is left out, said
                        kept, notices = bounded_carry(delta.carry)
                        out.carry.update(kept)
                        for notice in notices:
                            yield Notice(self.step, notice)
                    if delta.tool_calls:
                        # Arguments count against the limit too: a server that ignores
                        # max_tokens could otherwise stream a call without end.
                        received_chars += sum(len(p.arguments) for p in delta.tool_calls)
                        if received_chars > max_chars:
                            raise BackendError(
                                f"The reply ran past {params.max_tokens:,} tokens: the server "
                                "ignored max_tokens; stopped reading a tool call."
                            )
                        for event in self._tool_calls(delta):
                            yield event
                    if not (delta.text or delta.reasoning):
                        continue
                    now = self._last_token_at = time.perf_counter()
                    if out.ttft_s is None:
                        out.ttft_s = now - self._sent_at
                    out.chunks += delta.chunks
                    room = max_chars - received_chars
                    reasoning = delta.reasoning[:room]
                    text = delta.text[: room - len(reasoning)]
                    received_chars += len(reasoning) + len(text)
                    truncated = len(reasoning) + len(text) < len(delta.reasoning) + len(delta.text)
                    if reasoning:
                        for event in self._reasoning(reasoning, now):
                            yield event
                    for event in self._content(text, now):
                        yield event
                    if now - last_yield > YIELD_EVERY_S:
                        await asyncio.sleep(0)
                        last_yield = time.perf_counter()
                    if self._scanner.observation_started:
                        # Leaving the block closes the stream: stop paying for invented text.
                        out.tokens_saved = max(0, params.max_tokens - out.chunks)
                        break
                    if truncated:
                        raise BackendError(
                            f"The reply ran past {params.max_tokens:,} tokens: the server "
                            f"ignored max_tokens; stopped reading after {received_chars:,} "
                            "characters (the partial reply is kept)."
                        )
        finally:
            # The end of the reply: a held "<thi" was text after all, a held "Observ" line
            # is released or dropped.
            ending: list[Event] = []
            for kind, piece in self._splitter.finish():
                if kind == "reasoning":
                    ending += self._reasoning(piece, time.perf_counter())
                else:
                    ending += self._shown(piece)
            tail = "" if self.native else self._scanner.finish()
            scanner = self._scanner
            if self.native:
                ending += self._end_native()
            else:
                out.turn = parse_kept(scanner.kept, scanner.dropped, self.dialect)
                out.received = scanner.kept + scanner.dropped
                out.repeated = scanner.repeated
            began = self._first_reasoning_at
            out.ended_in_thinking = self._splitter.inside or (
                began is not None and self._first_content_at is None
            )
            out.unclosed_preopened = self._started_inside and self._splitter.inside
            if began is not None:
                self.traits.thinks = True
                content_at = self._first_content_at
                # Content written before the thinking began does not end it.
                until = content_at if content_at and content_at >= began else time.perf_counter()
                out.thinking_s = until - began
        for event in ending:
            yield event
        if tail:
            yield TokenDelta(self.step, tail)
        if scanner.repeated is not None:
            yield RepetitionCut(self.step, scanner.repeated, REPEATED_LINES, scanner.dropped)
        elif scanner.dropped:
            yield FabricationCut(self.step, scanner.dropped)

    def exchange(self) -> Exchange:
        """This request and its reply as the inspector shows them (after read() ended)."""
        out = self.out
        calls = tuple(CallMade(c.id, c.name, c.arguments) for c in out.tool_calls)
        last = self._last_token_at
        sent = self._messages if self._request.get("messages") != list(self._messages) else ()
        return Exchange(
            self.step,
            self._request,
            out.received + call_lines(calls),
            out.reasoning_text,
            out.finish_reason,
            asdict(out.usage) if out.usage is not None else None,
            out.ttft_s,
            last - self._sent_at if last is not None else None,
            calls,
            sent,
        )

    def _shown(self, piece: str) -> list[Event]:
        """Content on its way to the trace: through the scanner, or (native) as the Thought."""
        if self.native:
            return self._native_content(piece)
        released = self._scanner.feed(piece)
        return [TokenDelta(self.step, released)] if released else []

    def _native_content(self, piece: str) -> list[Event]:
        if not self._native_raw:
            piece = piece.lstrip()
            if not piece:
                return []
        self._native_raw.append(piece)
        shown = self._calls.close() + (THOUGHT_LABEL if len(self._native_raw) == 1 else "")
        shown += piece
        self._mid_line = not shown.endswith("\n")
        return [TokenDelta(self.step, shown)]

    def _tool_calls(self, delta: Delta) -> list[Event]:
        now = time.perf_counter()
        if self.out.ttft_s is None:
            self.out.ttft_s = now - self._sent_at
        if self._first_content_at is None:
            self._first_content_at = now  # a call ends the thinking as text would
        shown = self._calls.feed(delta.tool_calls)
        if not shown:
            return []
        if self._mid_line and shown.startswith(ACTION_LABEL):
            shown = "\n" + shown  # the Action line under the Thought
        self._mid_line = not shown.endswith("\n")
        return [TokenDelta(self.step, shown)]

    def _end_native(self) -> list[Event]:
        out = self.out
        content = "".join(self._native_raw)
        out.tool_calls = self._calls.calls()
        if out.tool_calls:
            out.turn = Turn("action", kept=content)
        else:
            out.turn = Turn(
                "answer" if content.strip() else "none", answer=content.strip(), kept=content
            )
        out.received = content
        closing = self._calls.close()
        return [TokenDelta(self.step, closing)] if closing else []

    def _reasoning(self, text: str, now: float) -> list[Event]:
        if self._first_reasoning_at is None:
            self._first_reasoning_at = now
        self.out.reasoning.append(text)
        return [ReasoningDelta(self.step, text)]

    def _content(self, text: str, now: float) -> list[Event]:
        events: list[Event] = []
        if not text:
            return events
        for kind, piece in self._splitter.feed(text):
            if kind == "reasoning":
                events += self._reasoning(piece, now)
            elif kind == "reclassify":
                events += self._reclassify(now)
            else:
                if self._first_content_at is None and piece.strip():
                    self._first_content_at = now
                events += self._shown(piece)
                if self._scanner.observation_started:
                    break
        return events

    def _reclassify(self, now: float) -> list[Event]:
        """The content so far was thinking: say so, and read on as if it had come as such."""
        shown, held = self._scanner.kept, self._scanner.held
        if self.native:
            shown, held = "".join(self._native_raw), ""
            self._native_raw.clear()
        self._scanner = TurnScanner()
        self.traits.starts_inside = True  # the next reply of this model starts thinking
        self._first_reasoning_at = self._first_reasoning_at or self._first_content_at or now
        self._first_content_at = None
        self.out.reasoning.append(shown)
        events: list[Event] = [ThinkingReclassified(self.step, shown)] if shown else []
        if held:
            events += self._reasoning(held, now)
        return events


def ask_again(
    params: StreamParams, out: TurnOutcome, asked_again: int, traits: ModelTraits, auto: bool
) -> tuple[StreamParams, str] | None:
    """Whether to ask for this step's reply again, and how; at most twice a step. What
    was learnt holds for the model's later steps (core/running/model_traits.py); ``auto``: Max
    tokens is Auto."""
    if asked_again >= 2 or out.turn.dropped or out.repeated:
        return None
    if out.unclosed_preopened and not out.cut_by_limit:
        # Read as starting inside thinking, it closed none: this time it did not think.
        traits.starts_inside = False
        return params, (
            "The reply closed no thinking block this time: asked again and read as it is "
            "(this model's replies are no longer read as starting inside thinking)."
        )
    if out.ended_in_thinking and params.stop and not out.cut_by_limit:
        traits.thinks = True
        return replace(params, stop=()), (
            "The server's stop sequence ended the reply inside the model's thinking: "
            "asked again without it (not sent to this model again while the app runs)."
        )
    if out.cut_by_limit and auto and params.max_tokens < THINKING_MAX_TOKENS:
        # Also when no thinking showed: a template that opens the block itself shows
        # none until "</think>", which a reply cut at 512 may never reach.
        where = "the thinking used" if out.ended_in_thinking else "the reply used"
        return replace(params, max_tokens=THINKING_MAX_TOKENS, stop=()), (
            f"Cut at Max tokens (Auto, {params.max_tokens:,}): {where} all of it; asked "
            f"again with {THINKING_MAX_TOKENS:,}, the Auto limit for models that think."
        )
    return None
