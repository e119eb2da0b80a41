"""Parse one ReAct turn, in any of the four dialects, into an action, an answer or nothing.

Dialects (auto-detected unless one is chosen):

* ``bracket`` — ``Action: calculator[20 * 12 * 7]`` … ``Answer: $1,680 per year``
* ``paren`` — ``Action: calculator(128 + 256)`` … ``Final Answer: 668``
* ``action_input`` — ``Action: webSearch`` + ``Action Input: {"q": "…"}``, and
  tool calls written as JSON objects (``{"action": "search", "action_input": "…"}``,
  ``<tool_call>{"name": …, "arguments": …}</tool_call>`` …; see
  :mod:`sandbox_app.core.tools.action_objects`)
* ``paper`` — ``Thought 2: …`` / ``Action 2: Search[…]`` / ``Action 5: Finish[…]``

Qwen3-Coder's XML calls (``<tool_call><function=NAME><parameter=KEY>value</parameter>…``,
:mod:`sandbox_app.core.react_format.xml_calls`) belong to the ``action_input`` form, like the
JSON objects.

What each dialect accepts, and the grammar of a label line, live in
:mod:`sandbox_app.core.react_format.dialects`.

The first directive wins, labels count only at the start of a line, and everything from a
fabricated ``Observation`` label onward is cut by :class:`TurnScanner` before parsing. A final
answer is the end: everything after ``Final Answer:`` is the answer, later labels, JSON action
blobs and tool calls included, and nothing in it is ever run. Every
step works within one label's segment of the text, so parsing is linear in the text's length.

A label's value may start on a later line (``Action:`` ⏎ ``Terminal``). Tool names are
reported as written, lower-cased, and may be a few words (``Action: Web Search``) in any script
(``Action: 搜索[东京]``, ``Action: météo``: letters, digits, ``_``, ``-``, ``.``); the router
matches them to an enabled tool (``web_search``). ``tool()`` calls a tool with no input. An
input is reported as written: keywords (``city="Paris"``) become an object only for a tool
that takes one, in the router (:mod:`sandbox_app.core.tools.object_inputs`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from sandbox_app.core.react_format.dialects import LABEL_LINE, Dialect, Label, label_of, spec
from sandbox_app.core.react_format.scanner import TurnScanner
from sandbox_app.core.react_format.xml_calls import FUNCTION, find_xml_call, read_xml_call
from sandbox_app.core.tools.action_objects import (
    ActionObject,
    balanced,
    find_action_object,
    name_key,
    plain_input,
    read_action_object,
)
from sandbox_app.core.tools.router import INPUT_TOO_LONG

__all__ = ["Turn", "TurnScanner", "Unclosed", "parse_turn"]

Kind = Literal["action", "answer", "none"]
# A name in any script: a letter or "_", then letters, digits, "_", ".", "-" and the combining
# marks some scripts write inside words (Devanagari's vowel signs, decomposed accents), which
# Python's \w leaves out. No mark can start a name, so no two parts overlap.
_MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670"
    "\u06d6-\u06ed\u0900-\u0dff\u0e31-\u0e3a\u0e47-\u0e4e\u1ab0-\u1aff\u1dc0-\u1dff"
    "\u20d0-\u20ff\ufe20-\ufe2f"
)
_WORD = r"[^\W\d][\w.\-" + _MARKS + r"]{0,63}"
# A tool name of up to four words ("Web Search"). Words and the spaces between them are
# disjoint character sets, so the pattern cannot backtrack badly.
_NAME = r"(" + _WORD + r"(?:[ \t]" + _WORD + r"){0,3})"
_CALL = re.compile(_NAME + r"[ \t]*([\[(])")
_BARE_NAME = re.compile(_NAME + r"[ \t*_`]*$")
_NO_ACTION = {"none", "n/a", "na", "null", "nothing", "no action"}
_ANSWER_NAMES = {"finish", "finalanswer", "answer"}  # compared by name_key
_OBJECT_START = ("{", "<tool_call>", FUNCTION)
_OPENERS = {"[": "]", "(": ")"}


@dataclass(frozen=True)
class Unclosed:
    """An action call whose bracket never closed, like a reply cut by max_tokens mid-input.

    Never an action (the text may still be streaming); the engine uses it to tell the model
    why its reply did not count.
    """

    tool: str  # lower-cased, as in Turn.tool
    opener: str  # "[" or "("
    length: int  # characters of input after the opener, stripped as a closed input would be

    @property
    def closer(self) -> str:
        return _OPENERS[self.opener]


@dataclass(frozen=True)
class Turn:
    """One parsed turn. ``kept`` + ``dropped`` is the text that was parsed.

    ``unclosed`` is set only on a ``none`` turn whose first unclosed action call is all it had.
    """

    kind: Kind
    tool: str = ""
    input: str = ""
    answer: str = ""
    thought: str | None = None
    dropped: str = ""
    kept: str = ""
    dialect: Dialect | None = None
    unclosed: Unclosed | None = None


@dataclass(frozen=True)
class _Segment:
    label: Label  # never an observation: see _segments
    numbered: bool
    body: str  # from after the label to the next label line
    start: int  # where the body starts in the text


def parse_turn(text: str, dialect: Dialect | None = None) -> Turn:
    """Parse a complete (or partially streamed) model turn. Never raises."""
    scanner = TurnScanner()
    scanner.feed(text)
    scanner.finish()
    return parse_kept(scanner.kept, scanner.dropped, dialect)


def parse_kept(kept: str, dropped: str, dialect: Dialect | None = None) -> Turn:
    """Parse text a :class:`TurnScanner` has already separated from a fabricated observation."""
    segments = _segments(kept)
    thought: str | None = None
    unclosed: Unclosed | None = None
    for i, seg in enumerate(segments):
        if seg.label == "thought":
            if thought is None:
                thought = _prose(seg.body)
            continue
        found: Turn | None = None
        if seg.label == "answer":
            # Everything after it: a later "Action:" or JSON call is part of the answer, never run.
            answer = kept[seg.start :].strip()
            if answer:
                found = Turn("answer", answer=answer, dialect=dialect)
        elif seg.label == "action":
            following = segments[i + 1] if i + 1 < len(segments) else None
            action = _action(seg, following, dialect)
            if isinstance(action, Unclosed):
                unclosed = unclosed or action
            else:
                found = action
        if found is not None:
            return _with(found, thought, kept, dropped)
    if _form_allowed("action_input", dialect):  # a JSON or XML tool call anywhere in the text
        blob = _object_turn(_written_call(kept), dialect)
        if blob is not None:
            return _with(blob, thought, kept, dropped)
    return Turn("none", thought=thought, kept=kept, dropped=dropped, unclosed=unclosed)


def _prose(body: str) -> str:
    """A thought without a JSON blob or code fence that follows it on later lines."""
    blob = re.search(r"^[ \t]*(?:```|\{)|<tool_call>|<function=", body, re.MULTILINE)
    return (body[: blob.start()] if blob else body).strip()


def _with(turn: Turn, thought: str | None, kept: str, dropped: str) -> Turn:
    return Turn(turn.kind, turn.tool, turn.input, turn.answer, thought, dropped, kept, turn.dialect)


def _segments(text: str) -> list[_Segment]:
    found: list[tuple[Label, re.Match[str]]] = []
    for m in LABEL_LINE.finditer(text):
        # Only observations carry a note ("Observation (search):"), so "Action (x):" is prose,
        # and observation labels are the scanner's to cut: neither starts a segment.
        if m.group("note") is None and (label := label_of(m)) != "observation":
            found.append((label, m))
    segments = []
    for i, (label, m) in enumerate(found):
        end = found[i + 1][1].start() if i + 1 < len(found) else len(text)
        segments.append(_Segment(label, m.group("num") is not None, text[m.end() : end], m.end()))
    return segments


def _action(
    seg: _Segment, following: _Segment | None, dialect: Dialect | None
) -> Turn | Unclosed | None:
    text = seg.body.lstrip()  # the value may start on a later line: "Action:" ⏎ "Terminal"
    if text.startswith("```"):
        text = _unfence(text)
    body = text.lstrip(" \t\r\n`*")
    if body.startswith(_OBJECT_START):
        found = read_xml_call(body) if _xml_first(body) else read_action_object(body)
        return _object_turn(found, dialect)
    call = _CALL.match(body)
    if call is not None:
        name, opener = call.group(1).lower(), call.group(2)
        form: Dialect = "paren" if opener == "(" else ("paper" if seg.numbered else "bracket")
        if not _form_allowed(form, dialect):
            return None
        arg = balanced(body, call.end() - 1, opener, _OPENERS[opener])
        if arg is None:  # "Let me compute (1 + 2" is prose: only one word names a cut call
            if len(name.split()) > 1:
                return None
            return Unclosed(name, opener, len(body[call.end() :].strip()))
        arg = arg.strip()
        if opener == "(":
            arg = _unquote(arg)
        # tool() calls a tool that takes no input; tool[] stays no call at all.
        return _directive(name, arg, form, no_arguments=opener == "(")
    first_line = body.split("\n", 1)[0].strip()
    if not _form_allowed("action_input", dialect):
        return None
    bare = _BARE_NAME.match(first_line)
    if bare is None or bare.group(1).lower() in _NO_ACTION:
        return None
    if following is None or following.label != "action input":
        return None
    arg = _unfence(following.body)
    if arg.startswith("{"):
        inner = balanced(arg, 0, "{", "}", quoted=True)
        if inner is not None:
            arg = "{" + inner + "}"
    return _directive(bare.group(1).lower(), arg.strip(), "action_input")


def _written_call(text: str) -> ActionObject | None:
    """A tool call written as Qwen3-Coder XML (unambiguous, so tried first) or as JSON."""
    xml = find_xml_call(text) if FUNCTION in text else None
    return xml if xml is not None else find_action_object(text)


def _xml_first(body: str) -> bool:
    """``<function=…`` or ``<tool_call>`` then ``<function=…``: Qwen3-Coder's XML, not JSON."""
    return body.removeprefix("<tool_call>").lstrip().startswith(FUNCTION)


def _form_allowed(form: Dialect, dialect: Dialect | None) -> bool:
    """Whether a call written in ``form`` counts; with no dialect chosen every form does."""
    return dialect is None or form in spec(dialect).forms


def _directive(name: str, arg: str, form: Dialect, *, no_arguments: bool = False) -> Turn | None:
    """An action, or an answer for ``finish`` / ``Final Answer``; None without an input.

    ``no_arguments``: the call said it has no input (``tool()``, JSON ``"arguments": {}``), so
    an empty input is still an action; the tool answers it, usually with its own error.
    """
    if name_key(name) in _ANSWER_NAMES:
        answer = (plain_input(arg) if form == "action_input" else arg).strip()
        return Turn("answer", answer=answer, dialect=form) if answer else None
    if not arg and not no_arguments:
        return None
    return Turn("action", tool=name, input=arg, dialect=form)


def _object_turn(found: ActionObject | None, dialect: Dialect | None) -> Turn | None:
    """A tool call written as a JSON object; it belongs to the action_input form."""
    if found is None or not _form_allowed("action_input", dialect):
        return None
    return _directive(
        found.name.lower(), found.input, "action_input", no_arguments=found.no_arguments
    )


def _unquote(arg: str) -> str:
    """``finish("668")`` → ``668``: one argument wrapped in one pair of matching quotes."""
    if len(arg) >= 2 and arg[0] == arg[-1] and arg[0] in "\"'" and arg[0] not in arg[1:-1]:
        return arg[1:-1]
    return arg


def _unfence(text: str) -> str:
    """Strip a Markdown code fence (```json … ```) or inline backticks around an input."""
    stripped = text.strip()
    if stripped.startswith("```"):
        first_newline = stripped.find("\n")
        inner = stripped[first_newline + 1 :] if first_newline != -1 else ""
        closing = inner.find("```")
        return (inner[:closing] if closing != -1 else inner).strip()
    if len(stripped) >= 2 and stripped[0] == stripped[-1] == "`":
        return stripped.strip("`").strip()
    return stripped


def correction_for(turn: Turn, dialect: Dialect, resolve: Callable[[str], Any]) -> str:
    """What to tell a model whose reply had no action and no answer; ``resolve`` finds a
    tool by name (the router's)."""
    cut = turn.unclosed
    if cut is None:
        return spec(dialect).correction
    # An action whose bracket never closed: usually a reply cut by max_tokens mid-input.
    tool = resolve(cut.tool)
    if tool is not None and cut.length > tool.max_input:
        return INPUT_TOO_LONG  # what the router would have said had it closed
    return (
        f'Error: the Action has no closing "{cut.closer}". '
        f"Write it as {cut.tool}{cut.opener}input{cut.closer}"
    )
