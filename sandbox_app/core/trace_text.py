"""A run's events as text: what the CLI prints and what Copy trace copies, from one place.

:class:`TraceText` turns events into ``(text, role)`` pieces as they stream; the CLI colours
the pieces by role on a terminal, exports join them. ``role`` is ``"model"`` for the model's
own text (its lines are coloured by their ReAct label), ``"thinking"`` for its reasoning
(under a ``Thinking:`` heading; never coloured as ReAct), or the kind of line we wrote.
"""

from __future__ import annotations

from sandbox_app.core.events import (
    Edited,
    Event,
    FabricationCut,
    FinalAnswer,
    FormatError,
    Notice,
    Observation,
    ReasoningDelta,
    RunFinished,
    StepStarted,
    ThinkingReclassified,
    TokenDelta,
)
from sandbox_app.core.stepping import edited_heading

Piece = tuple[str, str]  # (text, role)


class TraceText:
    """Feeds events in order; each call returns the text they add to the trace."""

    def __init__(self, *, thinking: bool = True) -> None:
        self.thinking = thinking  # include the model's thinking
        self._mid_line = False  # the last text written did not end a line
        self._role = ""  # the role of the last text written

    def feed(self, event: Event) -> list[Piece]:
        if isinstance(event, TokenDelta):
            return self._pieces([*self._switch_to("model"), (event.text, "model")])
        if isinstance(event, ReasoningDelta):
            if not self.thinking:
                return []
            switch = self._switch_to("thinking")
            at_line_start = bool(switch) or not self._mid_line
            return self._pieces([*switch, (_prefixed(event.text, at_line_start), "thinking")])
        pieces: list[Piece] = [("\n", self._role)] if self._mid_line else []
        if isinstance(event, ThinkingReclassified):
            # Also with thinking hidden: that text was already printed as the model's own.
            pieces.append(("[the text above was the model's thinking: never used]\n", "dim"))
        elif isinstance(event, StepStarted):
            pieces.append((f"── Step {event.step} ──\n", "step"))
        elif isinstance(event, FabricationCut):
            pieces.append((f"[cut, never used: {event.text.strip()}]\n", "dim"))
        elif isinstance(event, Observation):
            pieces.append((event.message + "\n", "error" if event.error else "observation"))
        elif isinstance(event, FormatError):
            pieces.append((event.message + "\n", "error"))
        elif isinstance(event, Notice):
            pieces.append((f"[{event.text}]\n", "dim"))
        elif isinstance(event, Edited):  # the original is above, as it came
            role = "model" if event.point == "turn" else "observation"
            pieces += [(f"[{edited_heading(event.point)}]\n", "dim"), (event.text + "\n", role)]
        elif isinstance(event, FinalAnswer):
            return []  # already in the trace as the model's own Answer line
        elif isinstance(event, RunFinished):
            pieces += _finish(event)
        else:
            return []
        return self._pieces(pieces)

    def _switch_to(self, role: str) -> list[Piece]:
        """Thinking and the model's own text each start on a line of their own; thinking gets
        a heading line."""
        if role == self._role:
            return []
        pieces: list[Piece] = [("\n", self._role)] if self._mid_line else []
        if role == "thinking":
            pieces.append(("Thinking (never acted on):\n", "thinking"))
        return pieces

    def _pieces(self, pieces: list[Piece]) -> list[Piece]:
        kept = [(text, role) for text, role in pieces if text]
        if kept:
            self._mid_line = not kept[-1][0].endswith("\n")
            self._role = kept[-1][1]
        return kept


THINKING_PREFIX = "┆ "  # marks thinking lines where there is no colour (a pipe, a copy)


def _prefixed(text: str, at_line_start: bool) -> str:
    """Thinking text with :data:`THINKING_PREFIX` at the start of each of its lines."""
    lines = text.split("\n")
    head = (THINKING_PREFIX if at_line_start and lines[0] else "") + lines[0]
    rest = [THINKING_PREFIX + line if line else line for line in lines[1:]]
    return "\n".join([head, *rest])


def _finish(event: RunFinished) -> list[Piece]:
    pieces: list[Piece] = []
    if event.answer is not None:
        pieces.append((f"\nFinal answer: {event.answer}\n", "answer"))
    if event.status != "answered":
        pieces.append((f"\n{event.status}: {event.reason}\n", "error"))
    pieces.append((event.metrics.summary() + "\n", "plain"))
    return pieces
