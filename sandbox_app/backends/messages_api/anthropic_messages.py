"""The Anthropic Messages API's shapes: the engine's messages → a request body, and the stream's
events → :class:`Delta`s. Plain functions on dicts, no SDK: the SDK sends the request, these
read the SSE payloads (the SDK's pydantic object per event would cost most of a chunk's time,
as sse.py found for Chat Completions).

What goes back, and why: with extended thinking on, the API refuses a tool-result turn whose
assistant message does not start with the thinking block(s) it wrote, signature unchanged
(its "Preserving thinking blocks" rule). The decoder keeps those blocks whole and hands them
on as ``Delta.carry``; the engine stores them in the assistant message (PROVIDER), and
:func:`request_body` puts them first in that message again. Text ReAct sends content only.
A block over ``MAX_CARRIED`` (a server's 20 MB signature) is neither held nor sent back: it is
said in a notice, and the next request goes without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sandbox_app.backends.catalogue.request_fields import ANTHROPIC, place
from sandbox_app.backends.transport.sse import _count as counted  # a server's count checked
from sandbox_app.core.running.backend import (
    MAX_CARRIED,
    PROVIDER,
    BackendError,
    Delta,
    Message,
    StreamParams,
    ToolCallPiece,
    Usage,
    carried_notice,
)
from sandbox_app.core.untrusted.file_reader import parse_json_text, shown

CARRY_KEY = "anthropic"  # under PROVIDER: the reply's thinking blocks, as the API sent them
MIN_BUDGET = 1024  # the API's smallest thinking budget
# reasoning_effort, for a lane that sets no thinking budget: tokens of thinking.
EFFORT_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 32000}
FINISH = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls"}
FINISH |= {"max_tokens": "length", "model_context_window_exceeded": "length"}


def thinking_budget(params: StreamParams) -> int | None:
    """Tokens of thinking to ask for: the lane's budget, else its reasoning effort's; 0 = off,
    None = the model's default (nothing sent)."""
    if params.thinking_budget is not None:
        return params.thinking_budget
    if params.reasoning_effort == "none":
        return 0
    return EFFORT_BUDGETS.get(params.reasoning_effort or "")


def request_body(
    messages: Sequence[Message], params: StreamParams, cache_system: bool = False
) -> tuple[dict[str, Any], list[str]]:
    """The JSON body of a streaming ``POST /v1/messages``, and notices for what was changed
    to make it acceptable (a budget raised to the minimum, max_tokens raised above it)."""
    notes: list[str] = []
    system = [m["content"] for m in messages if m["role"] == "system" and m.get("content")]
    body: dict[str, Any] = {
        "model": params.model,
        "messages": conversation(messages),
        "stream": True,
    }
    place(body, params, ANTHROPIC)
    if system:
        text = "\n\n".join(system)
        if cache_system:  # cached from the first request on; read back by the next ones
            cached = {"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}
            body["system"] = [cached]
        else:
            body["system"] = text
    budget = thinking_budget(params)
    if budget:
        if budget < MIN_BUDGET:
            notes.append(f"Thinking budget raised to {MIN_BUDGET:,} tokens, the API's minimum.")
            budget = MIN_BUDGET
        if params.max_tokens <= budget:  # the budget is part of max_tokens
            body["max_tokens"] = budget + params.max_tokens
            notes.append(
                f"Max tokens raised to {body['max_tokens']:,}: Anthropic counts the thinking "
                f"budget ({budget:,}) inside it."
            )
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        for name in ("temperature", "top_p"):  # with thinking on it takes no temperature
            body.pop(name, None)  # but 1, and no top_p
    elif budget == 0:
        body["thinking"] = {"type": "disabled"}
    stops = [s for s in params.stop if s.strip()]  # the API refuses whitespace-only ones
    if stops:
        body["stop_sequences"] = stops
    if params.tools:
        body["tools"] = [tool(schema) for schema in params.tools]
    body.update(params.extra)
    return body, notes


def tool(schema: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI-shaped ``{"type": "function", "function": {…}}`` as Anthropic's tool."""
    function = schema.get("function", schema)
    return {
        "name": function["name"],
        "description": function.get("description", ""),
        "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
    }


def conversation(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The user and assistant turns: tool results become ``tool_result`` blocks of a user
    turn, an assistant's calls ``tool_use`` blocks after its carried thinking; turns of one
    role in a row are joined (the API alternates them)."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        if role == "system":
            continue
        if role == "tool":
            role = "user"
            blocks = [
                {
                    "type": "tool_result",
                    "tool_use_id": message.get("tool_call_id", ""),
                    "content": message.get("content") or "",
                }
            ]
        elif role == "assistant" and message.get("tool_calls"):
            blocks = _assistant_blocks(message)
        else:
            text = message.get("content") or ""
            blocks = [{"type": "text", "text": text}] if text else []
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    # A turn of one text block goes as a plain string, as people write it.
    for turn in turns:
        content = turn["content"]
        if len(content) == 1 and content[0]["type"] == "text":
            turn["content"] = content[0]["text"]
    return turns


def _assistant_blocks(message: Message) -> list[dict[str, Any]]:
    carried = (message.get(PROVIDER) or {}).get(CARRY_KEY) or []
    blocks: list[dict[str, Any]] = [dict(block) for block in carried]  # first, unchanged
    if message.get("content"):
        blocks.append({"type": "text", "text": message["content"]})
    for call in message["tool_calls"]:
        function = call["function"]
        try:
            arguments = parse_json_text(function.get("arguments") or "{}", "the arguments")
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):  # the API takes an object only
            arguments = {"input": function.get("arguments") or ""}
        blocks.append(
            {"type": "tool_use", "id": call["id"], "name": function["name"], "input": arguments}
        )
    return blocks


@dataclass
class StreamDecoder:
    """One reply's events → deltas, keeping its thinking blocks (with their signatures) for
    the carry and the usage the stream reports at its start and end."""

    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)  # thinking, by index
    kinds: dict[int, str] = field(default_factory=dict)  # each block started: its type
    # A block grown past MAX_CARRIED: its size so far, never kept (said at the end).
    dropped: dict[int, int] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    doubtful: bool = False  # a count was out of range (clamped)
    stop_reason: str | None = None
    ended: bool = False

    def feed(self, data: str) -> list[Delta]:
        """One SSE payload's deltas, read by the file reader's JSON rules (depth, size, no
        lone surrogates); a payload that is not an object breaks the API's rules."""
        event = parse_json_text(data, "an event")
        if not isinstance(event, dict):
            raise NotAStream(f"an event that is not a JSON object ({shown(event)})")
        return self.decode(event)

    def decode(self, event: dict[str, Any]) -> list[Delta]:
        # Every field is read by its type (_word, _object, _index): a value of another type
        # is missing, or a stream that breaks the API's rules, never a KeyError here.
        kind = _word(event, "type")
        if kind == "content_block_delta":
            index = _index(event)
            if index not in self.kinds:
                raise NotAStream(f"a delta for content block {index}, never started")
            return self._delta(index, _object(event, "delta"))
        if kind == "content_block_start":
            index = _index(event)
            if index in self.kinds:
                raise NotAStream(f"content block {index} started twice")
            block = _object(event, "content_block")
            self.kinds[index] = _word(block, "type")
            return self._start(index, block)
        if kind == "message_start":
            self._count(_object(event, "message").get("usage"))
        elif kind == "message_delta":
            self._count(event.get("usage"))
            self.stop_reason = _word(_object(event, "delta"), "stop_reason") or self.stop_reason
        elif kind == "message_stop":
            return self.finish()
        elif kind == "error":
            error = event.get("error")
            error = error if isinstance(error, dict) else {"message": shown(error)}
            raise StreamFailed(_word(error, "type") or "error", _word(error, "message"))
        return []  # ping, content_block_stop, and any event a newer API adds

    def _start(self, index: int, block: dict[str, Any]) -> list[Delta]:
        kind = block.get("type")
        if kind == "tool_use":
            name, call_id = block.get("name"), block.get("id")
            if not isinstance(name, str) or not name or not isinstance(call_id, str):
                raise NotAStream(f"a tool_use block (content block {index}) without a name or id")
            return [Delta(tool_calls=(ToolCallPiece(index, call_id, name),))]
        if kind == "thinking":
            self.blocks[index] = {"type": "thinking", "thinking": "", "signature": ""}
            return [Delta(reasoning=_word(block, "thinking"))] if _word(block, "thinking") else []
        if kind == "redacted_thinking":  # encrypted: nothing to show, but it goes back
            self.blocks[index] = dict(block)
            return [Delta(reasoning="[thinking redacted by the provider]\n")]
        if kind == "text" and _word(block, "text"):
            return [Delta(text=_word(block, "text"))]
        return []

    def _delta(self, index: int, delta: dict[str, Any]) -> list[Delta]:
        kind = _word(delta, "type")
        if kind in _DELTA_OF:
            block, key = _DELTA_OF[kind]
            if self.kinds[index] != block:
                raise NotAStream(f"a {kind} for content block {index}, a {self.kinds[index]}")
            if not isinstance(delta.get(key), str):
                raise NotAStream(f"a {kind} (content block {index}) without its {key}")
        if kind == "text_delta":
            return [Delta(text=delta["text"])]
        if kind == "thinking_delta":
            self._grow(index, "thinking", delta["thinking"])
            return [Delta(reasoning=delta["thinking"])]
        if kind == "signature_delta":
            self._grow(index, "signature", delta["signature"])
            return []
        if kind == "input_json_delta":
            return [Delta(tool_calls=(ToolCallPiece(index, arguments=delta["partial_json"]),))]
        return []

    def _grow(self, index: int, key: str, piece: str) -> None:
        """A thinking block's text or signature, kept while the block is within MAX_CARRIED
        (a server's 20 MB signature is never held, nor sent back)."""
        if index in self.dropped:
            self.dropped[index] += len(piece)
            return
        block = self.blocks.get(index)
        if block is None:
            return
        block[key] += piece
        size = len(block["thinking"]) + len(block["signature"])
        if size > MAX_CARRIED:
            del self.blocks[index]
            self.dropped[index] = size

    def _count(self, usage: Any) -> None:
        """A usage object's counts, each checked as sse.py checks one (clamped: doubtful)."""
        for name, value in (usage if isinstance(usage, dict) else {}).items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                self.usage[name], doubtful = counted(value)
                self.doubtful = self.doubtful or doubtful

    def finish(self) -> list[Delta]:
        """The reply's end (message_stop, or a stream that ended without one): its usage,
        finish reason and thinking blocks; a refusal raised as the step's failure."""
        if self.ended:
            return []
        self.ended = True
        out: list[Delta] = []
        reason = self.stop_reason
        if reason == "refusal":
            raise BackendError(
                "The model refused to answer (stop_reason refusal): its safety rules stopped "
                "the reply; rephrase the question or the prompt."
            )
        if reason == "pause_turn":
            notice = "The server paused a long turn (pause_turn); the reply so far is taken."
            out.append(Delta(notice=notice))
        for size in self.dropped.values():
            out.append(Delta(notice=carried_notice("signed thinking block", size)))
        carry = {CARRY_KEY: [self.blocks[i] for i in sorted(self.blocks)]} if self.blocks else None
        out.append(
            Delta(
                usage=self._usage(),
                finish_reason=FINISH.get(reason or "", reason),
                carry=carry,
            )
        )
        return out

    def _usage(self) -> Usage | None:
        if not self.usage:
            return None
        read = self.usage.get("cache_read_input_tokens")
        written = self.usage.get("cache_creation_input_tokens")
        # Anthropic's input_tokens leave the cached part out; prompt_tokens count all of it,
        # as OpenAI's do.
        prompt = self.usage.get("input_tokens", 0) + (read or 0) + (written or 0)
        return Usage(
            prompt,
            self.usage.get("output_tokens", 0),
            doubtful=self.doubtful,
            cache_read_tokens=read,
            cache_write_tokens=written,
        )


# Each delta's block type and the field it carries: a delta to another block is no reply.
_DELTA_OF = {
    "text_delta": ("text", "text"),
    "thinking_delta": ("thinking", "thinking"),
    "signature_delta": ("thinking", "signature"),
    "input_json_delta": ("tool_use", "partial_json"),
}
MAX_BLOCKS = 10_000  # content blocks in one reply


def _index(event: dict[str, Any]) -> int:
    index = event.get("index")
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < MAX_BLOCKS:
        raise NotAStream(f"a {event.get('type')} without a content block index")
    return index


def _word(event: dict[str, Any], key: str) -> str:
    """A text field; "" when it is missing or not text."""
    value = event.get(key)
    return value if isinstance(value, str) else ""


def _object(event: dict[str, Any], key: str) -> dict[str, Any]:
    value = event.get(key)
    if not isinstance(value, dict):
        raise NotAStream(f"a {event.get('type')} without its {key}")
    return value


class NotAStream(Exception):
    """An event no Messages stream holds (a delta for a block never started, a tool_use
    without a name): the reply is not taken as an answer; what is wrong, in a few words."""


class StreamFailed(Exception):
    """The stream's ``error`` event: its type ("overloaded_error") and message."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}" if message else kind)
        self.kind = kind
