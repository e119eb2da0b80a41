"""One home per dialect: what each ReAct dialect asks for, and the one grammar of a label line.

A dialect is one :class:`DialectSpec`: the ``{format}`` text and tool line the prompt shows,
the call forms the parser accepts, the correction the engine sends for a reply in no format,
and how the engine labels the observation it sends back. The parser, prompts and engine read
these fields instead of keeping tables of their own.

Every label line (``Thought:``, ``**Action 2:**``, ``## Final Answer:``,
``Observation (from search):`` …) is recognised by the one regex :data:`LABEL_LINE`, so the
parser, the scanner that cuts fabricated observations, the highlighter and the CLI agree on
which line carries which label. Each user picks the labels it cares about from what the
matcher reports (:func:`match_label`; :func:`label_of` on the hot paths), not with a regex of
its own.

Adding a dialect: add its name to :data:`Dialect` and a :class:`DialectSpec` to ``_SPECS``,
then run ``tests/core/test_dialects.py``, which fails until every field is filled and its
examples parse. A dialect that reuses the existing call forms touches only this module and its
tests; a new call syntax also needs the parser to read it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, get_args

__all__ = [
    "DIALECTS",
    "LABEL_LINE",
    "LABEL_ROLES",
    "SPECS",
    "Dialect",
    "DialectSpec",
    "Label",
    "LabelMatch",
    "LabelRole",
    "label_of",
    "label_role",
    "match_label",
    "observation_prefix",
    "spec",
]

Dialect = Literal["bracket", "paren", "action_input", "paper"]
DIALECTS: tuple[Dialect, ...] = get_args(Dialect)


@dataclass(frozen=True)
class DialectSpec:
    """Everything that differs between dialects. Every field must be non-empty."""

    name: Dialect
    # A reply in this dialect that calls a tool, and one that ends the run; tests check that
    # they parse, so they also pin down which labels the dialect uses.
    example_action: str
    example_answer: str
    # Action call forms the parser accepts when this dialect is chosen. A form is named after
    # the dialect it comes from: "bracket" tool[x], "paper" numbered tool[x], "paren" tool(x),
    # "action_input" a bare tool name plus an Action Input label, or a JSON blob.
    forms: frozenset[Dialect]
    format: str  # the prompt's {format} text
    tool_line: str  # one line of {tools}: {name}, {Name} (capitalised), {hint}, {description}
    correction: str  # what the engine tells a model whose reply had no action and no answer
    # How the engine labels the observation it sends back; {step} and {tool} are filled in.
    observation_label: str  # for a correction, and for tools unless tool_observation_label
    tool_observation_label: str


_SPECS = (
    DialectSpec(
        name="bracket",
        example_action="Thought: I need the total.\nAction: calculator[20 * 12 * 7]",
        example_answer="Thought: Done.\nAnswer: $1,680 per year",
        forms=frozenset({"bracket", "paper"}),
        # The classic format: each turn is Thought + Action, or Thought + Answer at the end.
        format=(
            "Each turn has one of two shapes:\n\n"
            "Thought: what I need to do next\n"
            "Action: tool[input]\n\n"
            "or, at the end:\n\n"
            "Thought: why I am sure\n"
            "Answer: the final answer\n\n"
            "After an action, stop. The system adds an Observation: line with the tool's "
            "result. Never write an observation yourself."
        ),
        tool_line="- {name}[{hint}]: {description}",
        correction=(
            "Error: your reply had no Action and no Answer. Reply with exactly\n"
            "Thought: what you need to do next\nAction: tool[input]\n"
            "or\nThought: why you are sure\nAnswer: the final answer"
        ),
        observation_label="Observation:",
        tool_observation_label="Observation:",
    ),
    DialectSpec(
        name="paren",
        example_action="Thought: add first\nAction: calculator(128 + 256)",
        example_answer="Final Answer: 668",
        forms=frozenset({"paren"}),
        # The system prompt of a plain hand-written loop: Thought, Action: tool(arg), Final Answer.
        format=(
            "You must follow this format exactly:\n\n"
            "Thought: describe your reasoning\n"
            "Action: tool_name(arg)\n"
            "Observation: the result of the action (provided by the system)\n"
            "...\n"
            "Final Answer: the final answer\n\n"
            "Stop after each Action; never write the Observation yourself."
        ),
        tool_line="- {name}({hint}: str) - {description}",
        # A hand-written loop's corrective observation for a reply in no format, plus how to finish.
        correction=(
            "I did not understand the action. Please use 'Action: tool_name(args)', "
            "or 'Final Answer: <answer>' when you are done."
        ),
        observation_label="Observation:",
        tool_observation_label="Observation:",
    ),
    DialectSpec(
        name="action_input",
        example_action='Thought: look it up\nAction: webSearch\nAction Input: {"q": "sisu"}',
        example_answer="Final Answer: 668",
        forms=frozenset({"action_input"}),
        # The usual Action / Action Input prompt, with the final answer the loop needs to end.
        format=(
            "Use tools when helpful. Reply with:\n"
            "Thought: your reasoning\n"
            "Action: <tool>\n"
            "Action Input: <JSON or text>\n\n"
            "Then stop and wait for the Observation. When you know the answer, reply with:\n"
            "Final Answer: <answer>"
        ),
        tool_line="- {name}: {description} Input: {hint}.",
        correction=(
            "I did not understand the action. Please use 'Action: <tool>' followed by "
            "'Action Input: <JSON>', or 'Final Answer: <answer>' when you are done."
        ),
        observation_label="Observation:",
        tool_observation_label="Observation ({tool}):",  # as ReAct middleware labels it
    ),
    DialectSpec(
        name="paper",
        example_action="Thought 2: Search the orogeny.\nAction 2: Search[Colorado orogeny]",
        example_answer="Thought 5: So the range is known.\nAction 5: Finish[1,800 to 7,000 ft]",
        forms=frozenset({"bracket", "paper"}),
        # The ReAct paper's numbered trajectory.
        format=(
            "Solve the task with interleaving Thought, Action, Observation steps, numbered "
            "from 1:\n"
            "Thought 1: reason about the current situation\n"
            "Action 1: Tool[input]\n"
            "Observation 1: the result (provided by the system)\n"
            "...\n"
            "Action n: Finish[answer] ends the task with the answer. Never write an "
            "Observation yourself."
        ),
        tool_line="- {Name}[{hint}]: {description}",
        correction=(
            "I did not understand the action. Please use 'Action: Tool[input]', "
            "or 'Action: Finish[answer]' when you are done."
        ),
        observation_label="Observation {step}:",
        tool_observation_label="Observation {step}:",
    ),
)

SPECS: Mapping[Dialect, DialectSpec] = MappingProxyType({s.name: s for s in _SPECS})
# Fail on import, not with a KeyError in the middle of a run, when the two lists drift apart.
if tuple(SPECS) != DIALECTS:
    raise ImportError(f"dialect specs {tuple(SPECS)} do not match Dialect {DIALECTS}")


def spec(dialect: Dialect) -> DialectSpec:
    """The one place the parser, prompts and engine look a dialect up."""
    return SPECS[dialect]


# --- The label grammar ---------------------------------------------------------------------

Label = Literal["thought", "action", "action input", "answer", "observation"]
# A label as the highlighter and the CLI colour it: an Action Input line is part of the action.
LabelRole = Literal["thought", "action", "answer", "observation"]
LABEL_ROLES: tuple[LabelRole, ...] = get_args(LabelRole)

# Markdown decoration models put before labels: indentation, "> ", "## ", "**", backticks.
# Bounded so a line of 10,000 asterisks is decided at once instead of being held back.
_DECORATION = r"[ \t>#*_`]{0,12}"
# ASCII-only case folding ("(?a:"): plain IGNORECASE also matches "anſwer" (long s) and
# "actıon" (dotless i), which each user used to read differently (the highlighter crashed).
_WORD = r"(?a:(?P<word>final[ \t]+answer|action[ \t_]*input|thought|action|answer|observation))"
_NUMBER = r"(?:[ \t]+(?P<num>\d{1,4}))?"  # "Thought 2:"
_NOTE = r"(?P<note>[ \t]*\([^)\n]{0,60}\))?"  # "Observation (from search):"
_COLON = r"[ \t*_`]{0,6}[:：]"  # "**Action**:", and the full-width colon
# A closing bold marker after the colon ("**Action:** x"), but not the start of "**x**".
_CLOSING = r"(?:[ \t]*(?:\*\*|__)(?=[ \t]|$))?[ \t]*"

# Labels count only at the start of a line. A match never crosses a newline, so matching is
# bounded per line and finditer over a whole reply is linear.
LABEL_LINE = re.compile(
    "^" + _DECORATION + _WORD + _NUMBER + _NOTE + _COLON + _CLOSING, re.IGNORECASE | re.MULTILINE
)
_DECORATION_RUN = re.compile(_DECORATION)
_OBSERVATION = "observation"
# A superset of what may follow "observation" before its colon; only used to decide holding.
_OBSERVATION_TAIL_PREFIX = re.compile(
    r"(?:[ \t]+\d{0,4})?[ \t]*(?:\([^)\n]{0,60}\)?)?[ \t*_`]{0,6}"
)


# The label each spelling of a word names; "answer" and "final answer" both end the run.
_CANONICAL: dict[str, Label] = {
    "thought": "thought",
    "action": "action",
    "action input": "action input",
    "answer": "answer",
    "final answer": "answer",
    "observation": "observation",
}


def label_of(m: re.Match[str]) -> Label:
    """The label a :data:`LABEL_LINE` match names.

    For the hot paths (the scanner judges every line, the parser every label) that only need
    the label and read ``num``, ``note`` and the span from the match themselves.
    """
    word = m.group("word").lower()
    found = _CANONICAL.get(word)
    if found is None:  # odd spacing: "final  answer", "action_input", "actioninput"
        found = "answer" if word.startswith("final") else "action input"
    return found


@dataclass(frozen=True, slots=True)
class LabelMatch:
    """A label at the start of a line: what it is, and where its body starts (``end``)."""

    label: Label
    numbered: bool  # "Action 2:"
    noted: bool  # "Observation (from search):"
    end: int  # after the colon, a closing bold marker and spaces


def match_label(line: str) -> LabelMatch | None:
    """The label ``line`` starts with, or None."""
    m = LABEL_LINE.match(line)
    if m is None:
        return None
    return LabelMatch(label_of(m), m.group("num") is not None, m.group("note") is not None, m.end())


def label_role(line: str) -> LabelRole | None:
    """The style key for a line's label (an Action Input is an action), or None."""
    m = LABEL_LINE.match(line)
    if m is None:
        return None
    label = label_of(m)
    return "action" if label == "action input" else label


def observation_prefix(line: str) -> str | None:
    """The part after decoration if ``line`` can still grow into an Observation label, else None.

    For a streaming scanner deciding whether to hold the start of a line back.
    """
    rest = line[_DECORATION_RUN.match(line).end() :]  # type: ignore[union-attr]
    lowered = rest.lower()
    if len(lowered) <= len(_OBSERVATION):
        return rest if _OBSERVATION.startswith(lowered) else None
    if not lowered.startswith(_OBSERVATION):
        return None
    return rest if _OBSERVATION_TAIL_PREFIX.fullmatch(rest, len(_OBSERVATION)) else None
