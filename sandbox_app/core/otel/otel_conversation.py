"""A model request's conversation in the OpenTelemetry GenAI conventions' shape, whichever
API the request was written for: the one place a request becomes span input
(core/otel/otel_content.py writes it as ``gen_ai.system_instructions``,
``gen_ai.input.messages`` and OpenInference's ``llm.input_messages``).

The request is the body as sent (``Exchange.request``), so it is each kind's own shape:

- Chat Completions (OpenAI-compatible servers, Ollama's own API): ``messages``; system and
  developer messages are the instructions; an assistant's ``tool_calls`` (arguments as JSON
  text, or an object on Ollama), its ``reasoning_content``/``reasoning``/``thinking``; a
  ``tool`` message's ``tool_call_id`` (Ollama sends none: it names the tool).
- Anthropic Messages: ``system`` (text, or text blocks), ``messages`` of content blocks:
  ``text``, ``thinking``, ``tool_use`` (``id``, ``name``, ``input``), ``tool_result``
  (``tool_use_id``, its content as text or blocks) in a user turn.
- OpenAI Responses: ``instructions``, ``input`` (text, or items: messages, ``reasoning`` with
  its summary, ``function_call`` by ``call_id``, ``function_call_output``); the items of one
  reply (reasoning, text, calls) are one assistant message.
- Gemini: ``systemInstruction.parts``, ``contents`` of ``user``/``model`` turns whose parts
  are ``text`` (``thought``: reasoning), ``functionCall``, ``functionResponse`` (its
  ``response.output``, as Gemini's docs name a function's result, is the result).

Each message is ``{"role", "parts"}``; parts are ``text``, ``reasoning``, ``tool_call`` (``id``,
``name``, ``arguments``) and ``tool_call_response`` (``id``, ``response``), each tool result a
``tool`` message of its own. Signatures, encrypted reasoning and redacted thinking are the
provider's opaque data, not the conversation: left out.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

Part = dict[str, Any]
Message = dict[str, Any]

_TEXT_TYPES = ("text", "input_text", "output_text")
_REASONING_FIELDS = ("reasoning_content", "reasoning", "thinking")  # an assistant's, by server


@dataclass(frozen=True)
class Conversation:
    system: list[Part]  # the system instructions' parts
    messages: list[Message]


def conversation(request: Mapping[str, Any]) -> Conversation:
    """The instructions and messages ``request`` sends, in the GenAI conventions' shape."""
    if isinstance(request.get("contents"), list):
        return _gemini(request)
    if "input" in request or "instructions" in request:
        return _responses(request)
    system = _texts(request.get("system"))  # Anthropic's; Chat Completions has none there
    messages: list[Message] = []
    raw = request.get("messages")
    for message in raw if isinstance(raw, list) else []:
        if not isinstance(message, dict):
            continue
        role = str(message.get("role") or "user")
        if role in ("system", "developer"):
            system += _texts(message.get("content"))
        else:
            messages += _chat_message(role, message)
    return Conversation(system, messages)


def _texts(content: Any) -> list[Part]:
    if isinstance(content, str):
        return [{"type": "text", "content": content}] if content else []
    return [p for p in _blocks(content) if p["type"] == "text"]


def _blocks(content: Any) -> Iterator[Part]:
    """Content blocks (Anthropic's, Chat Completions' parts, Responses' content) as parts;
    a ``tool_result`` block as a ``tool_call_response`` part."""
    if isinstance(content, str):
        if content:
            yield {"type": "text", "content": content}
        return
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind in _TEXT_TYPES and isinstance(block.get("text"), str):
            yield {"type": "text", "content": block["text"]}
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            yield {"type": "reasoning", "content": block["thinking"]}
        elif kind == "tool_use":
            yield _call(block.get("id"), block.get("name"), block.get("input"))
        elif kind == "tool_result":
            yield _response(block.get("tool_use_id"), _joined(block.get("content")))


def _joined(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p["content"] for p in _blocks(content) if p["type"] == "text")


def _summary(pieces: Any) -> str:
    """A reasoning item's summary parts (``summary_text``) or raw text, as the trace shows
    them: a blank line between two."""
    found = pieces if isinstance(pieces, list) else []
    texts = [p.get("text") for p in found if isinstance(p, dict)]
    return "\n\n".join(t for t in texts if isinstance(t, str) and t)


def _call(call_id: Any, name: Any, arguments: Any) -> Part:
    return {
        "type": "tool_call",
        "id": call_id if isinstance(call_id, str) and call_id else None,
        "name": name if isinstance(name, str) else "",
        "arguments": arguments,
    }


def _response(call_id: Any, response: Any) -> Part:
    found = call_id if isinstance(call_id, str) and call_id else None
    return {"type": "tool_call_response", "id": found, "response": response}


def _split(role: str, parts: list[Part]) -> list[Message]:
    """One turn's parts as messages in their order: each tool result a ``tool`` message, the
    parts between them one message of ``role``."""
    out: list[Message] = []
    run: list[Part] = []
    for part in parts:
        if part["type"] == "tool_call_response":
            if run:
                out.append({"role": role, "parts": run})
                run = []
            out.append({"role": "tool", "parts": [part]})
        else:
            run.append(part)
    if run or not out:
        out.append({"role": role, "parts": run})
    return out


def _chat_message(role: str, message: Mapping[str, Any]) -> list[Message]:
    if role == "tool":
        call_id = message.get("tool_call_id")
        return [{"role": "tool", "parts": [_response(call_id, _joined(message.get("content")))]}]
    parts: list[Part] = []
    if role == "assistant":
        parts += [
            {"type": "reasoning", "content": message[name]}
            for name in _REASONING_FIELDS
            if isinstance(message.get(name), str) and message[name]
        ][:1]
    parts += _blocks(message.get("content"))
    for call in message.get("tool_calls") or []:
        if isinstance(call, dict):
            function = call.get("function")
            found: Mapping[str, Any] = function if isinstance(function, dict) else call
            parts.append(_call(call.get("id"), found.get("name"), found.get("arguments")))
    return _split(role, parts)


def _responses(request: Mapping[str, Any]) -> Conversation:
    system = _texts(request.get("instructions"))
    items = request.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    messages: list[Message] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        kind, role = item.get("type", "message"), str(item.get("role") or "assistant")
        if kind == "message" and role in ("system", "developer"):
            system += _texts(item.get("content"))
            continue
        if kind == "message":
            found = _split(role, list(_blocks(item.get("content"))))
        elif kind == "reasoning":  # its summary, else its raw text (as vLLM sends it)
            summary = _summary(item.get("summary")) or _summary(item.get("content"))
            found = [{"role": "assistant", "parts": [{"type": "reasoning", "content": summary}]}]
        elif kind == "function_call":
            call = _call(item.get("call_id"), item.get("name"), item.get("arguments"))
            found = [{"role": "assistant", "parts": [call]}]
        elif kind == "function_call_output":
            output = _joined(item.get("output"))
            found = [{"role": "tool", "parts": [_response(item.get("call_id"), output)]}]
        else:
            continue
        for message in found:  # one reply's items: one assistant message
            if messages and message["role"] == messages[-1]["role"] == "assistant":
                messages[-1]["parts"] += message["parts"]
            else:
                messages.append(message)
    return Conversation(system, messages)


def _gemini(request: Mapping[str, Any]) -> Conversation:
    instruction = request.get("systemInstruction")
    system = _gemini_parts(instruction.get("parts") if isinstance(instruction, dict) else None)
    messages: list[Message] = []
    for content in request.get("contents") or []:
        if isinstance(content, dict):
            role = "assistant" if content.get("role") == "model" else "user"
            messages += _split(role, _gemini_parts(content.get("parts")))
    return Conversation([p for p in system if p["type"] == "text"], messages)


def _gemini_parts(parts: Any) -> list[Part]:
    out: list[Part] = []
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict):
            continue
        call, response = part.get("functionCall"), part.get("functionResponse")
        if isinstance(part.get("text"), str):
            kind = "reasoning" if part.get("thought") is True else "text"
            out.append({"type": kind, "content": part["text"]})
        elif isinstance(call, dict):
            out.append(_call(call.get("id"), call.get("name"), call.get("args")))
        elif isinstance(response, dict):
            result = response.get("response")
            if isinstance(result, dict) and set(result) == {"output"}:
                result = result["output"]
            out.append(_response(response.get("id"), result))
    return out
