"""What a Responses API request sends: the engine's chat-shaped messages as ``input`` items,
and the parameters each model takes.

The engine speaks Chat Completions (core/running/backend.py): a system message, user and
assistant messages, an assistant's ``tool_calls`` and ``tool`` results. Here they become the
Responses API's shapes: the system prompt is ``instructions``; a call is a ``function_call``
item (``call_id``, ``name``, ``arguments``) and its result a ``function_call_output``; the
reasoning items the reply produced (carried in the message's PROVIDER, responses_stream.py)
go back in their place, before the calls they led to.

Stateless, not ``previous_response_id``: every request is ``store: false`` and holds the
whole conversation, reasoning items sent back with their ``encrypted_content`` (asked for
with ``include``). It works for organisations with zero data retention (where nothing may be
stored), with servers that keep no responses (most local ones), and for forks, replays and
reruns of a step, which send a conversation the server never saw. OpenAI answers a request
whose function call lacks the reasoning item before it with a 400, so the item is required.

Reasoning models (model_traits.is_openai_reasoning_model) take no temperature or top_p.
There is no ``stop`` in the Responses API: in text ReAct the client-side cut (the turn
reader's scanner, which closes the stream at an invented Observation) is the only guard.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from typing import Any

from sandbox_app.backends.catalogue.request_fields import RESPONSES, place
from sandbox_app.backends.responses_api.responses_stream import CARRY_KEY
from sandbox_app.core.running.backend import PROVIDER, Message, StreamParams, ToolSchema
from sandbox_app.core.running.model_traits import is_openai_reasoning_model

# The keywords client.responses.create() takes of what request() writes; any other key (a
# lane setting's request_key) goes through the SDK's extra_body, into the same JSON.
SDK_KEYWORDS = frozenset(
    {
        "model", "input", "instructions", "stream", "store", "include", "reasoning",
        "max_output_tokens", "temperature", "top_p", "tools",
    }
)  # fmt: skip


def request(
    messages: Sequence[Message], params: StreamParams, refused: Set[str] = frozenset()
) -> dict[str, Any]:
    """The JSON body of one streamed request (``refused``: parameters the model refused)."""
    reasoning_model = is_openai_reasoning_model(params.model)
    instructions, items = input_items(messages)
    body: dict[str, Any] = {"model": params.model}
    if instructions:
        body["instructions"] = instructions
    body |= {"input": items, "stream": True, "store": False}
    if params.tools:  # native tool calling; tool_choice "auto" is the API's default
        body["tools"] = [function_tool(tool) for tool in params.tools]
    place(body, params, RESPONSES)
    if reasoning_model or "reasoning" in body:
        # The summary is what is shown; the encrypted content asked for only when the model
        # reasons: others answer 400 "Encrypted content is not supported with this model".
        body.setdefault("reasoning", {})["summary"] = "auto"
        body["include"] = ["reasoning.encrypted_content"]
    if reasoning_model:  # they take no sampling
        for name in ("temperature", "top_p"):
            body.pop(name, None)
    for name, value in params.extra:  # never over what the rules above wrote
        body.setdefault(name, value)
    for name in refused:
        body.pop(name, None)
    return body


def sdk_arguments(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as client.responses.create() takes it: its other keys in ``extra_body``."""
    extra = {k: v for k, v in body.items() if k not in SDK_KEYWORDS}
    known = {k: v for k, v in body.items() if k in SDK_KEYWORDS}
    return {**known, "extra_body": extra} if extra else known


def function_tool(tool: ToolSchema) -> dict[str, Any]:
    """A Chat Completions tool (``{"type": "function", "function": {…}}``) as the Responses
    API's function tool, its name, description and parameters at the top level."""
    function = tool.get("function") or {}
    shaped = {"type": "function", "name": function.get("name", "")}
    for key in ("description", "parameters"):
        if key in function:
            shaped[key] = function[key]
    return shaped


def input_items(messages: Sequence[Message]) -> tuple[str, list[dict[str, Any]]]:
    """The instructions (the leading system messages) and the conversation as input items."""
    instructions: list[str] = []
    items: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        content = message.get("content") or ""
        if role == "system" and not items:
            instructions.append(content)
        elif role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.get("tool_call_id", ""),
                    "output": content,
                }
            )
        elif role == "assistant":
            items += assistant_items(message)
        else:  # user, and a system message later on (the API takes both roles)
            items.append({"role": role, "content": content})
    return "\n\n".join(instructions), items


def assistant_items(message: Message) -> list[dict[str, Any]]:
    """A reply as the items it was made of: in the order the server produced them when its
    output was carried (reasoning, message, calls), else its text then its calls."""
    content = message.get("content") or ""
    calls = {call.get("id"): call for call in message.get("tool_calls") or ()}
    carried = (message.get(PROVIDER) or {}).get(CARRY_KEY) or ()
    items: list[dict[str, Any]] = []
    text_placed = not content
    for item in carried:
        kind = item.get("type")
        if kind == "reasoning":
            items.append(dict(item))
        elif kind == "message" and not text_placed:
            items.append({"role": "assistant", "content": content})
            text_placed = True
        elif kind == "function_call" and item.get("call_id") in calls:
            items.append(call_item(calls.pop(item["call_id"]), item.get("id")))
    if not text_placed:  # the text before the calls, as the model wrote it
        first_call = next(
            (i for i, item in enumerate(items) if item.get("type") == "function_call"),
            len(items),
        )
        items.insert(first_call, {"role": "assistant", "content": content})
    items += [call_item(call, None) for call in calls.values()]
    return items


def call_item(call: dict[str, Any], item_id: str | None) -> dict[str, Any]:
    function = call.get("function") or {}
    item = {
        "type": "function_call",
        "call_id": call.get("id", ""),
        "name": function.get("name", ""),
        "arguments": function.get("arguments") or "{}",
    }
    if item_id:  # the server's own id: pairs the call with the reasoning item before it
        item["id"] = item_id
    return item
