"""The input a tool that takes a JSON object gets: keyword-style inputs read as an object, and
values typed by the tool's schema.

Models write an object's fields as keywords, in a call or on an Action Input line::

    Action: weather[city="Paris", unit="C"]
    Action: weather(city="Paris", days=3)
    Action Input: city='Paris', unit="C"

For a tool that takes a JSON object (one with a ``parameters`` schema, like an MCP server's)
that is the object ``{"city": "Paris", "unit": "C"}``: a quoted value is a string (backslash
escapes its quote), and a bare one is a number, ``true``/``false``/``null`` (Python's ``True``
/ ``False`` / ``None`` too) as JSON values, else its text. A tool that takes one string gets the
text as written: the parser never rewrites an input, only the router, which knows the tool.

A JSON object's string values are typed by the schema as vLLM's Qwen3-Coder parser types XML
parameters (:mod:`sandbox_app.core.react_format.xml_calls`): a value written ``2`` for an
``integer`` property becomes ``2``, ``{"w": 1}`` for an ``object`` property an object; a value
that does not fit its type, or a property the schema does not type, stays the text written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["keyword_object", "object_input"]

# key = value, the key a name in any script; the value quoted ("…" or '…') or bare up to a comma.
_KEY = re.compile(r"[ \t\r\n]*([^\W\d][\w\-]{0,63})[ \t]*=[ \t]*")
_QUOTED = {
    '"': re.compile(r'"((?:[^"\\]|\\.)*)"', re.DOTALL),
    "'": re.compile(r"'((?:[^'\\]|\\.)*)'", re.DOTALL),
}
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}
_PYTHON = {"True": True, "False": False, "None": None}
_TYPES: dict[str, tuple[type, ...]] = {
    "integer": (int,),
    "number": (int, float),
    "float": (int, float),  # not JSON Schema, but vLLM's test schemas write it
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


class _Bare(str):
    """A keyword value written without quotes: a number or a literal may be meant."""


def keyword_object(text: str) -> dict[str, Any] | None:
    """``city="Paris", unit='C', days=3`` → its fields (bare values still text), else None."""
    found: dict[str, Any] = {}
    pos, size = 0, len(text)
    while True:
        key = _KEY.match(text, pos)
        if key is None:
            return None
        pos = key.end()
        quote = text[pos : pos + 1]
        if quote in _QUOTED:
            quoted = _QUOTED[quote].match(text, pos)
            if quoted is None:
                return None
            found[key.group(1)] = _ESCAPE.sub(_unescape, quoted.group(1))
            pos = quoted.end()
            comma = _after(text, pos)
            if comma is None:
                return None
        else:
            comma = text.find(",", pos)
            comma = size if comma == -1 else comma
            bare = text[pos:comma].strip()
            if not bare or "=" in bare:  # "a=1 b=2" is not this form
                return None
            found[key.group(1)] = _Bare(bare)
        if comma >= size or not text[comma + 1 :].strip():
            return found
        pos = comma + 1


def _after(text: str, pos: int) -> int | None:
    """Where the comma after a quoted value is (the text's end when none follows), or None when
    anything else follows it."""
    rest = len(text) - len(text[pos:].lstrip())
    if rest >= len(text):
        return len(text)
    return rest if text[rest] == "," else None


def _unescape(m: re.Match[str]) -> str:
    return _ESCAPES.get(m.group(1), m.group(1))


def object_input(input: str, schema: Mapping[str, Any]) -> str:
    """What a tool with the JSON schema ``schema`` gets for ``input``: a keyword-style input as
    a JSON object, a JSON object's string values typed by the schema, anything else as it is."""
    stripped = input.strip()
    if stripped.startswith("{"):
        try:
            value = json.loads(stripped)
        except (ValueError, RecursionError):
            return input
        if not isinstance(value, dict):
            return input
        typed, changed = _typed(value, schema)
        return json.dumps(typed, ensure_ascii=False) if changed else input
    keywords = keyword_object(stripped)
    if keywords is None:
        return input
    typed, _ = _typed(keywords, schema)
    return json.dumps(typed, ensure_ascii=False)


def _typed(values: dict[str, Any], schema: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    out: dict[str, Any] = {}
    changed = False
    for key, value in values.items():
        types = _types(properties.get(key))
        out[key] = new = _value(value, types)
        changed = changed or (isinstance(value, str) and not isinstance(new, str))
    return out, changed


def _value(value: Any, types: set[str]) -> Any:
    if not isinstance(value, str):
        return value
    bare = isinstance(value, _Bare)
    text = str(value)
    if "string" in types or (not types and not bare):
        return text  # what was written, for a string (or, in JSON, an untyped) field
    decoded, ok = _decode(text, python=bare)
    if not ok:
        return text
    if not types:  # a bare keyword value for an untyped field: numbers and literals only
        return decoded if decoded is None or isinstance(decoded, (bool, int, float)) else text
    if decoded is None and "null" in types:
        return None
    fits = any(_fits(decoded, t) for t in types)
    return decoded if fits else text


def _fits(value: Any, type_name: str) -> bool:
    kinds = _TYPES.get(type_name)
    if kinds is None:
        return False
    if isinstance(value, bool):
        return type_name == "boolean"
    return isinstance(value, kinds)


def _decode(text: str, *, python: bool) -> tuple[Any, bool]:
    """``text`` as a JSON value (NaN and Infinity are not JSON), or (None, False)."""
    if python and text in _PYTHON:
        return _PYTHON[text], True
    try:
        return json.loads(text, parse_constant=_no_constant), True
    except (ValueError, RecursionError):
        return None, False


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def _types(prop: Any) -> set[str]:
    """The JSON types a property's schema allows: ``type`` (a name or a list), or the types of
    its ``anyOf`` / ``oneOf`` choices (Pydantic's ``Optional[int]``)."""
    if not isinstance(prop, Mapping):
        return set()
    kind = prop.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    found: set[str] = set()
    for choices in (prop.get("anyOf"), prop.get("oneOf")):
        if isinstance(choices, list):
            for choice in choices:
                found |= _types(choice)
    return found
