"""Tool calls written as JSON objects, and the names and inputs they carry.

Models and other agent frameworks write a tool call as a JSON object, bare or in a code fence:

* LangChain: ``{"action": "search", "action_input": "…"}`` (``"Final Answer"`` ends the run)
* ``{"tool_name": "search", "tool_arguments": {"query": "…"}}``
* function calling: ``{"name": "search", "arguments": {"query": "…"}}``, also Llama's
  ``"parameters"`` and OpenAI's ``{"type": "function", "function": {…}}`` wrapper
* Hermes / Qwen: ``<tool_call>{"name": "search", "arguments": {…}}</tool_call>``

Our tools take one string. A string argument is the input; an object's JSON text is the input,
and the router hands a tool the one string inside an object like ``{"q": "refund days"}``
(:func:`plain_input`), as it does for an ``Action Input: {"q": "…"}`` line.

JSON is only ever read with :func:`json.loads`; nothing the model wrote is evaluated.
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from typing import Any

__all__ = ["ActionObject", "balanced", "find_action_object", "name_key", "plain_input"]

# Keys that name the tool, and keys that carry its input, in the order they are tried.
_NAME_KEYS = ("action", "tool_name", "tool", "name")
_INPUT_KEYS = (
    "action_input",
    "input",
    "tool_input",
    "tool_arguments",
    "arguments",
    "parameters",
    "args",
)
_TOOL_CALL = "<tool_call>"
_DECODER = json.JSONDecoder()
_BRACES_TRIED = 3  # a bare object anywhere in the text: tried from its first few braces


@dataclass(frozen=True)
class ActionObject:
    """One tool call read from a JSON object."""

    name: str  # as written, stripped
    input: str  # a string argument, or the JSON text of any other argument
    no_arguments: bool  # the arguments were {}, [] or null: a call that takes no input


def name_key(name: str) -> str:
    """The form two spellings of one tool name share: ``Web Search``, ``web-search``, ``webSearch``
    and ``web_search`` all give ``websearch``; ``Météo`` and ``météo`` give ``météo``."""
    # NFKC first: "météo" typed with a combining accent, or in full-width letters, is one name.
    folded = unicodedata.normalize("NFKC", name).casefold()
    return "".join(folded.replace("-", " ").replace("_", " ").split())


def plain_input(input: str) -> str:
    """``{"q": "refund days"}`` (an ``Action Input`` line's JSON) → ``refund days``.

    An object with one key whose value is a string gives that string; anything else is kept.
    """
    if not input.startswith("{"):
        return input
    try:
        value = json.loads(input)
    except ValueError:
        return input
    if isinstance(value, dict) and len(value) == 1:
        (only,) = value.values()
        if isinstance(only, str):
            return only
    return input


def find_action_object(text: str) -> ActionObject | None:
    """The tool call in ``text``: after a ``<tool_call>`` tag, else a bare object."""
    tag = text.find(_TOOL_CALL)
    if tag != -1:
        found = read_action_object(text[tag + len(_TOOL_CALL) :])
        if found is not None:
            return found
    pos = 0
    for _ in range(_BRACES_TRIED):
        start = text.find("{", pos)
        if start == -1:
            return None
        found = read_action_object(text[start:])
        if found is not None:
            return found
        pos = start + 1
    return None


def read_action_object(text: str) -> ActionObject | None:
    """The tool call in the first JSON object of ``text``, or None."""
    start = text.find("{")
    if start == -1:
        return None
    try:  # the decoder stops at the object's closing brace, at C speed
        blob, _ = _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    return _from_blob(blob, nested=False)


def _from_blob(blob: Any, *, nested: bool) -> ActionObject | None:
    if not isinstance(blob, dict):
        return None
    name = next(
        (v.strip() for k in _NAME_KEYS if isinstance(v := blob.get(k), str) and v.strip()), None
    )
    if name is None:
        # OpenAI's {"type": "function", "function": {"name": …, "arguments": "…"}}
        return None if nested else _from_blob(blob.get("function"), nested=True)
    key = next((k for k in _INPUT_KEYS if k in blob), None)
    if key is None:
        return ActionObject(name, "", no_arguments=False)
    value = blob[key]
    if isinstance(value, str):
        text = value.strip()
        return ActionObject(name, "" if text == "{}" else text, no_arguments=text == "{}")
    if value is None or value == {} or value == []:
        return ActionObject(name, "", no_arguments=True)
    return ActionObject(name, json.dumps(value, ensure_ascii=False), no_arguments=False)


def balanced(
    text: str, start: int, opener: str, closer: str, *, quoted: bool = False
) -> str | None:
    """Text between ``text[start]`` (an opener) and its matching closer, or None if unclosed.

    With ``quoted`` (JSON), brackets inside string literals don't count.
    """
    depth = 0
    in_string = escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif quoted and ch == '"':
            in_string = True
        elif ch == opener:
            depth += 1
        elif ch == closer:
            depth -= 1
            if depth == 0:
                return text[start + 1 : i]
    return None
