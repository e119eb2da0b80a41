"""The trace's write queue: text waits here, by role, until the next frame writes it.

A frame writes about ``budget`` characters (``take_frame``), joining consecutive streamed
pieces of one role into one insert (``merged``). Besides text, the queue carries one marker,
``(END_OF_THINKING, "")``: a step or run ended, so a live thinking region ends there, in
order with the text queued before it.
"""

from __future__ import annotations

from sandbox_app.core.results.presentation import STREAMED, Role

Pending = tuple[Role, str]
END_OF_THINKING = Role.THINKING_HEADER  # never queued as text: header lines are the regions'


def take_frame(pending: list[Pending], budget: int) -> tuple[list[Pending], list[Pending]]:
    """Split the queue into this frame's share (about ``budget`` characters) and the rest."""
    taken = 0
    for i, (_, text) in enumerate(pending):
        taken += len(text)
        if taken >= budget:
            return pending[: i + 1], pending[i + 1 :]
    return pending, []


def merged(pending: list[Pending]) -> list[Pending]:
    """Join consecutive pieces of streamed text (model text, thinking) into one insert."""
    out: list[Pending] = []
    for role, text in pending:
        if out and role in STREAMED and out[-1][0] is role:
            out[-1] = (role, out[-1][1] + text)
        else:
            out.append((role, text))
    return out
