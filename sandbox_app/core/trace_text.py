"""A run's events as text: what the CLI prints and what Copy trace copies, from one place.

:class:`TraceText` turns events into ``(text, role)`` pieces as they stream; the CLI colours
the pieces by role on a terminal, exports join them. ``role`` is ``"model"`` for the model's
own text (its lines are coloured by their ReAct label), or the kind of line we wrote.
"""

from __future__ import annotations

from sandbox_app.core.events import (
    Event,
    FabricationCut,
    FinalAnswer,
    FormatError,
    Notice,
    Observation,
    RunFinished,
    StepStarted,
    TokenDelta,
)

Piece = tuple[str, str]  # (text, role)


class TraceText:
    """Feeds events in order; each call returns the text they add to the trace."""

    def __init__(self) -> None:
        self._mid_line = False  # the last text written did not end a line

    def feed(self, event: Event) -> list[Piece]:
        if isinstance(event, TokenDelta):
            return self._pieces([(event.text, "model")])
        pieces: list[Piece] = [("\n", "model")] if self._mid_line else []
        if isinstance(event, StepStarted):
            pieces.append((f"── Step {event.step} ──\n", "step"))
        elif isinstance(event, FabricationCut):
            pieces.append((f"[cut, never used: {event.text.strip()}]\n", "dim"))
        elif isinstance(event, Observation):
            pieces.append((event.message + "\n", "error" if event.error else "observation"))
        elif isinstance(event, FormatError):
            pieces.append((event.message + "\n", "error"))
        elif isinstance(event, Notice):
            pieces.append((f"[{event.text}]\n", "dim"))
        elif isinstance(event, FinalAnswer):
            return []  # already in the trace as the model's own Answer line
        elif isinstance(event, RunFinished):
            pieces += _finish(event)
        else:
            return []
        return self._pieces(pieces)

    def _pieces(self, pieces: list[Piece]) -> list[Piece]:
        kept = [(text, role) for text, role in pieces if text]
        if kept:
            self._mid_line = not kept[-1][0].endswith("\n")
        return kept


def _finish(event: RunFinished) -> list[Piece]:
    pieces: list[Piece] = []
    if event.answer is not None:
        pieces.append((f"\nFinal answer: {event.answer}\n", "answer"))
    if event.status != "answered":
        pieces.append((f"\n{event.status}: {event.reason}\n", "error"))
    pieces.append((event.metrics.summary() + "\n", "plain"))
    return pieces
