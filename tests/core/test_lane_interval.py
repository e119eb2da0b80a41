"""The pass rate's interval on `eval`'s summary line, the eval panel and the report
(core/results/evaluation.py) is counted by case, tested by simulation against a known truth:
cases of varied difficulty (a case's chance of passing drawn from a Beta distribution, the
truth its mean) run several times each. Counting each repeat as an independent trial, the
summary's interval used to cover the truth two times in three on all-or-nothing cases."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from sandbox_app.core.estimates.intervals import clustered_interval, wilson
from sandbox_app.core.estimates.pass_rates import rate_by_case
from sandbox_app.core.history.history_arms import case_spreads
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.history.history_rows import VERDICTS
from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.results.evaluation import LaneSummary, LaneTally, spread_by_case, summarise
from tests.matrix_data import small_evaluation

SIMULATIONS = 1_500  # a coverage of 95 % is then read to ±1.7 points (3 standard errors)


def result(lane: str, case: int, repeat: int, passed: bool) -> EvalResult:
    return EvalResult(lane, case, repeat, passed, status="done")


def evaluated(
    rng: random.Random, alpha: float, beta: float, cases: int, repeats: int
) -> LaneSummary:
    tally = LaneTally()
    for case in range(cases):
        chance = rng.betavariate(alpha, beta)
        for repeat in range(repeats):
            tally.add(result("a", case, repeat, rng.random() < chance))
    return tally.summary("a")


@pytest.mark.parametrize(
    ("alpha", "beta", "cases", "repeats"),
    [(0.3, 0.3, 20, 5), (2.0, 1.0, 60, 3), (20.0, 20.0, 20, 5), (0.5, 2.0, 30, 1)],
)
def test_the_summarys_interval_covers_the_truth_95_percent_of_the_time(
    alpha: float, beta: float, cases: int, repeats: int
) -> None:
    rng = random.Random(f"{alpha} {beta} {cases} {repeats}")
    truth = alpha / (alpha + beta)
    hits, per_run_hits = 0, 0
    for _ in range(SIMULATIONS):
        summary = evaluated(rng, alpha, beta, cases, repeats)
        low, high = summary.interval
        hits += low <= truth <= high
        low, high = wilson(summary.passed, summary.runs)
        per_run_hits += low <= truth <= high
    assert 0.925 <= hits / SIMULATIONS <= 0.98, hits / SIMULATIONS
    if (alpha, beta, repeats) == (0.3, 0.3, 5):  # what the summary said before
        assert per_run_hits / SIMULATIONS < 0.75


def test_the_line_says_the_interval_is_the_cases_when_cases_repeat() -> None:
    tally = LaneTally()
    for case in range(10):  # all-or-nothing: 7 cases pass every time, 3 fail every time
        for repeat in range(5):
            tally.add(result("a", case, repeat, case < 7))
    summary = tally.summary("a")
    assert summary.row().startswith("a: 70% (35/50, 95% CI 40%–89% by case, 10 cases) · ")
    assert summary.interval == pytest.approx(wilson(7, 10))  # ten cases' worth, not fifty
    once = summarise([result("b", case, 0, case < 7) for case in range(10)], ["b"])[0]
    assert once.row().startswith("b: 70% (7/10, 95% CI 40%–89%) · ")  # no repeats: as before


def test_a_cases_runs_in_every_lane_are_one_cases() -> None:
    first, second = LaneTally(), LaneTally()
    for case in range(4):
        first.add(result("a", case, 0, case < 2))
        second.add(result("b", case, 0, case < 3))
    assert spread_by_case(first, second) == {(2, 2): 2, (2, 1): 1, (2, 0): 1}
    assert spread_by_case(first) == {(1, 1): 2, (1, 0): 2}


def test_a_re_run_replaces_its_cases_count() -> None:
    tally = LaneTally()
    failed = result("a", 3, 0, False)
    tally.add(failed)
    tally.remove(failed)
    assert tally.by_case == tally.spread == {}
    tally.add(result("a", 3, 0, True))
    assert tally.summary("a").cases == 1


def test_cases_that_all_pass_the_same_share_count_every_run() -> None:
    # Two cases at 7/10 each: nothing sets them apart, so twenty runs' worth (it used to fall
    # back to the two cases, wider than when one case was at 6/10).
    low, high, effective = clustered_interval({(10, 7): 2})
    assert effective == 20
    assert (low, high) == pytest.approx(wilson(14, 20))
    assert clustered_interval({(10, 6): 1, (10, 7): 1})[2] <= 20
    assert clustered_interval({(5, 5): 3})[2] == 3  # all passed: each case counts once


def test_the_historys_spreads_count_what_the_line_beside_them_says(tmp_path: Path) -> None:
    # Two lanes, four cases, three repeats; then one row damaged as a file from elsewhere
    # could be: the line's figures are the spread's own, and the row left out is said.
    cells = {(case, version): [case < 2, case < 3, True] for case in range(4) for version in "ab"}
    store, evaluation = small_evaluation(tmp_path / "h.db", cells)
    try:
        spreads = case_spreads(store)
        by_lane = spreads[(evaluation, "lane a")]
        assert by_lane == {(3, 3): 2, (3, 2): 1, (3, 1): 1}
        assert spreads[(evaluation, "")] == {(6, 6): 2, (6, 4): 1, (6, 2): 1}  # lanes together
        # p = 0.75, Σ n (c - p m)² = 2.75, var = 4/3 · 2.75 / 144, n_eff = 0.1875 / var = 7.36
        assert rate_by_case(by_lane) == "75% (9/12, 95% CI 40%–93% by case, 4 cases)"
        store.read("SELECT 1")  # the store's connection open, as the app holds it
    finally:
        store.close()
    db = sqlite3.connect(tmp_path / "h.db")
    with db:
        db.execute("UPDATE results SET case_no = 'x' WHERE id = 1")
    db.close()
    store = HistoryStore(tmp_path / "h.db")
    try:
        damaged = case_spreads(store)[(evaluation, "lane a")]
        assert sum(m * n for (m, _), n in damaged.items()) == 11
        assert rate_by_case(damaged).startswith("73% (8/11, 95% CI ")
        store.skip_bad("", (), VERDICTS)
        assert any("result 1 " in line for line in store.skipped())
    finally:
        store.close()
