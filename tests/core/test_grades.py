"""Human grades and blind pairwise choices: kept in the history across a restart, read as the
judge's agreement with the people (Cohen's κ from known tables), and a pairwise win rate
whose 95 % interval covers a known truth about 95 % of the time (simulated)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from sandbox_app.core.comparing.agreement import MIN_LABELS, Agreement, win_rate
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.history.history_grades import (
    Grade,
    PairChoice,
    RunRef,
    choices,
    choose,
    clear_grade,
    evaluation_grades,
    grade_of,
    judged_grades,
    result_ref,
    set_grade,
)
from sandbox_app.core.history.history_schema import HistoryError
from sandbox_app.core.results.checks import CheckResult
from sandbox_app.core.results.eval_result import EvalResult


def judged(case: int, judge: bool | None) -> EvalResult:
    return EvalResult("A", case, 0, passed=bool(judge), checks=(CheckResult("judge", judge),))


def test_grades_and_choices_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    store = HistoryStore(path)
    evaluation = store.begin_evaluation("t", "/s.json", {"A": "m", "B": "m"}, 3, 1, "eval")
    for case in range(3):
        store.add_result(evaluation, judged(case, case != 1), [], "m")
    run = store.add_run("Run tab", "t", {"status": "answered", "answer": "4"}, True)
    set_grade(store, RunRef("run", run), Grade(False, "right number, rude tone"))
    set_grade(store, result_ref(store, evaluation, "A", 0, 0), Grade(True))
    set_grade(store, result_ref(store, evaluation, "A", 1, 0), Grade(True, "judge too strict"))
    set_grade(store, result_ref(store, evaluation, "A", 1, 0), Grade(False, "no: it is wrong"))
    pick = PairChoice(2, "A", "B", first_left=False, seed=7, choice="second")
    choose(store, evaluation, pick)
    store.close()

    again = HistoryStore(path)  # a new store on the same file: what a new window opens
    assert grade_of(again, RunRef("run", run)) == Grade(False, "right number, rude tone")
    assert evaluation_grades(again, evaluation) == {
        ("A", 0, 0): Grade(True),
        ("A", 1, 0): Grade(False, "no: it is wrong"),  # graded again: replaced
    }
    assert choices(again, evaluation) == [pick]
    # Labels for the judge: both graded runs it decided, (person, judge).
    assert sorted(judged_grades(again, "/s.json")) == [(False, False), (True, True)]
    assert judged_grades(again, "/other.json") == []
    clear_grade(again, RunRef("run", run))
    assert grade_of(again, RunRef("run", run)) is None


def test_a_run_again_is_not_graded_by_the_grade_of_the_run_it_replaced(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    evaluation = store.begin_evaluation("t", "/s.json", {"A": "m"}, 1, 1, "eval")
    store.add_result(evaluation, judged(0, False), [], "m")
    ref = result_ref(store, evaluation, "A", 0, 0)
    set_grade(store, ref, Grade(False))
    store.add_result(evaluation, judged(0, True), [], "m")  # the same run made again
    assert result_ref(store, evaluation, "A", 0, 0) == ref  # the row is kept…
    assert grade_of(store, ref) is None  # …its grade is not: it graded another answer


def test_an_unjudged_run_is_no_label_and_a_missing_run_cannot_be_graded(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    evaluation = store.begin_evaluation("t", "/s.json", {"A": "m"}, 1, 1, "eval")
    store.add_result(evaluation, judged(0, None), [], "m")
    set_grade(store, result_ref(store, evaluation, "A", 0, 0), Grade(True))
    assert judged_grades(store, "/s.json") == []
    with pytest.raises(HistoryError, match="no run 99"):
        set_grade(store, RunRef("run", 99), Grade(True))
    with pytest.raises(HistoryError, match="has no run"):
        result_ref(store, evaluation, "B", 0, 0)


def test_kappa_of_known_tables() -> None:
    # Wikipedia's "Cohen's kappa" worked example: 20 / 5 / 10 / 15 of 50 → p_o 0.7, p_e 0.5.
    table = Agreement(both_pass=20, only_people=5, only_judge=10, both_fail=15)
    assert table.kappa == pytest.approx(0.4)
    assert table.true_pass == pytest.approx(20 / 25)
    assert table.true_fail == pytest.approx(15 / 25)
    assert table.labels == 50
    # A judge that passes everything agrees 90 % of the time here, and κ says it has no skill.
    lenient = Agreement.of([(True, True)] * 90 + [(False, True)] * 10)
    assert lenient.kappa == pytest.approx(0.0)
    assert lenient.true_fail == 0.0
    assert not lenient.calibrated
    # Its second example: 45 / 15 / 25 / 15 → p_o 0.6, p_e 0.54, κ 0.130.
    assert Agreement(45, 15, 25, 15).kappa == pytest.approx(0.1304, abs=1e-4)
    # Perfect agreement; chance-certain agreement has no κ.
    assert Agreement.of([(True, True), (False, False)]).kappa == pytest.approx(1.0)
    assert Agreement.of([(True, True)] * 5).kappa is None
    assert Agreement().kappa is None


def test_a_judge_is_calibrated_only_with_enough_labels_and_kappa() -> None:
    good = [(True, True)] * 30 + [(False, False)] * 20
    assert (
        Agreement.of(good[:-1])
        .words()
        .endswith(f"uncalibrated (fewer than {MIN_LABELS} human grades of judged runs)")
    )
    assert Agreement.of(good).calibrated
    assert Agreement.of(good).words() == "κ 1.00 · true pass 100% · true fail 100% · 50 labels"
    noisy = (
        [(True, True)] * 20 + [(True, False)] * 10 + [(False, True)] * 10 + [(False, False)] * 20
    )
    assert Agreement.of(noisy).kappa == pytest.approx(1 / 3)
    assert "uncalibrated (κ below 0.6)" in Agreement.of(noisy).words()


def test_kappa_estimates_a_known_judges_kappa() -> None:
    # A judge with known true-pass 0.9 and true-fail 0.8 on answers that pass 60 % of the
    # time has κ = (p_o − p_e)/(1 − p_e) computed from those; 2,000 simulated labels land near.
    prevalence, sensitivity, specificity = 0.6, 0.9, 0.8
    observed = prevalence * sensitivity + (1 - prevalence) * specificity
    judge_pass = prevalence * sensitivity + (1 - prevalence) * (1 - specificity)
    chance = prevalence * judge_pass + (1 - prevalence) * (1 - judge_pass)
    truth = (observed - chance) / (1 - chance)
    rng = random.Random(35)
    labels = []
    for _ in range(2000):
        good = rng.random() < prevalence
        labels.append((good, rng.random() < (sensitivity if good else 1 - specificity)))
    assert Agreement.of(labels).kappa == pytest.approx(truth, abs=0.05)


@pytest.mark.parametrize(("truth", "n"), [(0.5, 20), (0.7, 30), (0.85, 40), (0.3, 60)])
def test_the_win_rates_interval_covers_the_truth_95_percent_of_the_time(
    truth: float, n: int
) -> None:
    # Reviews of n decided cases (plus ties, which never count) where people prefer the
    # first arm with probability ``truth``: the 95 % interval holds the truth in 93–97.5 %.
    rng = random.Random(int(truth * 1000) + n)
    trials, covered = 4000, 0
    for _ in range(trials):
        picks = ["first" if rng.random() < truth else "second" for _ in range(n)]
        picks += ["tie"] * rng.randrange(5)
        low, high = win_rate(picks).interval
        covered += low <= truth <= high
    assert 0.93 <= covered / trials <= 0.975


def test_win_rate_words_count_ties_apart() -> None:
    said = win_rate(["first"] * 7 + ["second"] * 3 + ["tie"] * 2).words("v2", "v1")
    assert said == "v2 over v1: 70% (7/10, 95% CI 40%–89%) · 2 ties"
    assert "no choice but ties" in win_rate(["tie"]).words("v2", "v1")


def test_the_test_sets_json_and_html_exports_carry_grades() -> None:
    from sandbox_app.core.results.eval_result import RunKey
    from sandbox_app.core.results.exports import TEST_SET_FORMATS, EvalResults

    runs = [(judged(0, True), None), (judged(1, False), None)]
    grades = {RunKey("A", 1, 0): Grade(True, "the judge is wrong here").to_dict()}
    results = EvalResults("t", ["q1", "q2"], ["A"], runs, grades=grades)
    document = json.loads(TEST_SET_FORMATS.exporter("json").text(results))
    assert "grade" not in document[0]
    assert document[1]["grade"] == {"good": True, "note": "the judge is wrong here"}
    page = TEST_SET_FORMATS.exporter("html").text(results)
    assert "<h2>Human grades</h2>" in page
    assert "case 2, A, repeat 1: 👍 the judge is wrong here" in page
