"""The message content of a run's spans (core/otel/otel_attributes.py): the system
prompt, messages, the reply and its thinking, tool inputs and results, the question and
answer. It may hold private data, so it is added only when the export asks for it; each
piece in the GenAI conventions' shape (``gen_ai.input.messages``…) and OpenInference's
(``input.value``, ``llm.input_messages.N.message.content``…).
"""

from __future__ import annotations

import json
from typing import Any

from sandbox_app.core.running.events import ActionParsed, Exchange, Observation, RunStarted
from sandbox_app.core.running.records import RunRecord

AttributeValue = str | int | float | bool | list[str]
Attributes = dict[str, AttributeValue]


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    text = message.get("content")
    parts: list[dict[str, Any]] = []
    if isinstance(text, str) and text:
        parts.append({"type": "text", "content": text})
    elif isinstance(text, list):  # content blocks: their text
        for block in text:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append({"type": "text", "content": block["text"]})
    for call in message.get("tool_calls") or []:
        function = call.get("function", {}) if isinstance(call, dict) else {}
        parts.append(
            {
                "type": "tool_call",
                "id": call.get("id", ""),
                "name": function.get("name", ""),
                "arguments": function.get("arguments", ""),
            }
        )
    return parts


def chat_content(ask: Exchange, thinking: str) -> Attributes:
    """The request's messages and the reply, in both conventions' shapes."""
    raw = ask.request.get("messages")
    messages = [m for m in raw if isinstance(m, dict)] if isinstance(raw, list) else []
    system = [m for m in messages if m.get("role") == "system"]
    rest = [m for m in messages if m.get("role") != "system"]
    reply_parts: list[dict[str, Any]] = []
    if ask.reasoning or thinking:
        reply_parts.append({"type": "reasoning", "content": ask.reasoning or thinking})
    if ask.content or not ask.calls:
        reply_parts.append({"type": "text", "content": ask.content})
    reply_parts += [
        {"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.arguments}
        for c in ask.calls
    ]
    attrs: Attributes = {
        "gen_ai.input.messages": json.dumps(
            [{"role": m.get("role", ""), "parts": _parts(m)} for m in rest], ensure_ascii=False
        ),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": reply_parts, "finish_reason": ask.finish_reason}],
            ensure_ascii=False,
        ),
        "input.value": json.dumps({"messages": messages}, ensure_ascii=False),
        "input.mime_type": "application/json",
        "output.value": ask.reply,
        "output.mime_type": "text/plain",
    }
    if system:
        attrs["gen_ai.system_instructions"] = json.dumps(
            [part for m in system for part in _parts(m)], ensure_ascii=False
        )
    for i, message in enumerate(messages):
        text = message.get("content")
        attrs[f"llm.input_messages.{i}.message.role"] = str(message.get("role", ""))
        if isinstance(text, str):
            attrs[f"llm.input_messages.{i}.message.content"] = text
    attrs["llm.output_messages.0.message.role"] = "assistant"
    attrs["llm.output_messages.0.message.content"] = ask.content
    for j, call in enumerate(ask.calls):  # OpenInference's tool calls of the reply
        made = f"llm.output_messages.0.message.tool_calls.{j}.tool_call"
        attrs[f"{made}.id"] = call.id
        attrs[f"{made}.function.name"] = call.name
        attrs[f"{made}.function.arguments"] = call.arguments
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
