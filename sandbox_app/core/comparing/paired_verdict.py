"""Did my edit make it better? Two arms run on the same cases, compared case by case.

The question is about cases, not runs: a test set is a sample of the cases one cares about,
and the repeats of one case are not independent evidence (a case the model cannot do fails
every time). So each case gives one number, the change in its pass rate
``d = passes_b / runs_b - passes_a / runs_a`` (B the new arm, A the baseline), and the
difference reported is their mean: the mean over cases of the per-case pass rate of B minus
that of A. What it estimates is the mean of that change over the population of cases the test
set was drawn from.

The interval: a paired t interval over the per-case differences, n - 1 degrees of freedom —
the clustered standard error of Miller (2024, "Adding Error Bars to Evals"), clustered by case,
which also counts the pairing (both arms ran the same cases, so the cases' difficulty cancels
in ``d``) and whatever the repeats add or fail to add. Simulated on realistic test sets (20 to
100 cases, 1 or 5 repeats, cases of varied difficulty) it covers the truth close to 95 % of
the time on its own, where counting runs as independent and the arms as unpaired misses by up
to 7 points either way (tests/core/test_paired_verdict.py). It needs help
only when the differences barely vary: three cases that each went from pass to fail have a
standard deviation of 0, and a t interval of [-100, -100] points, certainty from three cases.
As Wilson's interval does for a proportion and Bonett & Price (2012) for paired proportions,
the sample is given pseudo-cases: one case that went fully from fail to pass and one fully
from pass to fail (``d = +1`` and ``-1``), each of weight ``w = min(1, 2 / n)``; the mean and
the variance are the weighted ones. With one run per case and ``w = 1`` this is Bonett and
Price's adjusted interval (there with a normal quantile). The weight shrinks with n because the
t interval needs the help only for few cases: every case moving the same way is first called a
difference at 5 cases (the sign test's one-sided chance of that under no difference is 1/32),
while at 20 cases they widen the interval by a point or two of coverage and less beyond. Intervals
are cut to the scale's ends, -1 and 1. (A bootstrap was not chosen: on all-equal differences it
is as certain as the plain t interval, and it is random.)

Alongside: ``pass_at_k`` (at least one of k runs passes) and ``pass_hat_k`` (all k pass), the
unbiased estimators from n runs of which c passed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

from sandbox_app.core.running.metrics import plural

BETTER = "better"
WORSE = "worse"
NO_DIFFERENCE = "no detectable difference"
METHOD = (
    "paired by case: mean per-case pass-rate difference, t interval over cases (n-1 df), "
    "with one +1 and one -1 pseudo-case of weight min(1, 2/n)"
)
DETECTABLE = 0.10  # the difference cases_for_10_points is about
POWER = 0.80  # the chance of detecting it that "needs about N cases" means


@dataclass(frozen=True, slots=True)
class CaseCounts:
    """One case, both arms: passes out of runs (repeats). ``runs_a`` or ``runs_b`` 0: the
    case did not run in that arm, and the verdict leaves it out."""

    case: int
    passes_a: int
    runs_a: int
    passes_b: int
    runs_b: int

    @property
    def in_both(self) -> bool:
        return self.runs_a > 0 and self.runs_b > 0

    @property
    def change(self) -> float:
        """B's pass rate minus A's on this case (-1..1)."""
        return self.passes_b / self.runs_b - self.passes_a / self.runs_a


@dataclass(frozen=True, slots=True)
class PairedVerdict:
    cases: int  # cases with runs in both arms
    rate_a: float  # mean over cases of the per-case pass rate (0..1)
    rate_b: float
    difference: float  # rate_b - rate_a (B the new arm, A the baseline)
    low: float  # its interval, on the same -1..1 scale
    high: float
    word: str  # BETTER, WORSE or NO_DIFFERENCE (B relative to A)
    better_cases: int  # cases whose pass rate rose
    worse_cases: int  # … fell
    method: str
    cases_for_10_points: int | None  # None: fewer than 2 cases, no variance to go by
    level: float = 0.95

    def sentence(self, name_a: str, name_b: str, where: str = "") -> str:
        """One line for people: "grounded is better than brief on good-7b by 58 points (95 %
        CI 45 to 70), 7 cases better, 0 worse"."""
        on = f" {where}" if where else ""
        if not self.cases:
            return f"nothing to compare between {name_a} and {name_b}{on}: no case ran in both"
        ci = f"{_percent(self.level)} % CI"
        if self.word == NO_DIFFERENCE:
            needs = (
                f"; detecting 10 points needs about {self.cases_for_10_points} cases"
                if self.cases_for_10_points is not None
                else ""
            )
            return (
                f"no detectable difference between {name_a} and {name_b}{on}: "
                f"{_points(self.difference):+d} points "
                f"({ci} {_points(self.low):+d} to {_points(self.high):+d}){needs}"
            )
        return (
            f"{name_b} is {self.word} than {name_a}{on} by {abs(_points(self.difference))} "
            f"points ({ci} {_points(self.low)} to {_points(self.high)}), "
            f"{plural(self.better_cases, 'case')} better, {self.worse_cases} worse"
        )


def paired_verdict(cases: Sequence[CaseCounts], level: float = 0.95) -> PairedVerdict:
    """Is B better than A, case by case? Cases without runs in both arms are left out."""
    if not 0 < level < 1:
        raise ValueError(f"the level must be between 0 and 1, not {level}")
    for counts in cases:
        _check(counts)
    both = [counts for counts in cases if counts.in_both]
    n = len(both)
    if not n:
        return PairedVerdict(0, 0.0, 0.0, 0.0, -1.0, 1.0, NO_DIFFERENCE, 0, 0, METHOD, None, level)
    rate_a = math.fsum(c.passes_a / c.runs_a for c in both) / n
    rate_b = math.fsum(c.passes_b / c.runs_b for c in both) / n
    changes = [c.change for c in both]
    low, high, variance = _interval(changes, level)
    word = BETTER if low > 0 else WORSE if high < 0 else NO_DIFFERENCE
    return PairedVerdict(
        cases=n,
        rate_a=rate_a,
        rate_b=rate_b,
        difference=rate_b - rate_a,
        low=low,
        high=high,
        word=word,
        better_cases=sum(d > 0 for d in changes),
        worse_cases=sum(d < 0 for d in changes),
        method=METHOD,
        cases_for_10_points=_cases_needed(variance, level) if variance is not None else None,
        level=level,
    )


def _check(counts: CaseCounts) -> None:
    for passes, runs in ((counts.passes_a, counts.runs_a), (counts.passes_b, counts.runs_b)):
        if runs < 0 or not 0 <= passes <= runs:
            raise ValueError(
                f"case {counts.case}: {passes} passes out of {runs} runs is not a count"
            )


def _interval(changes: Sequence[float], level: float) -> tuple[float, float, float | None]:
    """The interval of the mean change, and the (pseudo-case weighted) variance of one case's
    change it was made with (None when there is none: a single case)."""
    n = len(changes)
    if n < 2:  # no degrees of freedom: one case says nothing about the spread of cases
        return -1.0, 1.0, None
    weight = min(1.0, 2 / n)
    total = n + 2 * weight
    centre = math.fsum(changes) / total  # the pseudo-cases' +w and -w cancel in the sum
    squares = math.fsum((d - centre) ** 2 for d in changes)
    squares += weight * ((1 - centre) ** 2 + (1 + centre) ** 2)
    variance = squares / (total - 1)
    half = t_quantile(n - 1, level) * math.sqrt(variance / total)
    return max(-1.0, centre - half), min(1.0, centre + half), variance


def _cases_needed(variance: float, level: float) -> int:
    """About how many cases a paired comparison needs to tell a 10-point difference from
    none (two-sided at ``level``, 80 % of the time), when a case's change varies as here:
    the normal approximation ``((z_level + z_power) * sd / 0.10) ** 2``, rounded up to two
    significant figures (it is an estimate from a sample's variance, no more precise)."""
    normal = NormalDist()
    z = normal.inv_cdf(0.5 + level / 2) + normal.inv_cdf(POWER)
    needed = max(2, math.ceil((z * z * variance) / (DETECTABLE * DETECTABLE)))
    step = int(10 ** max(0, len(str(needed)) - 2))
    return -(-needed // step) * step


@lru_cache(maxsize=256)
def t_quantile(df: int, level: float) -> float:
    """The two-sided ``level`` quantile of Student's t with ``df`` (whole) degrees of
    freedom: t with P(|T| <= t) = level, by bisection on the exact CDF (the standard library
    has no t distribution)."""
    if df < 1:
        raise ValueError(f"t needs at least 1 degree of freedom, not {df}")
    low, high = 0.0, 1.0
    while _t_within(high, df) < level:
        high *= 2
    for _ in range(100):
        middle = (low + high) / 2
        if _t_within(middle, df) < level:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def _t_within(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with whole ``df``: the finite sums of Abramowitz & Stegun
    26.7.3 (odd df) and 26.7.4 (even df), in theta = atan(t / sqrt(df))."""
    theta = math.atan(t / math.sqrt(df))
    sine, cosine = math.sin(theta), math.cos(theta)
    square = cosine * cosine
    if df % 2:
        term = total = cosine
        for k in range(3, df - 1, 2):
            term *= square * (k - 1) / k
            total += term
        return 2 / math.pi * (theta + sine * total) if df > 1 else 2 * theta / math.pi
    term = total = 1.0
    for k in range(2, df - 1, 2):
        term *= square * (k - 1) / k
        total += term
    return sine * total


def pass_at_k(runs: int, passes: int, k: int) -> float:
    """The chance that at least one of k runs passes, estimated without bias from ``runs``
    of which ``passes`` passed (Chen et al. 2021): ``1 - C(runs - passes, k) / C(runs, k)``.
    k above ``runs`` is a ValueError: k runs cannot be drawn from fewer."""
    _check_k(runs, passes, k)
    return 1.0 - math.comb(runs - passes, k) / math.comb(runs, k)


def pass_hat_k(runs: int, passes: int, k: int) -> float:
    """The chance that all k runs pass, pass^k (Yao et al. 2024, tau-bench), estimated
    without bias: ``C(passes, k) / C(runs, k)``. k above ``runs`` is a ValueError."""
    _check_k(runs, passes, k)
    return math.comb(passes, k) / math.comb(runs, k)


def _check_k(runs: int, passes: int, k: int) -> None:
    if not 0 <= passes <= runs:
        raise ValueError(f"{passes} passes out of {runs} runs is not a count")
    if not 1 <= k <= runs:
        raise ValueError(f"k must be from 1 to the number of runs ({runs}), not {k}")


def _points(share: float) -> int:
    """A share (-1..1) in whole percentage points, halves away from zero (so +2.5 and -2.5
    points read 3 and -3, as people round)."""
    return int(math.copysign(math.floor(abs(share) * 100 + 0.5), share))


def _percent(level: float) -> str:
    return f"{level * 100:g}"
