"""One presentation of a run's events: what the trace says, piece by piece, and who wrote it.

:class:`Presentation` turns events, as they stream, into :class:`Piece` s: text with a
:class:`Role` from the one vocabulary every front end styles by (the window's trace view, the
terminal, the Markdown and HTML exports, Copy trace). A front end keeps only its table from
role to style (Qt formats, ANSI colours, CSS classes), keyed by these names;
``tests/ui/test_presentation.py`` fails when a role has no style in one of them.

The contract of the pieces:

- ``MODEL`` and ``THINKING`` text streams: a piece may end mid-line and the next piece of
  that role continues the line. Every other role's piece is whole lines.
- A piece of another role than the last starts on a line of its own.
- The model's own lines are styled by their ReAct label (:class:`LineStyles`); an unlabelled
  line continues the label of the model line above it.
- A piece's ``edit`` says where it applies. A view that can redraw what it wrote (the window)
  takes ``REDRAW``, ``STRIKE``, ``END_THINKING`` and ``HEADER``; a text that only grows (a
  terminal, a file, a copy) takes ``TEXT_ONLY`` instead: the answer and figures the window
  shows outside the trace, the note that stands in for a redraw (the context meter's line
  for the header a window rewrites). ``APPEND`` is for every front end.

Where there is no colour (a pipe, a copy, a Markdown fence), core/results/trace_text.py marks the
roles that need it (thinking lines, notices, dropped text).
"""

from __future__ import annotations

from enum import Enum, StrEnum
from typing import NamedTuple

from sandbox_app.core.react_format.dialects import LABEL_ROLES, LabelRole, label_role
from sandbox_app.core.results.outcome import outcome
from sandbox_app.core.running.events import (
    ContextMeasured,
    ContextWontFit,
    Edited,
    Event,
    FabricationCut,
    FinalAnswer,
    FormatError,
    LoopNoticed,
    Notice,
    Observation,
    PromptTruncated,
    ReasoningDelta,
    RepetitionCut,
    RunFinished,
    StepFinished,
    StepStarted,
    ThinkingReclassified,
    TokenDelta,
)
from sandbox_app.core.running.native_tools import ANSWER_LABEL
from sandbox_app.core.running.stepping import edited_heading
from sandbox_app.core.scenarios.scenario import Expected


class Role(StrEnum):
    """Who wrote a piece of the trace, or, for the model's lines, the label that styles them."""

    MODEL = "model"  # the model's own text; a line with no label above it is drawn plain
    THINKING = "thinking"  # its reasoning: never read for labels, never acted on
    THINKING_HEADER = "thinking_header"  # the line above a thinking region
    STEP = "step"  # ── Step n ──
    OBSERVATION = "observation"  # a tool's result (and a model line labelled Observation)
    ERROR = "error"  # a failed tool, a format error, how a run that did not answer ended
    NOTICE = "notice"  # the app's own remarks: a retry, an edit, a cut
    DROPPED = "dropped"  # text written but never used: a cut, what an edit replaced
    SUMMARY = "summary"  # the run's figures at the end of a text
    THOUGHT = "thought"  # the model's labelled lines
    ACTION = "action"
    ANSWER = "answer"


# A verdict (core/results/outcome.py's ``correct``) as the role it and a judged answer are
# drawn in: right in the answer's colour, wrong in the error's; nothing said: the text's own.
VERDICT_ROLES: dict[bool | None, Role] = {True: Role.ANSWER, False: Role.ERROR}

# A label (core/react_format/dialects.py) as the role that styles its line.
LABEL_STYLES: dict[LabelRole, Role] = {label: Role(label) for label in LABEL_ROLES}
STREAMED = (Role.MODEL, Role.THINKING)  # roles whose pieces may end mid-line

THINKING_HEADING = "Thinking (never acted on)"
CUT_NOTE = "✂ The model wrote its own observation: cut, never sent back, never used."
REPETITION_NOTE = (
    "✂ The model said the same line {times} times in a row: cut there, the rest never used."
)
RECLASSIFIED_NOTE = "the text above was the model's thinking: never used"


class Edit(Enum):
    """Where a piece applies (see the module's docstring)."""

    APPEND = "append"
    TEXT_ONLY = "text only"
    REDRAW = "redraw"  # this step's model text so far is really this piece
    STRIKE = "strike"  # no text: what an edit replaced (the piece's role: MODEL, OBSERVATION)
    END_THINKING = "end thinking"  # no text: a live thinking region ends here
    HEADER = "header"  # the step's ── Step n ── line now reads this piece's text


class Piece(NamedTuple):
    role: Role
    text: str
    edit: Edit = Edit.APPEND


_END_THINKING = Piece(Role.THINKING, "", Edit.END_THINKING)
# Per token, even an enum member's lookup shows (~0.1 µs on Python 3.11): looked up once.
_new_piece, _APPEND = tuple.__new__, Edit.APPEND
_MODEL, _THINKING = Role.MODEL, Role.THINKING


class Presentation:
    """Feeds events in order; each call returns the pieces they add to the trace."""

    def __init__(self, *, thinking: bool = True, expected: Expected | None = None) -> None:
        self.thinking = thinking  # present the model's thinking
        # Judge the answer against this (a text that only grows says the verdict the window
        # shows in its header, below the answer, and draws a wrong answer as an error).
        self.expected = expected
        self._role: Role | None = None  # the role of the last text presented

    def feed(self, event: Event) -> list[Piece]:
        # Most events are tokens, of the answer or of thinking that goes on: the short way.
        # NamedTuple's __new__ is Python code: for every token, the tuple's own is faster.
        if type(event) is TokenDelta:
            if not event.text:
                return []
            self._role = _MODEL
            return [_new_piece(Piece, (_MODEL, event.text, _APPEND))]
        if type(event) is ReasoningDelta and self._role is _THINKING and self.thinking:
            return [_new_piece(Piece, (_THINKING, event.text, _APPEND))] if event.text else []
        pieces = self._pieces(event)
        for piece in pieces:
            if piece.edit is Edit.END_THINKING:
                self._role = None  # thinking after this is a region of its own
            elif piece.text and piece.edit is not Edit.REDRAW:
                self._role = piece.role
        return pieces

    def _pieces(self, event: Event) -> list[Piece]:
        if isinstance(event, ReasoningDelta):
            if not self.thinking or not event.text:
                return []
            heading = (
                []
                if self._role is Role.THINKING
                else [_line(Role.THINKING_HEADER, THINKING_HEADING)]
            )
            return [*heading, Piece(Role.THINKING, event.text)]
        if isinstance(event, StepStarted):
            return [_line(Role.STEP, step_header(f"Step {event.step}"))]
        if isinstance(event, Observation):
            return [_line(Role.ERROR if event.error else Role.OBSERVATION, event.message)]
        if isinstance(event, FabricationCut):
            return [_line(Role.DROPPED, event.text.rstrip()), _line(Role.NOTICE, CUT_NOTE)]
        if isinstance(event, RepetitionCut):
            note = _line(Role.NOTICE, REPETITION_NOTE.format(times=event.times))
            return (
                [_line(Role.DROPPED, event.text.rstrip()), note] if event.text.strip() else [note]
            )
        if isinstance(event, FormatError):
            return [_line(Role.ERROR, event.message)]
        if isinstance(event, Notice | LoopNoticed | ContextWontFit | PromptTruncated):
            return [_line(Role.NOTICE, event.text)]
        if isinstance(event, ContextMeasured):  # the context meter, in the step's header
            return [
                Piece(Role.STEP, step_header(event.text) + "\n", Edit.HEADER),
                Piece(Role.NOTICE, event.text + "\n", Edit.TEXT_ONLY),
            ]
        if isinstance(event, Edited):  # the original stays above, struck where it can be
            role = Role.MODEL if event.point == "turn" else Role.OBSERVATION
            said = _line(Role.NOTICE, edited_heading(event.point))
            return [Piece(role, "", Edit.STRIKE), said, Piece(role, event.text + "\n")]
        if isinstance(event, ThinkingReclassified):
            # Also with thinking hidden: a text that grows already shows it as the model's own.
            note = Piece(Role.NOTICE, RECLASSIFIED_NOTE + "\n", Edit.TEXT_ONLY)
            return [Piece(Role.THINKING, event.text, Edit.REDRAW), note]
        if isinstance(event, FinalAnswer):
            # Native tool calling: the content shown as the Thought was the answer. A text
            # says it in its closing line.
            answer = Piece(Role.MODEL, ANSWER_LABEL + event.text, Edit.REDRAW)
            return [answer] if event.was_thought else []
        if isinstance(event, StepFinished):
            return [_END_THINKING]
        if isinstance(event, RunFinished):
            return [_END_THINKING, *_finish(event, self.expected)]
        return []


def step_header(text: str) -> str:
    """``── Step 3 ──``; with the meter, ``── Step 3 · prompt 812 / 4,096 tokens (20%) ──``."""
    return f"── {text} ──"


def _line(role: Role, text: str) -> Piece:
    return Piece(role, text + "\n")


def _finish(event: RunFinished, expected: Expected | None) -> list[Piece]:
    """The window shows the answer and its verdict in its header, the figures in its status
    bar."""
    pieces: list[Piece] = []
    if event.answer is not None:
        said = outcome(event, len(event.metrics.steps), expected)
        role = VERDICT_ROLES.get(said.correct, Role.ANSWER)  # never a wrong one in green
        pieces.append(Piece(role, f"\nFinal answer: {event.answer}\n", Edit.TEXT_ONLY))
        if expected is not None and event.status == "answered":
            verdict_role = VERDICT_ROLES.get(said.correct, Role.SUMMARY)
            pieces.append(Piece(verdict_role, said.line + "\n", Edit.TEXT_ONLY))
    if event.status != "answered":
        pieces.append(Piece(Role.ERROR, "\n", Edit.TEXT_ONLY))
        pieces.append(_line(Role.ERROR, f"{event.status}: {event.reason}"))
    pieces.append(Piece(Role.SUMMARY, event.metrics.summary() + "\n", Edit.TEXT_ONLY))
    return pieces


class LineStyles:
    """The style of each whole line, as the window's highlighter draws it: the piece's role,
    or for the model's own text its label, an unlabelled line keeping the label above it."""

    def __init__(self) -> None:
        self._label: Role | None = None  # the label the model's line above had

    def of(self, role: Role, line: str) -> Role:
        if role is not Role.MODEL:
            self._label = None  # a label carries only within the model's text
            return role
        label = label_role(line)
        if label is not None:
            self._label = LABEL_STYLES[label]
        return self._label or Role.MODEL
