"""Times compared within one run, so a loaded machine slows both sides and the ratio holds.

Absolute budgets ("under 100 ms") belong to ``latency``-marked tests (see tests/conftest.py).
Ordinary tests compare: the same code on a bigger input (does it scale linearly?), or a
hostile input against a harmless one (is it refused before any real work?). Each side is the
best of a few repeats: load only ever adds time, so the fastest repeat is the one it spared.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def best_time(work: Callable[[], object], repeats: int = 5) -> float:
    """The shortest of ``repeats`` timings of ``work()``, in seconds."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def best_cpu_time(work: Callable[[], object], repeats: int = 5) -> float:
    """The shortest of ``repeats`` timings of ``work()`` in this thread's CPU seconds: time
    the scheduler gave other processes is not counted."""
    best = float("inf")
    for _ in range(repeats):
        started = time.thread_time()
        work()
        best = min(best, time.thread_time() - started)
    return best


def growth(work: Callable[[int], object], small: int, factor: int = 8, repeats: int = 5) -> float:
    """How many times longer ``work(small * factor)`` takes than ``work(small)``.

    About ``factor`` for linear work, ``factor ** 2`` for quadratic. Build the inputs inside
    ``work`` only if building them is linear too; better, close over prebuilt inputs.

    Measured in CPU time, not wall time: with both cores busy, a 5 ms run is cut by the
    scheduler in every repeat while a 0.7 ms one often is not, and the wall-clock ratio of a
    linear parser read 24x for 8x the text (seen once in a run under two busy loops).
    """
    return best_cpu_time(lambda: work(small * factor), repeats) / best_cpu_time(
        lambda: work(small), repeats
    )


# A linear algorithm measured at two sizes ``factor`` apart stays well under this multiple of
# ``factor`` (constant costs only lower the ratio); a quadratic one is ``factor`` times over it.
LINEAR_SLACK = 3
