"""A pass rate's 95 % interval: Wilson's score interval, and the same at the runs' *effective*
number when a case's repeats are not independent trials.

Why not Wilson over the runs when cases repeat: a case the model cannot do fails every time, so
100 cases × 5 repeats is not 500 trials' worth of evidence. Counting them so, Wilson's interval
covers the truth as little as 65 % of the time on test sets whose cases vary in difficulty
(tests/core/test_case_spread.py). :func:`clustered_interval` is Wilson's interval at
``n_eff = p(1 - p) / var``, where ``var`` is the variance of the pass rate clustered by case
(the ratio estimator's, ``n / (n - 1) · Σ (c_i - p m_i)² / N²``, the clustered standard error
of Miller 2024, "Adding Error Bars to Evals"): the design effect of survey sampling, as Korn &
Graubard (1998) put it into an interval for a proportion. ``n_eff`` is kept between the cases
(repeats that agree perfectly: one case's worth each) and the runs (repeats as good as new
cases); at a pass rate of 0 or 1 the runs say nothing of how alike a case's repeats are, and
each case counts once. With one run a case it is Wilson's interval over the cases.

Below the results and the comparisons, which both show pass rates: one rule for both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

Z_95 = 1.959963984540054  # the normal quantile for a two-sided 95 % interval

Spread = Mapping[tuple[int, int], int]  # (runs, passes) of a case → how many cases


def wilson(passed: float, total: float, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a pass rate: sound for small N and for 0 % or 100 %."""
    if total == 0:
        return (0.0, 1.0)
    p = passed / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def clustered_interval(spread: Spread) -> tuple[float, float, float]:
    """A pass rate's 95 % interval by case and the runs' effective number, from its spread
    (how many cases had each (runs, passes) count; a case with no run is left out)."""
    counts = [(runs, passes, cases) for (runs, passes), cases in spread.items() if runs > 0]
    cases = sum(n for _, _, n in counts)
    runs = sum(m * n for m, _, n in counts)
    passed = sum(c * n for _, c, n in counts)
    if not runs:
        return 0.0, 1.0, 0.0
    p = passed / runs
    if cases < 2 or p in (0.0, 1.0):
        # No spread of cases to go by (one case is one case's worth), or no telling how alike
        # a case's runs are (all passed or all failed): each case counts once.
        effective = float(cases)
    else:
        squares = math.fsum(n * (c - p * m) ** 2 for m, c, n in counts)
        variance = cases / (cases - 1) * squares / (runs * runs)
        # Every case passed the same share of its runs: nothing sets the cases apart, and
        # each run counts as one.
        effective = p * (1 - p) / variance if variance > 0 else float(runs)
        effective = min(float(runs), max(float(cases), effective))
    low, high = wilson(p * effective, effective)
    return low, high, effective
