"""One model call read from its span, whichever convention wrote it, in the shape the engine
sends (OpenAI chat messages: ``tool_calls`` on the assistant's, ``tool`` messages by
``tool_call_id``).

The conventions, as instrumentations write them:

- **OpenTelemetry GenAI, current** (``gen_ai.operation.name`` ``chat``; OpenTelemetry's own
  OpenAI instrumentation with ``gen_ai_latest_experimental``, the OpenAI Agents SDK's):
  ``gen_ai.system_instructions``, ``gen_ai.input.messages``, ``gen_ai.output.messages`` as
  JSON (each message a role and ``parts``: ``text``, ``tool_call``, ``tool_call_response``,
  ``reasoning``), ``gen_ai.tool.definitions``, ``gen_ai.usage.*``.
- **GenAI, older** (OpenLLMetry, LangChain's): ``gen_ai.prompt.N.role/content``,
  ``gen_ai.completion.N.…`` with ``tool_calls.M.name/arguments/id``,
  ``llm.request.functions.N.…``, ``gen_ai.usage.prompt_tokens``; or span events
  ``gen_ai.system.message``, ``gen_ai.user.message``, ``gen_ai.assistant.message``,
  ``gen_ai.tool.message`` and ``gen_ai.choice``.
- **OpenInference** (``openinference.span.kind`` ``LLM``; Phoenix's instrumentations for the
  OpenAI SDK, LangChain/LangGraph, smolagents, the OpenAI Agents SDK):
  ``llm.input_messages.N.message.role/content/contents.M…/tool_calls.M.tool_call.…``,
  ``llm.output_messages…``, ``llm.tools.N.tool.json_schema``, ``llm.model_name``,
  ``llm.token_count.*``; ``input.value`` (the request as JSON) when the messages are not
  flattened.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any

from sandbox_app.core.otel.otel_span_reading import grouped, json_value, text, tools, usage
from sandbox_app.core.otel.otel_spans import Span

Message = dict[str, Any]


@dataclass(frozen=True)
class Call:
    id: str
    name: str
    arguments: str  # JSON text


@dataclass
class ModelCall:
    """What one model request sent and got back, as far as its span says."""

    span: Span
    messages: list[Message]
    text: str
    calls: list[Call]
    model: str = ""
    reasoning: str = ""
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)  # OpenAI tool schemas


def model_call(span: Span) -> ModelCall:
    a = span.attributes
    messages = _genai_messages(a) or _indexed_messages(a, "llm.input_messages.", _oi_message)
    messages = messages or _indexed_messages(a, "gen_ai.prompt.", _flat_message)
    messages = messages or _event_messages(span) or _input_value_messages(a)
    out = _genai_output(a) or _first(_indexed_messages(a, "llm.output_messages.", _oi_message))
    out = out or _first(_indexed_messages(a, "gen_ai.completion.", _flat_message))
    out = out or _event_choice(span) or _output_value(a)
    out = out or {"role": "assistant", "content": text(a.get("gen_ai.completion"))}
    reasons = a.get("gen_ai.response.finish_reasons")
    finish = reasons[0] if isinstance(reasons, list) and reasons else None
    return ModelCall(
        span,
        messages,
        text(out.get("content")),
        [_call(c) for c in out.get("tool_calls") or [] if isinstance(c, dict)],
        _word(a.get("gen_ai.response.model") or a.get("llm.model_name"))
        or _word(a.get("gen_ai.request.model")),
        text(out.get("reasoning")),
        _word(finish or a.get("llm.finish_reason") or out.get("finish_reason")) or None,
        usage(a),
        tools(a),
    )


def _first(messages: list[Message]) -> Message | None:
    return messages[0] if messages else None


def _call(data: dict[str, Any]) -> Call:
    inner = data.get("function")
    function: dict[str, Any] = inner if isinstance(inner, dict) else data
    arguments = function.get("arguments", "")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return Call(_word(data.get("id")), _word(function.get("name")), arguments)


def _word(value: Any) -> str:
    """A word a long trace says again and again (a role, the model, a tool's name, a finish
    reason; a call's id, in its reply and with its result) as one string, not one each time:
    ~55 bytes a step apiece, kept in the steps' events."""
    return sys.intern(text(value))


def _wire(calls: list[Call]) -> list[dict[str, Any]]:
    return [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
        for c in calls
    ]


# ---- GenAI, current: JSON messages of parts ------------------------------------------------


def _genai_messages(a: dict[str, Any]) -> list[Message]:
    items = json_value(a.get("gen_ai.input.messages"))
    if not isinstance(items, list):
        return []
    messages = chat_messages(items)
    system = json_value(a.get("gen_ai.system_instructions"))
    if system:
        messages.insert(0, {"role": "system", "content": _parts_text(system)})
    return messages


def _genai_output(a: dict[str, Any]) -> Message | None:
    items = json_value(a.get("gen_ai.output.messages"))
    if not isinstance(items, list) or not items:
        return None
    found = _from_parts(items[0])
    message: Message = found[0] if found else {"role": "assistant", "content": ""}
    parts = items[0].get("parts") if isinstance(items[0], dict) else None
    message["reasoning"] = "".join(
        text(p.get("content"))
        for p in parts or []
        if isinstance(p, dict) and p.get("type") == "reasoning"
    )
    message["finish_reason"] = items[0].get("finish_reason") if isinstance(items[0], dict) else None
    return message


def _parts_text(parts: Any) -> str:
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        return text(parts)
    return "".join(
        text(p.get("content")) for p in parts if isinstance(p, dict) and p.get("type") == "text"
    )


def chat_messages(items: list[Any]) -> list[Message]:
    """GenAI messages (a role and parts each) as Chat Completions messages."""
    return [m for item in items for m in _from_parts(item)]


def _from_parts(item: Any) -> list[Message]:
    """A GenAI message → chat messages (a tool message per ``tool_call_response``)."""
    if not isinstance(item, dict):
        return []
    role, parts = _word(item.get("role")) or "user", item.get("parts")
    if not isinstance(parts, list):
        return [{"role": role, "content": text(item.get("content"))}]
    responses = [p for p in parts if isinstance(p, dict) and p.get("type") == "tool_call_response"]
    if responses:
        return [
            {
                "role": "tool",
                "tool_call_id": _word(p.get("id")),
                "content": text(p.get("response")),
            }
            for p in responses
        ]
    message: Message = {"role": role, "content": _parts_text(parts)}
    calls = [_call(p) for p in parts if isinstance(p, dict) and p.get("type") == "tool_call"]
    if calls:
        message["tool_calls"] = _wire(calls)
    return [message]


# ---- flattened attributes: OpenInference's and OpenLLMetry's -------------------------------


def _indexed_messages(a: dict[str, Any], prefix: str, read: Any) -> list[Message]:
    return [read(group) for group in grouped(a, prefix)]


def _oi_message(g: dict[str, Any]) -> Message:
    content = g.get("message.content")
    if content is None:  # message.contents.M.message_content.text
        content = "".join(
            text(p.get("message_content.text")) for p in grouped(g, "message.contents.")
        )
    message: Message = {"role": text(g.get("message.role")) or "user", "content": text(content)}
    calls = [
        Call(
            text(c.get("tool_call.id")),
            text(c.get("tool_call.function.name")),
            _arguments(c.get("tool_call.function.arguments")),
        )
        for c in grouped(g, "message.tool_calls.")
    ]
    if calls:
        message["tool_calls"] = _wire(calls)
    if g.get("message.tool_call_id"):
        message["tool_call_id"] = text(g["message.tool_call_id"])
    return message


def _flat_message(g: dict[str, Any]) -> Message:
    message: Message = {"role": text(g.get("role")) or "user", "content": text(g.get("content"))}
    calls = [
        Call(text(c.get("id")), text(c.get("name")), _arguments(c.get("arguments")))
        for c in grouped(g, "tool_calls.")
    ]
    if calls:
        message["tool_calls"] = _wire(calls)
    if g.get("tool_call_id"):
        message["tool_call_id"] = text(g["tool_call_id"])
    if g.get("finish_reason"):
        message["finish_reason"] = text(g["finish_reason"])
    return message


def _arguments(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


# ---- span events, and the raw request -------------------------------------------------------

_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


def _event_body(attributes: dict[str, Any]) -> dict[str, Any]:
    body = json_value(attributes.get("gen_ai.event.content") or attributes.get("event.body"))
    return {**attributes, **body} if isinstance(body, dict) else attributes


def _event_messages(span: Span) -> list[Message]:
    messages = []
    for event in span.events:
        role = _EVENT_ROLES.get(event.name)
        if role is None:
            continue
        body = _event_body(event.attributes)
        message: Message = {"role": role, "content": text(json_value(body.get("content")))}
        calls = json_value(body.get("tool_calls"))
        if isinstance(calls, list) and calls:
            message["tool_calls"] = _wire([_call(c) for c in calls if isinstance(c, dict)])
        if body.get("id") and role == "tool":
            message["tool_call_id"] = text(body["id"])
        messages.append(message)
    return messages


def _event_choice(span: Span) -> Message | None:
    for event in span.events:
        if event.name == "gen_ai.choice":
            body = _event_body(event.attributes)
            inner = json_value(body.get("message"))
            message = inner if isinstance(inner, dict) else body
            choice: Message = {
                "role": "assistant",
                "content": text(json_value(message.get("content"))),
            }
            calls = json_value(message.get("tool_calls"))
            if isinstance(calls, list):
                choice["tool_calls"] = [c for c in calls if isinstance(c, dict)]
            choice["finish_reason"] = body.get("finish_reason")
            return choice
    return None


def _input_value_messages(a: dict[str, Any]) -> list[Message]:
    request = json_value(a.get("input.value"))
    items = request.get("messages") if isinstance(request, dict) else None
    return [dict(m) for m in items if isinstance(m, dict)] if isinstance(items, list) else []


def _output_value(a: dict[str, Any]) -> Message | None:
    reply = json_value(a.get("output.value"))
    choices = reply.get("choices") if isinstance(reply, dict) else None
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict):
            return {**message, "finish_reason": choices[0].get("finish_reason")}
    return None
