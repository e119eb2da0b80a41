"""The paired verdict ("did my edit make it better?") as a claim: its interval tested by
simulation against a known truth, its word's error rates and power, its degenerate inputs,
pass@k and pass^k by hand, and its sentences word for word.

The simulated population of cases (used by every simulation here): a case's chance of passing
in arm A is drawn from Beta(k·base, k·(1 − base)) — cases differ in difficulty, with k = 1
many are (nearly) always or never passed, with k = 4 fewer. The edit then acts on each case
separately: with weights (stay, fixed, broken) drawn from a Dirichlet of concentration 2 and
means (1 − g − h, g, h), arm B's chance is ``stay·p_a + fixed`` — part of the case made
to pass, part to fail, part unchanged, differently for every case (some cases get worse even
when the edit helps on average). Runs are independent Bernoulli draws given a case's chance, so
the runs of one case are correlated through it, and both arms run the same cases.

The truth is the population mean of the per-case change in the chance of passing,
E[p_b − p_a] = (1 − base)·g − base·h (the weights are drawn independently of p_a); with
h = 0.05 fixed, g is set so that it equals the intended difference exactly. Swapping the arms
makes it negative.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from collections.abc import Callable

import pytest

from sandbox_app.core.comparing.paired_verdict import (
    BETTER,
    METHOD,
    NO_DIFFERENCE,
    WORSE,
    CaseCounts,
    PairedVerdict,
    paired_verdict,
    pass_at_k,
    pass_hat_k,
    t_quantile,
)
from sandbox_app.core.estimates.intervals import Z_95

BROKEN = 0.05  # h: the mean share of a case the edit breaks


def simulate(
    rng: random.Random,
    cases: int,
    repeats: int,
    base: float,
    difference: float,
    spread: float = 2.0,
    swap: bool = False,
) -> list[CaseCounts]:
    """One comparison drawn from the population the module docstring describes; its truth is
    ``difference`` (``-difference`` swapped)."""
    fixed = (difference + base * BROKEN) / (1 - base)
    stay = 1 - fixed - BROKEN
    assert stay >= 0, (base, difference)
    counts = []
    for case in range(cases):
        p_a = rng.betavariate(spread * base, spread * (1 - base))
        weights = [rng.gammavariate(2 * mean, 1.0) for mean in (stay, fixed, BROKEN)]
        p_b = (weights[0] * p_a + weights[1]) / sum(weights)
        a = sum(rng.random() < p_a for _ in range(repeats))
        b = sum(rng.random() < p_b for _ in range(repeats))
        counts.append(
            CaseCounts(case, b, repeats, a, repeats)
            if swap
            else CaseCounts(case, a, repeats, b, repeats)
        )
    return counts


# Base rate → the true differences simulated on it (base + difference at most 0.9: B's mean
# stays a pass rate a real model has).
GRID = {0.2: (0.0, 0.1, 0.2, 0.4), 0.5: (0.0, 0.1, 0.2, 0.4), 0.7: (0.0, 0.1, 0.2), 0.9: (0.0,)}


DRAWS = 72  # per setting, half of them with the arms swapped
Interval = Callable[[list[CaseCounts]], tuple[float, float]]


def paired(counts: list[CaseCounts]) -> tuple[float, float]:
    verdict = paired_verdict(counts)
    return verdict.low, verdict.high


def runs_as_units(counts: list[CaseCounts]) -> tuple[float, float]:
    """The interval a naive report gives: every run an independent draw, the arms unpaired
    (Wald's for two proportions over runs) — wrong in both ways the module's is right."""
    runs = sum(c.runs_a for c in counts)
    a = sum(c.passes_a for c in counts) / runs
    b = sum(c.passes_b for c in counts) / runs
    half = Z_95 * ((a * (1 - a) + b * (1 - b)) / runs) ** 0.5
    return b - a - half, b - a + half


def coverage(interval: Interval) -> tuple[dict[str, list[bool]], float]:
    """Whether each comparison's interval covered the truth, by group (all of them under
    "all"), and the seconds it took."""
    rng = random.Random(34)
    started = time.perf_counter()
    groups: dict[str, list[bool]] = defaultdict(list)
    for cases in (20, 40, 100):
        for repeats in (1, 5):
            for base, differences in GRID.items():
                for difference in differences:
                    for spread in (1.0, 4.0):
                        for draw in range(DRAWS):
                            swap = draw % 2 == 1
                            truth = -difference if swap else difference
                            low, high = interval(
                                simulate(rng, cases, repeats, base, difference, spread, swap)
                            )
                            for group in (
                                "all",
                                f"cases {cases} × repeats {repeats}",
                                f"base {base} × difference {difference}",
                                f"spread {spread}",
                            ):
                                groups[group].append(low <= truth <= high)
    return groups, time.perf_counter() - started


def rates_of(groups: dict[str, list[bool]]) -> dict[str, float]:
    return {group: sum(hits) / len(hits) for group, hits in sorted(groups.items())}


def report(rates: dict[str, float], groups: dict[str, list[bool]], seconds: float) -> str:
    lines = [f"{group}: {rate:.1%} of {len(groups[group])}" for group, rate in rates.items()]
    return "\n".join([*lines, f"({seconds:.1f} s)"])


def test_the_interval_covers_the_true_difference_95_percent_of_the_time() -> None:
    """10,368 comparisons: cases 20, 40, 100 × repeats 1, 5 × the 12 (base, difference) pairs
    of GRID × difficulty spread k = 1, 4 × 72 draws, half of them with the arms swapped (truth
    negative). Coverage overall must be 93–97 %; every group's (by cases × repeats, by base
    rate × difference, by spread) 92–98 % (a group of 864 comparisons has a sampling error of
    0.7 points at 95 %, so a group 3 points off is the method, not chance)."""
    groups, seconds = coverage(paired)
    rates = rates_of(groups)
    said = report(rates, groups, seconds)
    assert len(groups["all"]) >= 2000, said
    assert 0.93 <= rates["all"] <= 0.97, said
    assert all(0.92 <= rate <= 0.98 for rate in rates.values()), said


def test_the_simulation_tells_a_wrong_interval_apart() -> None:
    """The same simulation fails the naive interval (runs as units, arms unpaired): the
    coverage test above is one a wrong method does not pass."""
    groups, seconds = coverage(runs_as_units)
    rates = rates_of(groups)
    said = report(rates, groups, seconds)
    assert not all(0.92 <= rate <= 0.98 for rate in rates.values()), said


def rate_of(word: str, seeds: int, make: Callable[[random.Random], list[CaseCounts]]) -> float:
    hits = sum(paired_verdict(make(random.Random(seed))).word == word for seed in range(seeds))
    return hits / seeds


def test_equal_arms_are_no_detectable_difference_at_least_90_percent_of_the_time() -> None:
    """300 seeds, 30 cases × 3 repeats, both arms at 60 % (the edit fixes and breaks cases
    alike, so the truth is exactly 0)."""
    for spread in (1.0, 4.0):
        rate = rate_of(NO_DIFFERENCE, 300, lambda rng, k=spread: simulate(rng, 30, 3, 0.6, 0.0, k))
        assert rate >= 0.90, f"spread {spread}: {rate:.1%}"


def test_a_40_point_gain_on_40_cases_is_better_and_swapped_worse() -> None:
    """300 seeds, 40 cases × 1 run (the least evidence a test set gives), 30 % → 70 %."""
    better = rate_of(BETTER, 300, lambda rng: simulate(rng, 40, 1, 0.3, 0.4))
    worse = rate_of(WORSE, 300, lambda rng: simulate(rng, 40, 1, 0.3, 0.4, swap=True))
    assert better >= 0.95, f"better in {better:.1%}"
    assert worse >= 0.95, f"worse in {worse:.1%}"


# ---- degenerate inputs ----------------------------------------------------------------------


def same(n: int, a: tuple[int, int], b: tuple[int, int]) -> list[CaseCounts]:
    return [CaseCounts(case, a[0], a[1], b[0], b[1]) for case in range(n)]


def test_three_cases_each_pass_to_fail_claim_no_certainty() -> None:
    for runs in (1, 5):
        verdict = paired_verdict(same(3, (runs, runs), (0, runs)))
        assert verdict.difference == -1.0
        assert verdict.worse_cases == 3
        assert verdict.better_cases == 0
        assert verdict.word == NO_DIFFERENCE
        assert verdict.low == -1.0
        assert verdict.high > 0.2


def test_all_cases_moving_one_way_is_a_difference_only_from_5_cases() -> None:
    """As the sign test: 4 of 4 cases worse has a one-sided chance of 1/16 under no
    difference, 5 of 5 of 1/32."""
    assert paired_verdict(same(4, (1, 1), (0, 1))).word == NO_DIFFERENCE
    assert paired_verdict(same(5, (1, 1), (0, 1))).word == WORSE
    assert paired_verdict(same(4, (0, 5), (5, 5))).word == NO_DIFFERENCE
    assert paired_verdict(same(5, (0, 5), (5, 5))).word == BETTER
    ten = paired_verdict(same(10, (0, 1), (1, 1)))
    assert ten.word == BETTER
    assert 0.5 < ten.low < 0.9
    assert ten.high == 1.0


@pytest.mark.parametrize("both", [(1, 1), (0, 1), (5, 5), (0, 5)])
def test_all_pass_or_all_fail_in_both_arms_is_no_difference_with_a_width(
    both: tuple[int, int],
) -> None:
    few = paired_verdict(same(3, both, both))
    assert few.difference == 0.0
    assert few.word == NO_DIFFERENCE
    assert (few.low, few.high) == (-1.0, 1.0)
    many = paired_verdict(same(20, both, both))
    assert many.word == NO_DIFFERENCE
    assert -0.1 < many.low < -0.02
    assert 0.02 < many.high < 0.1
    assert many.cases_for_10_points is not None
    assert many.cases_for_10_points > 0


def test_one_and_two_cases() -> None:
    one = paired_verdict([CaseCounts(0, 0, 3, 3, 3)])
    assert (one.cases, one.difference, one.low, one.high) == (1, 1.0, -1.0, 1.0)
    assert one.word == NO_DIFFERENCE
    assert one.cases_for_10_points is None
    two = paired_verdict([CaseCounts(0, 0, 3, 3, 3), CaseCounts(1, 0, 3, 3, 3)])
    assert two.word == NO_DIFFERENCE
    assert two.low == -1.0
    assert two.high == 1.0
    assert two.cases_for_10_points is not None


def test_cases_in_one_arm_only_are_left_out_and_none_in_both_is_nothing_to_compare() -> None:
    counts = [CaseCounts(0, 1, 2, 2, 2), CaseCounts(1, 0, 0, 2, 2), CaseCounts(2, 2, 2, 0, 0)]
    verdict = paired_verdict(counts)
    assert (verdict.cases, verdict.rate_a, verdict.rate_b) == (1, 0.5, 1.0)
    nothing = paired_verdict(counts[1:])
    assert nothing.cases == 0
    assert nothing.word == NO_DIFFERENCE
    assert nothing.sentence("brief", "grounded", "on good-7b") == (
        "nothing to compare between brief and grounded on good-7b: no case ran in both"
    )
    assert paired_verdict([]).cases_for_10_points is None


def test_rates_are_means_of_per_case_rates_and_uneven_runs_count_per_case() -> None:
    verdict = paired_verdict([CaseCounts(0, 1, 1, 1, 1), CaseCounts(1, 0, 4, 3, 4)])
    assert verdict.rate_a == 0.5
    assert verdict.rate_b == 0.875
    assert verdict.difference == pytest.approx(0.375)
    assert (verdict.better_cases, verdict.worse_cases) == (1, 0)


def test_counts_that_are_not_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="case 7"):
        paired_verdict([CaseCounts(7, 3, 2, 0, 2)])
    with pytest.raises(ValueError, match="case 1"):
        paired_verdict([CaseCounts(1, 0, 2, -1, 2)])
    with pytest.raises(ValueError, match="level"):
        paired_verdict([], level=1.0)


def test_t_quantiles_match_the_tables() -> None:
    for df, expected in ((1, 12.7062), (2, 4.3027), (9, 2.2622), (29, 2.0452), (200, 1.9719)):
        assert t_quantile(df, 0.95) == pytest.approx(expected, abs=1e-4)
    assert t_quantile(10, 0.99) == pytest.approx(3.1693, abs=1e-4)


# ---- pass@k and pass^k --------------------------------------------------------------------


def test_pass_at_k_and_pass_hat_k_by_hand() -> None:
    """5 runs, 2 passed: pass@k = 1 − C(3, k)/C(5, k), pass^k = C(2, k)/C(5, k)."""
    at = [pass_at_k(5, 2, k) for k in range(1, 6)]
    hat = [pass_hat_k(5, 2, k) for k in range(1, 6)]
    assert at == pytest.approx([1 - 3 / 5, 1 - 3 / 10, 1 - 1 / 10, 1.0, 1.0])
    assert hat == pytest.approx([2 / 5, 1 / 10, 0.0, 0.0, 0.0])


def test_pass_at_k_edges() -> None:
    assert pass_at_k(5, 0, 3) == 0.0
    assert pass_hat_k(5, 0, 1) == 0.0
    assert pass_at_k(5, 5, 5) == 1.0
    assert pass_hat_k(5, 5, 5) == 1.0
    assert pass_at_k(1, 1, 1) == 1.0
    assert pass_hat_k(1, 0, 1) == 0.0
    for estimator in (pass_at_k, pass_hat_k):
        with pytest.raises(ValueError, match="k must be"):
            estimator(5, 2, 6)  # k above n: k runs cannot be drawn from 5
        with pytest.raises(ValueError, match="k must be"):
            estimator(5, 2, 0)
        with pytest.raises(ValueError, match="not a count"):
            estimator(5, 6, 1)


# ---- sentences ----------------------------------------------------------------------------


def verdict_of(
    difference: float,
    low: float,
    high: float,
    word: str,
    better: int,
    worse: int,
    needs: int | None = None,
) -> PairedVerdict:
    return PairedVerdict(
        10, 0.3, 0.3 + difference, difference, low, high, word, better, worse, METHOD, needs
    )


def test_the_three_sentences() -> None:
    better = verdict_of(0.583, 0.4501, 0.6962, BETTER, 7, 0)
    assert better.sentence("brief", "grounded", "on good-7b") == (
        "grounded is better than brief on good-7b by 58 points (95 % CI 45 to 70), "
        "7 cases better, 0 worse"
    )
    worse = verdict_of(-0.1161, -0.2049, -0.0351, WORSE, 1, 5)
    assert worse.sentence("brief", "grounded", "on good-7b") == (
        "grounded is worse than brief on good-7b by 12 points (95 % CI -20 to -4), "
        "1 case better, 5 worse"
    )
    none = verdict_of(0.025, -0.06, 0.1249, NO_DIFFERENCE, 3, 2, 160)
    assert none.sentence("brief", "grounded", "on good-7b") == (
        "no detectable difference between brief and grounded on good-7b: +3 points "
        "(95 % CI -6 to +12); detecting 10 points needs about 160 cases"
    )
    assert none.sentence("brief", "grounded") == (
        "no detectable difference between brief and grounded: +3 points "
        "(95 % CI -6 to +12); detecting 10 points needs about 160 cases"
    )


def test_a_computed_verdict_says_its_numbers() -> None:
    """7 cases from 0/5 to 3/5, 3 unchanged at 2/5: +42 points, a mean of 0.6 and 0 on 10
    cases; the interval by hand: w = 0.2, centre 4.2/10.4, t(9) = 2.2622."""
    verdict = paired_verdict(same(7, (0, 5), (3, 5)) + same(3, (2, 5), (2, 5)))
    centre = 4.2 / 10.4
    squares = (
        7 * (0.6 - centre) ** 2 + 3 * centre**2 + 0.2 * ((1 - centre) ** 2 + (1 + centre) ** 2)
    )
    half = 2.2622 * (squares / 9.4 / 10.4) ** 0.5
    assert verdict.low == pytest.approx(centre - half, abs=1e-4)
    assert verdict.high == pytest.approx(centre + half, abs=1e-4)
    assert verdict.sentence("brief", "grounded") == (
        f"grounded is better than brief by 42 points (95 % CI {round((centre - half) * 100)} "
        f"to {round((centre + half) * 100)}), 7 cases better, 0 worse"
    )
    assert verdict.method == METHOD


def test_cases_for_10_points_follows_the_variance() -> None:
    """The normal approximation: (1.96 + 0.8416)² × variance / 0.01, up to 2 figures."""
    noisy = paired_verdict(same(10, (0, 1), (1, 1)) + same(10, (1, 1), (0, 1)))
    quiet = paired_verdict(same(10, (2, 5), (3, 5)) + same(10, (3, 5), (2, 5)))
    assert noisy.cases_for_10_points is not None
    assert quiet.cases_for_10_points is not None
    # noisy: every case ±1, mean 0, w = 0.1: variance (20 + 0.1 × 2) / (20.2 - 1) = 1.052,
    # 7.849 × 1.052 / 0.01 = 826 → 830
    assert noisy.cases_for_10_points == 830
    assert quiet.cases_for_10_points < noisy.cases_for_10_points / 5
