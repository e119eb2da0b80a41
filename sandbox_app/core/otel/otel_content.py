"""The message content of a run's spans (core/otel/otel_attributes.py): the system
prompt, messages, the reply and its thinking, tool inputs and results, the question and
answer. It may hold private data, so it is added only when the export asks for it; each
piece in the GenAI conventions' shape (``gen_ai.input.messages``…) and OpenInference's
(``input.value``, ``llm.input_messages.N.message.content``…).
"""

from __future__ import annotations

import json
from typing import Any

from sandbox_app.core.otel.otel_conversation import conversation
from sandbox_app.core.otel.otel_messages import chat_messages
from sandbox_app.core.running.events import ActionParsed, Exchange, Observation, RunStarted
from sandbox_app.core.running.records import RunRecord

AttributeValue = str | int | float | bool | list[str]
Attributes = dict[str, AttributeValue]


def chat_content(ask: Exchange, thinking: str) -> Attributes:
    """The request's conversation and the reply, in both conventions' shapes: whatever API the
    request was written for, its input is the conversation (core/otel/otel_conversation.py)."""
    said = conversation(ask.request)
    reply_parts: list[dict[str, Any]] = []
    if ask.reasoning or thinking:
        reply_parts.append({"type": "reasoning", "content": ask.reasoning or thinking})
    if ask.content or not ask.calls:
        reply_parts.append({"type": "text", "content": ask.content})
    reply_parts += [
        {"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.arguments}
        for c in ask.calls
    ]
    # OpenInference's view (and the request as JSON) in Chat Completions' shape, which
    # Phoenix shows and the reader falls back on: the system prompt first.
    messages = chat_messages(said.messages)
    system = "".join(p["content"] for p in said.system)
    if said.system:
        messages.insert(0, {"role": "system", "content": system})
    attrs: Attributes = {
        "gen_ai.input.messages": _json(said.messages),
        "gen_ai.output.messages": _json(
            [{"role": "assistant", "parts": reply_parts, "finish_reason": ask.finish_reason}]
        ),
        "input.value": _json({"messages": messages}),
        "input.mime_type": "application/json",
        "output.value": ask.reply,
        "output.mime_type": "text/plain",
    }
    if said.system:
        attrs["gen_ai.system_instructions"] = _json(said.system)
    for i, message in enumerate(messages):
        attrs.update(_flattened(f"llm.input_messages.{i}.message", message))
    reply: dict[str, Any] = {"role": "assistant", "content": ask.content}
    reply["tool_calls"] = [
        {"id": c.id, "function": {"name": c.name, "arguments": c.arguments}} for c in ask.calls
    ]
    attrs.update(_flattened("llm.output_messages.0.message", reply))
    return attrs


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _flattened(at: str, message: dict[str, Any]) -> Attributes:
    """One chat message as OpenInference flattens it: role, content, each tool call and the
    call a tool message answers."""
    attrs: Attributes = {f"{at}.role": str(message.get("role", ""))}
    if isinstance(message.get("content"), str):
        attrs[f"{at}.content"] = message["content"]
    for j, call in enumerate(message.get("tool_calls") or []):
        made = f"{at}.tool_calls.{j}.tool_call"
        attrs[f"{made}.id"] = str(call.get("id") or "")
        attrs[f"{made}.function.name"] = str(call["function"].get("name", ""))
        attrs[f"{made}.function.arguments"] = str(call["function"].get("arguments", ""))
    if message.get("tool_call_id"):
        attrs[f"{at}.tool_call_id"] = str(message["tool_call_id"])
    return attrs


def tool_content(action: ActionParsed, seen: Observation | None) -> Attributes:
    attrs: Attributes = {"gen_ai.tool.call.arguments": action.input, "input.value": action.input}
    if seen is not None:
        attrs["gen_ai.tool.call.result"] = attrs["output.value"] = seen.text
    return attrs


def agent_content(record: RunRecord) -> Attributes:
    attrs: Attributes = {}
    started = next((e for e in record.events if isinstance(e, RunStarted)), None)
    if started is not None:
        attrs["gen_ai.system_instructions"] = json.dumps(
            [{"type": "text", "content": started.system_prompt}], ensure_ascii=False
        )
        attrs["input.value"] = started.question
    if record.finished is not None and record.finished.answer is not None:
        attrs["output.value"] = record.finished.answer
    return attrs
