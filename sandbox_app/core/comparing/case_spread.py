"""An arm's pass rate over an evaluation, its 95 % interval honest about repeats, and its
pass@k and pass^k: all read from the arm's *spread*, how many cases had each (runs, passes)
count (a handful of numbers whatever the evaluation's size, counted in SQL by the history).

Why not Wilson over the runs: the repeats of one case are not independent (a case the model
cannot do fails every time), so 100 cases × 5 repeats is not 500 trials' worth of evidence.
Counting them so, Wilson's interval covers the truth as little as 65 % of the time on test sets
whose cases vary in difficulty (tests/core/test_case_spread.py). Here it is Wilson's interval
at the *effective* number of runs, ``n_eff = p(1 - p) / var``, where ``var`` is the variance of
the pass rate clustered by case (the ratio estimator's, ``n / (n - 1) · Σ (c_i - p m_i)² /
N²``, the clustered standard error of Miller 2024, "Adding Error Bars to Evals"); the design
effect of survey sampling, as Korn & Graubard (1998) put it into an interval for a proportion.
``n_eff`` is kept between the cases (repeats that agree perfectly: one case's worth each) and
the runs (repeats as good as new cases); at a pass rate of 0 or 1 the runs say nothing of how
alike a case's repeats are, and each case counts once. With one run a case it is Wilson's
interval over the cases. Simulated (cases of varied difficulty, 10 to 100 of them, 1 to 5
repeats) it covers the truth 93-98 % of the time.

pass@k (at least one of k runs passes) and pass^k (all k pass) are the means over cases of
the unbiased estimators of core/comparing/paired_verdict.py, at k = the repeats every case
has.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from sandbox_app.core.comparing.paired_verdict import pass_at_k, pass_hat_k
from sandbox_app.core.results.evaluation import wilson

Spread = Mapping[tuple[int, int], int]  # (runs, passes) of a case → how many cases
METHOD = "by case: Wilson's interval at the runs' effective number (the design effect)"


@dataclass(frozen=True)
class ArmRate:
    cases: int
    runs: int
    passed: int
    low: float  # the 95 % interval of the pass rate (0..1)
    high: float
    effective: float  # the runs' effective number the interval was made with
    k: int  # the repeats every case has (0: no case)
    pass_at: float | None  # pass@k, pass^k (None: k < 2, where both are the pass rate)
    pass_hat: float | None

    @property
    def rate(self) -> float:
        return self.passed / self.runs if self.runs else 0.0

    def lines(self) -> list[str]:
        """For people: "Pass rate 62% (95% CI 55%–69%, by case: 100 cases, 500 runs)",
        then pass@k and pass^k when cases repeat."""
        if not self.runs:
            return ["No runs yet"]
        said = [
            f"Pass rate {self.rate:.0%} (95% CI {self.low:.0%}–{self.high:.0%}, by case: "
            f"{self.cases:,} cases, {self.runs:,} runs)"
        ]
        if self.pass_at is not None and self.pass_hat is not None:
            said.append(f"pass@{self.k} {self.pass_at:.0%}: at least one of {self.k} runs passes")
            said.append(f"pass^{self.k} {self.pass_hat:.0%}: all {self.k} runs pass")
        return said


def arm_rate(spread: Spread) -> ArmRate:
    counts = [(runs, passes, cases) for (runs, passes), cases in spread.items() if runs > 0]
    cases = sum(n for _, _, n in counts)
    runs = sum(m * n for m, _, n in counts)
    passed = sum(c * n for _, c, n in counts)
    low, high, effective = clustered_interval(counts, cases, runs, passed)
    k = min((m for m, _, _ in counts), default=0)
    at = hat = None
    if k >= 2:
        at = math.fsum(pass_at_k(m, c, k) * n for m, c, n in counts) / cases
        hat = math.fsum(pass_hat_k(m, c, k) * n for m, c, n in counts) / cases
    return ArmRate(cases, runs, passed, low, high, effective, k, at, hat)


def clustered_interval(
    counts: list[tuple[int, int, int]], cases: int, runs: int, passed: int
) -> tuple[float, float, float]:
    """``counts``: (runs, passes, how many cases); the 95 % interval and ``n_eff``."""
    if not runs:
        return 0.0, 1.0, 0.0
    p = passed / runs
    if cases < 2:  # no spread of cases to go by: one case is one case's worth
        effective = float(cases)
    else:
        squares = math.fsum(n * (c - p * m) ** 2 for m, c, n in counts)
        variance = cases / (cases - 1) * squares / (runs * runs)
        effective = p * (1 - p) / variance if variance > 0 else float(cases)
        effective = min(float(runs), max(float(cases), effective))
    low, high = wilson(p * effective, effective)
    return low, high, effective
