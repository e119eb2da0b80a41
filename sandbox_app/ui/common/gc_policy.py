"""When Python's cyclic garbage collector may stop the window: not while text streams in.

A full collection (generation 2) stops every thread for as long as it walks the objects that
survived earlier passes. Measured with four lanes at 2,000 tokens/s: 20-90 ms each, about one
every ten seconds, most of them set off by the network thread's allocations. They were the
window's longest freezes. So full passes are made rare, and made when no run is going.
"""

from __future__ import annotations

import gc

# A full pass after this many generation-1 passes (Python's default is 10). Young garbage is
# still collected as often as ever; only long-lived garbage waits for the next quiet moment.
FULL_PASS_EVERY = 1000
# How long after the last run ends the window collects: long enough for the run's last frames.
IDLE_DELAY_MS = 1000


def settle_after_start() -> None:
    """Freeze what start-up built and make automatic full passes rare.

    The modules and the window live until exit, yet each full pass walked all of them.
    No collection before freezing: it would stop the window for as long, and what garbage
    start-up left behind is frozen with the rest, a one-off cost of well under a megabyte.
    """
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_PASS_EVERY)


def collect_while_idle() -> None:
    """A full pass now, when no run is streaming: what the rare automatic ones leave."""
    gc.collect()


def keep_long_lived() -> None:
    """A long trace pouring in (ui/trace/trace_stack.py, a few times a second): its millions
    of objects live as long as it is shown, so the young ones' garbage is collected and what
    survives is frozen, never walked by a full pass (one over a 30,000-step trace's objects
    stopped the window for up to a second). Freezing moves lists: it costs nothing."""
    gc.collect(1)
    gc.freeze()
