"""A pass rate in words, as every place that shows one says it: ``50% (4/8)``, and with its
95 % interval by case (intervals.py) ``92% (22/24, 95% CI 65%–99% by case, 12 cases)``."""

from __future__ import annotations

from sandbox_app.core.estimates.intervals import Spread, clustered_interval
from sandbox_app.core.running.metrics import plural


def share_words(passed: int, runs: int) -> str:
    """``50% (4/8)``: a pass rate without its interval (where its cases are not counted)."""
    return f"{passed / runs if runs else 0.0:.0%} ({passed}/{runs})"


def rate_by_case(spread: Spread) -> str:
    """``92% (22/24, 95% CI 65%–99% by case, 12 cases)``: the pass rate of the runs a spread
    counts, with its interval by case."""
    cases = sum(n for (m, _), n in spread.items() if m > 0)
    runs = sum(m * n for (m, _), n in spread.items())
    passed = sum(c * n for (_, c), n in spread.items())
    low, high, _ = clustered_interval(spread)
    words = share_words(passed, runs)[:-1]  # its closing bracket after the interval
    return f"{words}, 95% CI {interval_words((low, high), cases, runs)})"


def interval_words(interval: tuple[float, float], cases: int = 0, runs: int = 0) -> str:
    """``65%–99%``, and ``by case, 12 cases`` after it when a case has several runs (repeats,
    or lanes counted together): the interval is then the cases', which a reader counting runs
    would not expect."""
    by_case = f" by case, {plural(cases, 'case')}" if 0 < cases < runs else ""
    return f"{interval[0]:.0%}–{interval[1]:.0%}{by_case}"
