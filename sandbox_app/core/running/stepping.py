"""Step-through: where a run pauses, and what the user may change there.

With step mode on, the engine awaits the ``pause`` it was given at two points of a step:
after the model's turn is read and before its tool runs ("turn": the turn's text, which the
user may rewrite, the Action line included; it is parsed again), and after the observation
exists and before the next model call ("observation": its text). The pause returns the text
as the user left it; a changed text is used from then on (the tool gets the edited input,
the next request carries exactly the edited words) and an ``Edited`` event goes in the trace
(the original struck through, what ran in its own colour), the exports and recordings.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

Point = Literal["turn", "observation"]


@dataclass(frozen=True)
class Pause:
    point: Point
    step: int
    text: str  # the turn's text, or the observation's


PauseFn = Callable[[Pause], Awaitable[str]]


def edited_heading(point: str) -> str:
    """The line above what ran instead of an edited turn or observation."""
    what = "the model's turn" if point == "turn" else "the observation"
    return f"✎ You edited {what}; this ran instead:"
