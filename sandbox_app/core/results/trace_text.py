"""A run's events as text that only grows: what the CLI prints, Copy trace copies and the
Markdown export fences, from core/results/presentation.py's pieces.

:class:`PlainText` writes pieces as text: a change of role starts a line, and where there is
no colour to tell roles apart (a pipe, a copy, a Markdown fence) :data:`TEXT_MARKS` marks
them. :class:`TraceText` is both steps for a stream of events; :func:`lines` for a record's.
"""

from __future__ import annotations

from collections.abc import Iterable

from sandbox_app.core.results.presentation import Edit, LineStyles, Piece, Presentation, Role
from sandbox_app.core.running.events import (
    Event,
    FinalAnswer,
    RunFinished,
    StepFinished,
    TokenDelta,
)
from sandbox_app.core.running.native_tools import ACTION_LABEL, THOUGHT_LABEL
from sandbox_app.core.scenarios.scenario import Expected

THINKING_PREFIX = "┆ "  # marks thinking lines where there is no colour
# Role → (before, after) each of its lines where there is no colour to tell them apart.
TEXT_MARKS: dict[Role, tuple[str, str]] = {
    Role.THINKING: (THINKING_PREFIX, ""),
    Role.THINKING_HEADER: ("", ":"),
    Role.NOTICE: ("[", "]"),
    Role.DROPPED: ("~~", "~~"),
}


class PlainText:
    """Pieces as text that only grows: each change of role starts a line; with ``marks``,
    the roles in :data:`TEXT_MARKS` are marked (without, the front end colours them)."""

    def __init__(self, *, marks: bool = True) -> None:
        self._marks = TEXT_MARKS if marks else {}
        self._mid_line = False  # the last text written did not end a line
        self._role = Role.MODEL  # the role of the last text written

    def write(self, piece: Piece) -> list[Piece]:
        """The text ``piece`` adds: a line break first if it needs one, then its own."""
        if not piece.text or piece.edit not in _WRITTEN:
            return []
        out = []
        if self._mid_line and piece.role is not self._role:
            out.append(Piece(self._role, "\n"))
            self._mid_line = False
        out.append(Piece(piece.role, self._marked(piece, at_line_start=not self._mid_line)))
        self._mid_line = not piece.text.endswith("\n")
        self._role = piece.role
        return out

    def _marked(self, piece: Piece, at_line_start: bool) -> str:
        before, after = self._marks.get(piece.role, ("", ""))
        if not before and not after:
            return piece.text
        lines = piece.text.split("\n")
        last = len(lines) - 1
        return "\n".join(
            (before if i or at_line_start else "") + line + (after if i < last else "")
            if line
            else line
            for i, line in enumerate(lines)
        )


def text_lines(written: Iterable[Piece]) -> list[tuple[str, Role]]:
    """Written text → whole lines, each with the role of the text that began it, styled as
    the window styles it (core/results/presentation.py's :class:`LineStyles`)."""
    out: list[tuple[str, Role]] = []
    styles = LineStyles()
    current, role = "", None
    for piece_role, text, _ in written:
        for i, part in enumerate(text.split("\n")):
            if i > 0:
                out.append((current, styles.of(role or piece_role, current)))
                current, role = "", None
            if part and not current:
                role = piece_role
            current += part
            role = role or piece_role
    if current and role is not None:
        out.append((current, styles.of(role, current)))
    return out


_WRITTEN = (Edit.APPEND, Edit.TEXT_ONLY)


class TraceText:
    """Feeds events in order; each call returns the text they add, as (text, role) pairs.

    ``native``: a native tool-calling run. The window shows a reply's text as the Thought
    while it streams and redraws it as the Answer when no tool call came; a text that only
    grows cannot redraw, so it holds that text until it knows which it was (an Action line,
    the answer, the step's end) and says it once, as the window ends up saying it.
    """

    def __init__(
        self,
        *,
        thinking: bool = True,
        marks: bool = True,
        expected: Expected | None = None,
        native: bool = False,
    ) -> None:
        self.presentation = Presentation(thinking=thinking, expected=expected)
        self._text = PlainText(marks=marks)
        self._native = native
        self._held: list[Piece] | None = None  # a native reply's text not yet said

    def feed(self, event: Event) -> list[tuple[str, Role]]:
        written = self.written(event)
        return [(text, role) for role, text, _ in written]

    def written(self, event: Event) -> list[Piece]:
        pieces = self.presentation.feed(event)
        if self._native:
            pieces = self._said(event, pieces)
        return [out for piece in pieces for out in self._text.write(piece)]

    def _said(self, event: Event, pieces: list[Piece]) -> list[Piece]:
        if isinstance(event, TokenDelta):
            if self._held is None and not event.text.startswith(THOUGHT_LABEL):
                return pieces
            self._held = [*(self._held or ()), *pieces]
            text = "".join(p.text for p in self._held)
            return self._release() if f"\n{ACTION_LABEL}" in text else []
        if isinstance(event, FinalAnswer) and event.was_thought and self._held is not None:
            self._held = [Piece(p.role, p.text) for p in pieces if p.edit is Edit.REDRAW]
            return self._release()
        if isinstance(event, StepFinished | RunFinished):
            return [*self._release(), *pieces]
        return pieces  # the step's other lines (thinking, the meter) are not the reply's

    def _release(self) -> list[Piece]:
        held, self._held = self._held or [], None
        return held


def lines(events: Iterable[Event], *, marks: bool = True) -> list[tuple[str, Role]]:
    """The trace's whole lines, each with the role that styles it."""
    trace = TraceText(marks=marks)
    return text_lines(piece for event in events for piece in trace.written(event))
