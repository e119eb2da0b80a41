"""The window's frame pace: work that would happen per token happens at most once per frame."""

from __future__ import annotations

import time

FRAME_MS = 16


def until_next_frame(last: float) -> int:
    """Milliseconds to wait so the next pass comes a frame after ``last`` (a perf_counter).

    Zero when the last pass is already a frame old: the text that just arrived goes out at
    the end of this event-loop pass instead of a whole frame later. Both the run controller
    and the trace panes pace themselves this way, so the two stages add at most one frame of
    delay, not two.
    """
    elapsed_ms = (time.perf_counter() - last) * 1000
    return max(0, round(FRAME_MS - elapsed_ms))
