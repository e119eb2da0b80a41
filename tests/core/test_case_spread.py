"""An arm's pass rate and its interval by case (core/comparing/case_spread.py), tested by
simulation against a known truth: test sets drawn from populations of cases of varied
difficulty (a case's chance of passing drawn from a Beta distribution, the truth its mean),
each case run 1 to 5 times. The interval must cover the truth about 95 % of the time where
Wilson's over the runs, counting a case's repeats as independent trials, does not; pass@k and
pass^k must be right on average."""

from __future__ import annotations

import random

import pytest

from sandbox_app.core.comparing.case_spread import Spread, arm_rate
from sandbox_app.core.estimates.intervals import wilson

SIMULATIONS = 1_500  # a coverage of 95 % is then read to ±1.7 points (3 standard errors)


def drawn(rng: random.Random, alpha: float, beta: float, cases: int, repeats: int) -> Spread:
    """A test set's spread: ``cases`` drawn from Beta(alpha, beta), each run ``repeats`` times."""
    spread: dict[tuple[int, int], int] = {}
    for _ in range(cases):
        chance = rng.betavariate(alpha, beta)
        passes = sum(rng.random() < chance for _ in range(repeats))
        spread[(repeats, passes)] = spread.get((repeats, passes), 0) + 1
    return spread


def coverage(alpha: float, beta: float, cases: int, repeats: int, by_case: bool) -> float:
    rng = random.Random(f"{alpha} {beta} {cases} {repeats}")
    truth = alpha / (alpha + beta)
    hits = 0
    for _ in range(SIMULATIONS):
        rate = arm_rate(drawn(rng, alpha, beta, cases, repeats))
        low, high = (rate.low, rate.high) if by_case else wilson(rate.passed, rate.runs)
        hits += low <= truth <= high
    return hits / SIMULATIONS


# (alpha, beta): all-or-nothing cases (most pass every time or fail every time), mostly
# passing with a tail of hard ones, mostly failing, and cases all alike (no clustering).
POPULATIONS = [(0.3, 0.3), (2.0, 1.0), (0.5, 2.0), (20.0, 20.0)]


@pytest.mark.parametrize(("alpha", "beta"), POPULATIONS)
@pytest.mark.parametrize(("cases", "repeats"), [(20, 1), (20, 5), (60, 3)])
def test_the_interval_by_case_covers_the_truth_95_percent_of_the_time(
    alpha: float, beta: float, cases: int, repeats: int
) -> None:
    assert 0.925 <= coverage(alpha, beta, cases, repeats, by_case=True) <= 0.98


def test_wilson_over_the_runs_does_not_when_a_cases_repeats_agree() -> None:
    # All-or-nothing cases, five repeats each: Wilson counts 100 runs where there are ~20
    # cases' worth of evidence, and misses the truth a third of the time.
    assert coverage(0.3, 0.3, 20, 5, by_case=False) < 0.75
    assert coverage(0.3, 0.3, 20, 5, by_case=True) >= 0.925


def test_with_one_run_a_case_it_is_wilsons_interval() -> None:
    rate = arm_rate({(1, 1): 7, (1, 0): 3})
    assert (rate.low, rate.high) == pytest.approx(wilson(7, 10))
    assert rate.effective == 10


def test_repeats_that_tell_nothing_of_their_agreement_count_once_a_case() -> None:
    # Every run of ten cases passed: the runs cannot say how alike a case's repeats are, so
    # the interval is the ten cases' (Wilson over 10), not the fifty runs'.
    rate = arm_rate({(5, 5): 10})
    assert rate.rate == 1.0
    assert (rate.low, rate.high) == pytest.approx(wilson(10, 10))
    assert rate.low < wilson(50, 50)[0]


def test_pass_at_k_and_pass_hat_k_are_right_on_average() -> None:
    # Cases with a chance of 0.2, 0.5 or 0.9 of passing, 5 runs each, k = 5... and the truth:
    # pass@5 = mean(1 - (1 - p)^5), pass^5 = mean(p^5).
    rng = random.Random(7)
    chances = [0.2, 0.5, 0.9] * 10
    at, hat = [], []
    for _ in range(400):
        spread: dict[tuple[int, int], int] = {}
        for chance in chances:
            passes = sum(rng.random() < chance for _ in range(5))
            spread[(5, passes)] = spread.get((5, passes), 0) + 1
        rate = arm_rate(spread)
        assert rate.k == 5
        assert rate.pass_at is not None
        assert rate.pass_hat is not None
        at.append(rate.pass_at)
        hat.append(rate.pass_hat)
    assert sum(at) / len(at) == pytest.approx(sum(1 - (1 - p) ** 5 for p in chances) / 30, abs=0.01)
    assert sum(hat) / len(hat) == pytest.approx(sum(p**5 for p in chances) / 30, abs=0.01)


def test_what_a_reader_is_told() -> None:
    rate = arm_rate({(3, 3): 2, (3, 1): 1, (2, 0): 1})  # k = 2: the fourth case ran twice
    assert rate.lines()[0].startswith("Pass rate 64% (95% CI ")
    assert rate.lines()[0].endswith("by case: 4 cases, 11 runs)")
    # pass@2: 1, 1, 1 - C(2,2)/C(3,2) = 2/3, 0 → 67 %; pass^2: 1, 1, 0, 0 → 50 %.
    assert rate.lines()[1:] == [
        "pass@2 67%: at least one of 2 runs passes",
        "pass^2 50%: all 2 runs pass",
    ]
    assert arm_rate({(1, 1): 4}).lines() == [
        "Pass rate 100% (95% CI 51%–100%, by case: 4 cases, 4 runs)"
    ]
    assert arm_rate({}).lines() == ["No runs yet"]
