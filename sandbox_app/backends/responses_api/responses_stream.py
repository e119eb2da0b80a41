"""Reading a Responses API stream: one SSE ``data:`` payload (an event) → :class:`Delta` s.

The Responses API streams typed events, not chat chunks (OpenAI's API reference, "Streaming
events"): ``response.output_text.delta`` is the reply's text; ``response.reasoning_summary_text
.delta`` the reasoning summary OpenAI's reasoning models show, and ``response.reasoning_text
.delta`` the raw reasoning servers such as vLLM stream; a function call comes as an output
item (``response.output_item.added``, its id and name) followed by
``response.function_call_arguments.delta`` fragments. The stream ends with
``response.completed`` (usage), ``response.incomplete`` (cut: its reason) or
``response.failed`` / ``error``; there is no ``[DONE]``.

The output items a reply was made of (reasoning items with their ``encrypted_content``, the
message, the function calls, in order) are yielded at the end as ``Delta.carry``: the
backend sends the reasoning back before its calls in the next request (responses_input.py).
Like sse.py, the payloads are read as plain JSON, not the SDK's pydantic event objects: every
event type or field a server adds is ignored, and the stream costs a fraction of the CPU.
"""

from __future__ import annotations

import json
from typing import Any

from sandbox_app.backends.transport.errors import sentence
from sandbox_app.backends.transport.sse import (
    _count as counted,  # sse.py's check of a server's count
)
from sandbox_app.core.running.backend import BackendError, Delta, ToolCallPiece, Usage
from sandbox_app.core.untrusted.file_reader import parse_json_text

# Where the output items go in Delta.carry (and so in the assistant message's PROVIDER).
CARRY_KEY = "responses_output"
# Why a reply stopped short (response.incomplete's incomplete_details.reason) in the words
# the engine reads: "length" is the "Cut at Max tokens" line.
INCOMPLETE_REASONS = {"max_output_tokens": "length"}
# What of a reasoning item goes back: enough for the server to use it again statelessly.
REASONING_KEYS = ("type", "id", "summary", "encrypted_content")
TEXT_EVENTS = frozenset({"response.output_text.delta", "response.refusal.delta"})
REASONING_EVENTS = frozenset(
    {"response.reasoning_summary_text.delta", "response.reasoning_text.delta"}
)
END_EVENTS = frozenset({"response.completed", "response.incomplete"})


class ResponseEvents:
    """Decodes one streamed response, event by event (:meth:`feed`)."""

    def __init__(self) -> None:
        self.ended = False  # the stream's last event came
        self.chunks = 0  # text events so far, for a broken stream's line
        self._part: tuple[str, int] | None = None  # the reasoning part last shown
        self._calls: dict[str, int] = {}  # a function call's item id → its piece index
        self._streamed: set[int] = set()  # calls whose arguments came as fragments
        self._items: list[dict[str, Any]] = []  # the output items, as they were done

    def feed(self, data: str) -> list[Delta]:
        """The deltas one payload makes. Raises BackendError for a failed response or an
        ``error`` event, ValueError for a payload that is not a JSON object."""
        event = parse_json_text(data, "an event")  # the file reader's depth limit
        if not isinstance(event, dict):
            raise ValueError("event is not a JSON object")
        kind = _text(event.get("type"))  # a list or an object: no event this reads
        if kind in TEXT_EVENTS:
            self.chunks += 1
            return [Delta(text=_text(event.get("delta")))]
        if kind in REASONING_EVENTS:
            return [Delta(reasoning=self._reasoning(event))]
        if kind == "response.output_item.added":
            return self._call_started(event)
        if kind == "response.function_call_arguments.delta":
            return self._arguments(event)
        if kind == "response.output_item.done":
            return self._item_done(event)
        if kind in END_EVENTS:
            return self._end(event)
        if kind == "response.failed":
            response = event.get("response")
            raise _failed(response.get("error") if isinstance(response, dict) else None)
        if kind == "error":
            raise _failed(event.get("error", event))
        return []  # created, in_progress, content parts, the .done repeats of the text…

    def _reasoning(self, event: dict[str, Any]) -> str:
        # A blank line between two summary parts (or two reasoning items): each part is
        # a paragraph of its own, not a continuation of the last one's sentence.
        index = event.get("summary_index", event.get("content_index", 0))
        part = (str(event.get("item_id", "")), index if isinstance(index, int) else 0)
        gap = "\n\n" if self._part is not None and part != self._part else ""
        self._part = part
        return gap + _text(event.get("delta"))

    def _call_index(self, event: dict[str, Any], item: dict[str, Any]) -> int | None:
        item_id = _text(item.get("id") or event.get("item_id") or event.get("output_index"))
        if item_id not in self._calls:
            if item.get("type") != "function_call":
                return None
            self._calls[item_id] = len(self._calls)
        return self._calls[item_id]

    def _call_started(self, event: dict[str, Any]) -> list[Delta]:
        item = event.get("item")
        if not isinstance(item, dict) or item.get("type") != "function_call":
            return []
        index = self._call_index(event, item)
        assert index is not None
        arguments = _text(item.get("arguments"))
        if arguments:  # a server that sends the whole call at once
            self._streamed.add(index)
        piece = ToolCallPiece(index, _text(item.get("call_id")), _text(item.get("name")), arguments)
        return [Delta(tool_calls=(piece,))]

    def _arguments(self, event: dict[str, Any]) -> list[Delta]:
        index = self._calls.get(_text(event.get("item_id") or event.get("output_index")))
        if index is None:  # fragments of a call never announced: nothing to join them to
            return []
        self._streamed.add(index)
        return [Delta(tool_calls=(ToolCallPiece(index, arguments=_text(event.get("delta"))),))]

    def _item_done(self, event: dict[str, Any]) -> list[Delta]:
        item = event.get("item")
        if not isinstance(item, dict):
            return []
        self._items.append(item)
        if item.get("type") != "function_call":
            return []
        known = _text(item.get("id") or event.get("item_id") or event.get("output_index"))
        fresh = known not in self._calls  # a call announced only now, whole
        index = self._call_index(event, item)
        assert index is not None
        if index in self._streamed:
            return []
        self._streamed.add(index)
        piece = ToolCallPiece(
            index,
            _text(item.get("call_id")) if fresh else "",
            _text(item.get("name")) if fresh else "",
            _text(item.get("arguments")),
        )
        return [Delta(tool_calls=(piece,))]

    def _end(self, event: dict[str, Any]) -> list[Delta]:
        self.ended = True
        response = event.get("response")
        response = response if isinstance(response, dict) else {}
        early: list[Delta] = []
        output = response.get("output")
        if not self._items and isinstance(output, list):  # a server that sent no item events
            for item in output:
                early += self._item_done({"item": item})
        finish = "stop"
        if event.get("type") == "response.incomplete":
            details = response.get("incomplete_details")
            reason = _text(details.get("reason")) if isinstance(details, dict) else ""
            finish = INCOMPLETE_REASONS.get(reason, reason or "incomplete")
        elif self._calls:
            finish = "tool_calls"
        usage = response.get("usage")
        return [
            *early,
            Delta(
                usage=usage_of(usage) if isinstance(usage, dict) else None,
                finish_reason=finish,
                carry=self._carry(),
            ),
        ]

    def _carry(self) -> dict[str, Any] | None:
        """The reply's items in order, when it reasoned: what must go back with its calls."""
        if not any(item.get("type") == "reasoning" for item in self._items):
            return None
        kept: list[dict[str, Any]] = []
        for item in self._items:
            kind = item.get("type")
            if kind == "reasoning":
                reasoning = {k: item[k] for k in REASONING_KEYS if item.get(k) is not None}
                reasoning.setdefault("summary", [])
                if "encrypted_content" not in reasoning and item.get("content"):
                    reasoning["content"] = item["content"]  # raw reasoning: its only form
                kept.append(reasoning)
            elif kind == "function_call":
                kept.append({"type": kind, "id": item.get("id"), "call_id": item.get("call_id")})
            elif kind == "message":
                kept.append({"type": kind})
        return {CARRY_KEY: kept}


def usage_of(usage: dict[str, Any]) -> Usage:
    """``response.usage``: input/output tokens, the reasoning and cached tokens in their
    details."""
    out_details = usage.get("output_tokens_details")
    in_details = usage.get("input_tokens_details")
    reasoning = out_details.get("reasoning_tokens") if isinstance(out_details, dict) else None
    cached = in_details.get("cached_tokens") if isinstance(in_details, dict) else None
    prompt, doubtful_in = counted(usage.get("input_tokens"))
    completion, doubtful_out = counted(usage.get("output_tokens"))
    thought, doubtful_thought = counted(reasoning)
    cache_read, doubtful_cache = counted(cached)
    return Usage(
        prompt,
        completion,
        thought if thought > 0 else None,  # 0 from a model that does not reason says nothing
        doubtful=doubtful_in or doubtful_out or doubtful_thought or doubtful_cache,
        cache_read_tokens=cache_read if cached is not None else None,
    )


def _failed(error: Any) -> BackendError:
    message = error.get("message") if isinstance(error, dict) else error
    return BackendError(
        f"The server reported an error mid-stream: {sentence(str(message or 'no reason given'))}"
    )


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value)
