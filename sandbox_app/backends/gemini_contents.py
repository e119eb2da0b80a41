"""Gemini's shapes: the engine's Chat-shaped messages as ``contents`` and a config, and one
streamed ``GenerateContentResponse`` as :class:`Delta` pieces.

Pure data work, no SDK import: the request is built as the JSON the SDK's arguments validate
from (``model``, ``contents``, ``config``, snake_case as the SDK names them), which is also
what the request inspector shows. A thought signature travels as base64 text, the way the
REST API writes it; ``Content.model_validate_json`` turns it back into bytes.

What goes back (Gemini API docs, "Thought signatures"): a function call the model made is
sent back in the next request with the ``thought_signature`` its part carried, unchanged;
Gemini 3 answers 400 "Function call is missing a thought_signature" without it. The backend
yields the signatures as ``Delta(carry={CARRY_KEY: {call id: signature}})``; the engine keeps
them in the assistant message under ``provider`` and :func:`contents` reads them back. Thought
summaries (parts with ``thought: true``) are shown as thinking and never sent back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from sandbox_app.core.running.backend import (
    PROVIDER,
    Delta,
    Message,
    StreamParams,
    ToolCallPiece,
    Usage,
)

CARRY_KEY = "gemini_signatures"  # {call id: base64 signature}, in Delta.carry / "provider"
TEXT_SIGNATURE = ""  # the key, in that mapping, of a signature on a text part
MAX_STOP_SEQUENCES = 5  # the API's limit on stop_sequences
# reasoning_effort → thinking_level, for the models that take a level (Gemini 3).
LEVELS = {"none": "minimal", "minimal": "minimal", "low": "low", "medium": "medium"}
LEVELS |= {"high": "high", "xhigh": "high"}
# reasoning_effort → thinking_budget for Gemini 2.5, as Gemini's OpenAI compatibility maps it.
BUDGETS = {"none": 0, "minimal": 1024, "low": 1024, "medium": 8192, "high": 24576}
BUDGETS |= {"xhigh": 24576}
# Why a reply ended early, in words; MAX_TOKENS is the engine's "length" line instead.
STOPPED = {
    "SAFETY": "its safety filters",
    "RECITATION": "recitation of its training data",
    "BLOCKLIST": "a blocklisted term",
    "PROHIBITED_CONTENT": "prohibited content",
    "SPII": "personal information in it",
    "LANGUAGE": "an unsupported language",
    "MALFORMED_FUNCTION_CALL": "a malformed function call",
    "UNEXPECTED_TOOL_CALL": "a tool call when no tools were given",
    "OTHER": "an unspecified reason",
}


def takes_level(model: str) -> bool:
    """Gemini 3 models take ``thinking_level``; 2.5 and older a ``thinking_budget``."""
    return model.removeprefix("models/").startswith("gemini-3")


def thinking_config(params: StreamParams) -> dict[str, Any]:
    """Thoughts always asked for as summaries; an explicit budget wins over an effort (the
    API refuses a request with both a budget and a level)."""
    config: dict[str, Any] = {"include_thoughts": True}
    effort = params.reasoning_effort
    if params.thinking_budget is not None:
        config["thinking_budget"] = params.thinking_budget
    elif effort in LEVELS and takes_level(params.model):
        config["thinking_level"] = LEVELS[effort]
    elif effort in BUDGETS:
        config["thinking_budget"] = BUDGETS[effort]
    return config


def declaration(schema: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI-style tool schema as a function declaration (its JSON Schema as given)."""
    function = schema.get("function", schema)
    declared: dict[str, Any] = {"name": function["name"]}
    if function.get("description"):
        declared["description"] = function["description"]
    if function.get("parameters"):
        declared["parameters_json_schema"] = function["parameters"]
    return declared


def request(messages: list[Message], params: StreamParams) -> dict[str, Any]:
    """The request as the SDK's arguments: ``model``, ``contents`` and ``config``."""
    config: dict[str, Any] = {
        "max_output_tokens": params.max_tokens,
        "thinking_config": thinking_config(params),
        # Tools are declarations only: the engine runs them, never the SDK.
        "automatic_function_calling": {"disable": True},
    }
    system = "\n\n".join(str(m.get("content") or "") for m in messages if m["role"] == "system")
    if system:
        config["system_instruction"] = system
    if params.temperature is not None:
        config["temperature"] = params.temperature
    if params.top_p is not None:
        config["top_p"] = params.top_p
    if params.seed is not None:
        config["seed"] = params.seed
    if params.stop:
        config["stop_sequences"] = list(params.stop[:MAX_STOP_SEQUENCES])
    if params.tools:
        config["tools"] = [{"function_declarations": [declaration(t) for t in params.tools]}]
    return {"model": params.model, "contents": contents(messages), "config": config}


def contents(messages: list[Message]) -> list[dict[str, Any]]:
    """Chat messages as Gemini contents: user and model turns, tool results as
    ``function_response`` parts of a user turn, neighbours of one role joined."""
    names: dict[str, str] = {}  # call id → function name: a function response names it
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        if role == "system":
            continue
        if role == "assistant":
            parts = _model_parts(message, names)
            turn = "model"
        elif role == "tool":
            call_id = str(message.get("tool_call_id") or "")
            response = {"name": names.get(call_id, ""), "response": {"output": message["content"]}}
            if call_id:
                response["id"] = call_id
            parts, turn = [{"function_response": response}], "user"
        else:
            parts, turn = [{"text": str(message.get("content") or "")}], "user"
        if not parts:
            continue
        if out and out[-1]["role"] == turn:
            out[-1]["parts"].extend(parts)
        else:
            out.append({"role": turn, "parts": parts})
    return out


def _model_parts(message: Message, names: dict[str, str]) -> list[dict[str, Any]]:
    provider = message.get(PROVIDER)
    signatures = provider.get(CARRY_KEY, {}) if isinstance(provider, dict) else {}
    parts: list[dict[str, Any]] = []
    if message.get("content"):
        parts.append({"text": message["content"]})
        if signatures.get(TEXT_SIGNATURE):
            parts[-1]["thought_signature"] = signatures[TEXT_SIGNATURE]
    for call in message.get("tool_calls") or []:
        function = call["function"]
        names[call["id"]] = function["name"]
        try:
            args = json.loads(function.get("arguments") or "{}")
        except ValueError:
            args = {}
        called: dict[str, Any] = {"name": function["name"], "args": args}
        if not call["id"].startswith(LOCAL_ID):  # an id of the API's own goes back with it
            called["id"] = call["id"]
        part: dict[str, Any] = {"function_call": called}
        if call["id"] in signatures:  # exactly as received: the API checks it
            part["thought_signature"] = signatures[call["id"]]
        parts.append(part)
    return parts


LOCAL_ID = "gemini-call-"  # ids this backend made up for calls the API sent without one


@dataclass
class Decoder:
    """One reply's chunks into deltas; remembers what only the end can report."""

    calls: int = 0
    signatures: dict[str, str] = field(default_factory=dict)
    usage: Usage | None = None
    finish: str | None = None

    def chunk(self, response: Any) -> list[Delta]:
        deltas: list[Delta] = []
        if response.usage_metadata is not None:
            self.usage = usage(response.usage_metadata)
        for candidate in (response.candidates or [])[:1]:
            content = candidate.content
            for part in (content.parts if content is not None else None) or []:
                deltas.extend(self._part(part))
            if candidate.finish_reason is not None:
                self.finish = _name(candidate.finish_reason)
        feedback = response.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            reason = _name(feedback.block_reason)
            deltas.append(Delta(notice=f"Gemini blocked the prompt ({reason})."))
            self.finish = self.finish or "BLOCKED"
        return deltas

    def _part(self, part: Any) -> list[Delta]:
        signature = _b64(part.thought_signature)
        if part.function_call is not None:
            call = part.function_call
            call_id = call.id or f"{LOCAL_ID}{self.calls}"
            if signature:
                self.signatures[call_id] = signature
            piece = ToolCallPiece(
                self.calls,
                call_id,
                call.name or "",
                json.dumps(call.args or {}, ensure_ascii=False),
            )
            self.calls += 1
            return [Delta(tool_calls=(piece,))]
        if signature and not part.thought:
            self.signatures.setdefault(TEXT_SIGNATURE, signature)
        if not part.text:
            return []
        return [Delta(reasoning=part.text)] if part.thought else [Delta(text=part.text)]

    def end(self) -> list[Delta]:
        """The usage, what must go back, and why the reply ended."""
        out: list[Delta] = []
        if self.usage is not None:
            out.append(Delta(usage=self.usage))
        if self.signatures:
            out.append(Delta(carry={CARRY_KEY: dict(self.signatures)}))
        if self.finish == "MAX_TOKENS":
            out.append(Delta(finish_reason="length"))
        elif self.finish in STOPPED:
            out.append(
                Delta(notice=f"Gemini stopped the reply ({self.finish}): {STOPPED[self.finish]}.")
            )
            out.append(Delta(finish_reason=self.finish.lower()))
        elif self.finish is not None:
            out.append(Delta(finish_reason="tool_calls" if self.calls else "stop"))
        return out


def usage(meta: Any) -> Usage:
    thoughts = meta.thoughts_token_count
    return Usage(
        prompt_tokens=meta.prompt_token_count or 0,
        # Gemini counts thoughts apart; the engine's completion count includes them.
        completion_tokens=(meta.candidates_token_count or 0) + (thoughts or 0),
        reasoning_tokens=thoughts,
        cache_read_tokens=meta.cached_content_token_count,
    )


def _name(value: Any) -> str:
    return str(getattr(value, "value", value))


def _b64(signature: bytes | None) -> str:
    import base64

    return base64.b64encode(signature).decode("ascii") if signature else ""
