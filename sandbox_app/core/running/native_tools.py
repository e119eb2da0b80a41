"""Native tool calling: the tools as the API's JSON schemas, streamed calls, tool messages.

In this lane mode the model does not write ``Action: tool[input]``: the enabled tools go in
the request's ``tools``, the model answers with ``tool_calls`` (its arguments in JSON
fragments), and each result goes back as a ``tool`` message. The trace keeps the ReAct roles
so a text lane and a native lane line up: the model's text is its Thought, each call an
Action line, each result an Observation, a reply that ends without a call the Answer.

A tool takes one string (core/tools/base.py), so its schema has one string parameter named
after its input hint ("expression", "query", "answer").
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from sandbox_app.core.running.backend import PROVIDER, Message, ToolCallPiece, ToolSchema
from sandbox_app.core.tools import Tool
from sandbox_app.core.untrusted.file_reader import parse_json_text

# The prompt's {format} in native mode: what the ReAct format asks for, in API terms.
NATIVE_CORRECTION = (
    "Error: your reply had no tool call and no answer. Call a tool, or reply with the answer."
)
# How models write a call in their own text (Hermes/Qwen, Llama 3.1, Mistral): in the content,
# it means the server has no tool parser running for this model.
CALL_MARKERS = ("<tool_call>", "<|python_tag|>", "[TOOL_CALLS]")
THOUGHT_LABEL = "Thought: "
ACTION_LABEL = "Action: "
ANSWER_LABEL = "Answer: "  # what the trace shows for a Thought that turned out to be the answer
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def parameter_name(tool: Tool) -> str:
    hint = tool.input_hint.strip().replace(" ", "_")
    return hint if _IDENTIFIER.fullmatch(hint) else "input"


def tool_schema(tool: Tool) -> ToolSchema:
    own = getattr(tool, "parameters", None)  # a tool that describes its input (MCP's)
    if isinstance(own, dict):
        function = {"name": tool.name, "description": tool.description, "parameters": own}
        return {"type": "function", "function": function}
    name = parameter_name(tool)
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": {
                "type": "object",
                "properties": {name: {"type": "string", "description": tool.input_hint}},
                "required": [name],
            },
        },
    }


@dataclass(frozen=True)
class NativeCall:
    id: str
    name: str
    arguments: str  # JSON text, as the model wrote it


class CallCollector:
    """Joins streamed tool-call pieces into calls and says what each adds to the trace.

    Pieces are joined by index; a piece at a known index that brings another id or another
    name starts a new call (Ollama 0.20 sends index 0 for every parallel call, each with its
    own id: ollama/ollama#15457). A repeated id (SGLang) or an empty one (vLLM) continues.
    """

    def __init__(self) -> None:
        self._calls: list[list[str]] = []  # [id, name, arguments], in order of arrival
        self._slot: dict[int, int] = {}  # the wire's index → the call it is writing now
        self._shown: int | None = None  # the call whose Action line is being written

    def feed(self, pieces: Iterable[ToolCallPiece]) -> str:
        shown: list[str] = []
        for piece in pieces:
            slot = self._slot.get(piece.index)
            call = self._calls[slot] if slot is not None else None
            if call is None or _another_call(call, piece):
                slot = self._slot[piece.index] = len(self._calls)
                call = ["", "", ""]
                self._calls.append(call)
            call[0] = call[0] or piece.id
            call[1] = call[1] or piece.name
            call[2] += piece.arguments
            if call[1] and self._shown != slot:
                shown.append(self.close() + f"{ACTION_LABEL}{call[1]}(" + call[2])
                self._shown = slot
            elif self._shown == slot:
                shown.append(piece.arguments)
        return "".join(shown)

    def close(self) -> str:
        """The end of the Action line being written, if one is."""
        if self._shown is None:
            return ""
        self._shown = None
        return ")\n"

    def calls(self) -> list[NativeCall]:
        return [
            NativeCall(call[0] or f"call_{index}", call[1], call[2])
            for index, call in enumerate(self._calls)
            if call[1]
        ]


def _another_call(call: list[str], piece: ToolCallPiece) -> bool:
    return bool(
        (piece.id and call[0] and piece.id != call[0])
        or (piece.name and call[1] and piece.name != call[1])
    )


def call_input(tool: Tool | None, call: NativeCall) -> tuple[str, str | None]:
    """The string a tool receives from a call's JSON arguments, or an error for the model."""
    text = call.arguments.strip()
    try:
        # A model's arguments, by the file reader's rules: 100,000 brackets are not JSON here,
        # never a RecursionError.
        arguments = parse_json_text(text, "the arguments") if text else {}
    except ValueError:
        return "", f"Error: the arguments of {call.name} are not valid JSON: {text[:80]}"
    if isinstance(arguments, str):
        return arguments, None
    if not isinstance(arguments, dict):
        return json.dumps(arguments), None
    if tool is not None and isinstance(getattr(tool, "parameters", None), dict):
        return json.dumps(arguments), None  # the tool reads its JSON object itself
    wanted = parameter_name(tool) if tool is not None else "input"
    value = arguments.get(wanted)
    if value is None and len(arguments) == 1:
        value = next(iter(arguments.values()))  # the one value, whatever the model named it
    if isinstance(value, str):
        return value, None
    if value is None:
        return "", f'Error: {call.name} needs "{wanted}" (a string); got {text[:80]}'
    return json.dumps(value), None


# A ReAct text action ("Action: search[…]", "Action 2: Search[…]", "Action: search" + input)
# at the start of a line: a reply to a request with tools that is a text action, not a call.
_TEXT_ACTION = re.compile(r"^[ \t]*Action(?: \d+)?[ \t]*:[ \t]*(\S[^\n]{0,60})", re.MULTILINE)


def unparsed_call(content: str) -> str | None:
    """The one line for a reply that wrote its tool call as text, or None: a model's own
    call syntax the server did not parse, or a ReAct text action from a server (or model)
    that ignored the ``tools`` it was sent — never taken as the final answer."""
    marker = next((m for m in CALL_MARKERS if m in content), None)
    if marker is None:
        action = _TEXT_ACTION.search(content)
        if action is None:
            return None
        return (
            f"The server returned no tool calls, and the reply looks like a text action "
            f"(Action: {action.group(1).strip()}): this server or model ignores native tool "
            "calls; set Tool calls to ReAct text for it."
        )
    return (
        f"The model wrote its tool call as text ({marker}…); the server did not read it as "
        "one: start the server with its tool parser (llama.cpp: --jinja; vLLM: "
        "--enable-auto-tool-choice --tool-call-parser), or set Tool calls to ReAct text."
    )


def finish_answer(calls: Iterable[NativeCall], resolve: Callable[[str], Tool | None]) -> str | None:
    """The answer in a call to the finish tool, which ends the run as text's ``finish[…]``
    does (parser.py); None without one, or when its arguments cannot be read (that call then
    goes back to the model as an error, like any other)."""
    for call in calls:
        tool = resolve(call.name)
        if tool is not None and tool.name == "finish":
            answer, refused = call_input(tool, call)
            return answer if refused is None else None
    return None


def message_text(message: Message) -> str:
    """What a message says, for a token estimate: its content (None for a call-only reply)
    and its calls' arguments."""
    calls = message.get("tool_calls") or ()
    return (message.get("content") or "") + "".join(c["function"]["arguments"] for c in calls)


def assistant_message(
    content: str, calls: list[NativeCall], carry: dict[str, Any] | None = None
) -> Message:
    """The reply sent back with its calls; ``carry``: what its backend said must come back
    with it (core/running/backend.py PROVIDER), under that key."""
    message: Message = {
        "role": "assistant",
        "content": content or None,
        "tool_calls": [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments or "{}"},
            }
            for call in calls
        ],
    }
    if carry:
        message[PROVIDER] = dict(carry)
    return message


def tool_message(call: NativeCall, text: str) -> Message:
    return {"role": "tool", "tool_call_id": call.id, "content": text}
