"""Tool calls written in Qwen3-Coder's XML, in the reply's text.

Qwen3-Coder (and the templates that copy it) writes a call as::

    <tool_call>
    <function=get_weather>
    <parameter=city>
    Paris
    </parameter>
    </function>
    </tool_call>

Servers turn this into a native tool call (vLLM's ``qwen3_coder`` tool parser, llama.cpp's
Qwen3-Coder chat format); in text ReAct it reaches us as content, so the parser reads it here.
The call becomes an :class:`ActionObject` whose input is the JSON object of its parameters.

Values are kept as the text written (one newline after ``<parameter=…>`` and one before its
closing tag trimmed, as vLLM does): a tool that takes one string gets that text back through
``plain_input``, and a tool with a JSON schema gets each value typed by its schema
(:mod:`sandbox_app.core.tools.object_inputs`), as vLLM types them.

Forgiving where streams are: a parameter, function or call whose closing tag never came (a
stream cut by a stop sequence, a model that skipped ``</parameter>``) ends where the next tag
starts or the text ends; ``<function=…>`` without ``<tool_call>`` counts too (vLLM's fallback).
A ``<function=`` whose name never closed with ``>`` on its line is no call, and the next one is
tried. Every tag is found with one forward scan, so reading is linear in the text's length.
"""

from __future__ import annotations

import json
import re

from sandbox_app.core.tools.action_objects import ActionObject

__all__ = ["FUNCTION", "find_xml_call", "read_xml_call"]

FUNCTION = "<function="
_PARAMETER = "<parameter="
# Where a value, or a function's parameters, end: a closing tag, the next parameter, the end of
# the call. One alternation, so each value costs one scan to its own end.
_VALUE_END = re.compile(r"</parameter>|<parameter=|</function>|</tool_call>")
_BODY_END = re.compile(r"</function>|</tool_call>|<function=")
_MAX_NAME = 128  # a tag name is one short word; anything longer is prose
_CALLS_TRIED = 3  # a malformed <function= (no ">") is skipped for the next few


def find_xml_call(text: str) -> ActionObject | None:
    """The first well-formed XML call anywhere in ``text``, or None."""
    pos = 0
    for _ in range(_CALLS_TRIED):
        start = text.find(FUNCTION, pos)
        if start == -1:
            return None
        found = read_xml_call(text, start)
        if found is not None:
            return found
        pos = start + len(FUNCTION)
    return None


def read_xml_call(text: str, start: int = 0) -> ActionObject | None:
    """The call whose ``<function=`` tag is the first in ``text[start:]``, or None."""
    start = text.find(FUNCTION, start)
    if start == -1:
        return None
    name_at = start + len(FUNCTION)
    name, body_at = _tag_name(text, name_at)
    if name is None:
        return None
    end = _BODY_END.search(text, body_at)
    body_end = end.start() if end is not None else len(text)
    arguments = _parameters(text, body_at, body_end)
    if not arguments:
        return ActionObject(name, "", no_arguments=True)
    return ActionObject(name, json.dumps(arguments, ensure_ascii=False), no_arguments=False)


def _tag_name(text: str, at: int) -> tuple[str | None, int]:
    """The name in ``<function=NAME>`` / ``<parameter=NAME>`` from ``at``, and where the tag
    ends; None when no ``>`` closes it on its line."""
    close = text.find(">", at, at + _MAX_NAME + 1)
    if close == -1:
        return None, at
    name = text[at:close].strip()
    if not name or "\n" in name or "<" in name:
        return None, at
    return name, close + 1


def _parameters(text: str, pos: int, end: int) -> dict[str, str]:
    found: dict[str, str] = {}
    while True:
        tag = text.find(_PARAMETER, pos, end)
        if tag == -1:
            return found
        key, value_at = _tag_name(text, tag + len(_PARAMETER))
        if key is None:
            pos = tag + len(_PARAMETER)
            continue
        stop = _VALUE_END.search(text, value_at, end)
        value_end = stop.start() if stop is not None else end
        found[key] = _trimmed(text[value_at:value_end])
        pos = stop.end() if stop is not None and stop.group() == "</parameter>" else value_end


def _trimmed(value: str) -> str:
    """One newline after the opening tag and one before the closing tag are the format's own
    (vLLM trims exactly these); indentation inside a multi-line value is the value's."""
    if value.startswith("\r\n"):
        value = value[2:]
    elif value.startswith("\n"):
        value = value[1:]
    if value.endswith("\r\n"):
        value = value[:-2]
    elif value.endswith("\n"):
        value = value[:-1]
    return value
