"""Gemini's request: the engine's Chat-shaped messages as the REST API's JSON body.

Pure data work, no SDK import: the body is built as ``models/{model}:streamGenerateContent``
takes it (camelCase, as the Gemini API's REST reference writes it: ``contents``,
``systemInstruction``, ``generationConfig``, ``tools``), sent as it is by gemini_stream.py,
and also what the request inspector shows. A thought signature travels as base64 text, the
way the REST API writes it.

What goes back (Gemini API docs, "Thought signatures"): a function call the model made is
sent back in the next request with the ``thoughtSignature`` its part carried, unchanged;
Gemini 3 answers 400 "Function call is missing a thought_signature" without it. The stream's
decoder yields the signatures as ``Delta(carry={CARRY_KEY: {call id: signature}})``; the
engine keeps them in the assistant message under ``provider`` and :func:`contents` reads them
back. Thought summaries (parts with ``thought: true``) are shown as thinking and never sent
back.
"""

from __future__ import annotations

from typing import Any

from sandbox_app.backends.catalogue.request_fields import GEMINI, place
from sandbox_app.core.running.backend import PROVIDER, Message, StreamParams
from sandbox_app.core.untrusted.file_reader import parse_json_text

CARRY_KEY = "gemini_signatures"  # {call id: base64 signature}, in Delta.carry / "provider"
TEXT_SIGNATURE = ""  # the key, in that mapping, of a signature on a text part
LOCAL_ID = "gemini-call-"  # ids the decoder made up for calls the API sent without one
MAX_STOP_SEQUENCES = 5  # the API's limit on stopSequences
# reasoning_effort → thinkingLevel, for the models that take a level (Gemini 3).
LEVELS = {"none": "minimal", "minimal": "minimal", "low": "low", "medium": "medium"}
LEVELS |= {"high": "high", "xhigh": "high"}
# reasoning_effort → thinkingBudget for Gemini 2.5, as Gemini's OpenAI compatibility maps it.
BUDGETS = {"none": 0, "minimal": 1024, "low": 1024, "medium": 8192, "high": 24576}
BUDGETS |= {"xhigh": 24576}


def takes_level(model: str) -> bool:
    """Gemini 3 models take ``thinkingLevel``; 2.5 and older a ``thinkingBudget``."""
    return model.removeprefix("models/").startswith("gemini-3")


def thinking_config(params: StreamParams) -> dict[str, Any]:
    """Thoughts always asked for as summaries; an explicit budget wins over an effort (the
    API refuses a request with both a budget and a level)."""
    config: dict[str, Any] = {"includeThoughts": True}
    effort = params.reasoning_effort
    if params.thinking_budget is not None:
        config["thinkingBudget"] = params.thinking_budget
    elif effort in LEVELS and takes_level(params.model):
        config["thinkingLevel"] = LEVELS[effort]
    elif effort in BUDGETS:
        config["thinkingBudget"] = BUDGETS[effort]
    return config


def declaration(schema: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI-style tool schema as a function declaration (its JSON Schema as given:
    ``parametersJsonSchema`` takes full JSON Schema, where ``parameters`` takes a subset)."""
    function = schema.get("function", schema)
    declared: dict[str, Any] = {"name": function["name"]}
    if function.get("description"):
        declared["description"] = function["description"]
    if function.get("parameters"):
        declared["parametersJsonSchema"] = function["parameters"]
    return declared


def request(messages: list[Message], params: StreamParams) -> dict[str, Any]:
    """The JSON body of one streamGenerateContent request (the model goes in its URL)."""
    config: dict[str, Any] = {"thinkingConfig": thinking_config(params)}
    if params.stop:
        config["stopSequences"] = list(params.stop[:MAX_STOP_SEQUENCES])
    body: dict[str, Any] = {"contents": contents(messages), "generationConfig": config}
    system = "\n\n".join(str(m.get("content") or "") for m in messages if m["role"] == "system")
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    # Tools are declarations only: the engine runs them. No toolConfig: its default mode
    # (AUTO, the model chooses between a call and text) is what both ReAct styles need.
    if params.tools:
        body["tools"] = [{"functionDeclarations": [declaration(t) for t in params.tools]}]
    return place(body, params, GEMINI)


def contents(messages: list[Message]) -> list[dict[str, Any]]:
    """Chat messages as Gemini contents: user and model turns, tool results as
    ``functionResponse`` parts of a user turn, neighbours of one role joined."""
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
            if call_id and not call_id.startswith(LOCAL_ID):  # only an id the API gave
                response["id"] = call_id
            parts, turn = [{"functionResponse": response}], "user"
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
            parts[-1]["thoughtSignature"] = signatures[TEXT_SIGNATURE]
    for call in message.get("tool_calls") or []:
        function = call["function"]
        names[call["id"]] = function["name"]
        try:
            args = parse_json_text(function.get("arguments") or "{}", "the arguments")
        except ValueError:
            args = {}
        called: dict[str, Any] = {"name": function["name"], "args": args}
        if not call["id"].startswith(LOCAL_ID):  # an id of the API's own goes back with it
            called["id"] = call["id"]
        part: dict[str, Any] = {"functionCall": called}
        if call["id"] in signatures:  # exactly as received: the API checks it
            part["thoughtSignature"] = signatures[call["id"]]
        parts.append(part)
    return parts
