"""`react-sandbox history list|show` with what optimize, the people and the judge left in the
history: an optimization's candidates and outcome, human grades, blind pairwise choices with
their win rate, and the judge's agreement with the grades."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sandbox_app.cli.main import main
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.history.history_grades import (
    Grade,
    PairChoice,
    choose,
    result_ref,
    set_grade,
)
from sandbox_app.core.results.checks import CheckResult
from sandbox_app.core.results.eval_result import EvalResult, JudgeUsage
from sandbox_app.core.scenarios.scenario_file import scenarios_dir
from tests.core.test_optimize import optimize


def history(db: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    capsys.readouterr()
    assert main(["history", *argv, "--db", str(db)]) == 0
    return capsys.readouterr().out


def test_history_shows_an_optimizations_candidates_and_outcome(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "improve_offline.json"
    shutil.copy(scenarios_dir() / "improve_offline.json", path)
    db = tmp_path / "h.sqlite3"
    assert optimize(str(path), "--reflect", "scripted", "--db", str(db))[0] == 0
    listed = history(db, capsys, "list")
    assert "· optimization 1" in listed
    evaluation = int(listed.split()[0].lstrip("#"))
    shown = history(db, capsys, "show", str(evaluation))
    assert "optimization 1: finished" in shown
    assert "stopped: every training case passes" in shown
    assert "candidate 1 (from 0): refused:" in shown
    assert "{format}" in shown
    assert ": 100% of training cases" in shown
    assert "winner: candidate 3, on the held-out cases better" in shown
    document = json.loads(history(db, capsys, "show", str(evaluation), "--json"))
    assert document["optimization"]["outcome"]["winner"] == 3
    assert len(document["optimization"]["reflections"]) == 3


def test_history_shows_grades_pairwise_choices_and_the_judges_agreement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "h.sqlite3"
    store = HistoryStore(db)
    evaluation = store.begin_evaluation("t", "/s.json", {"A": "m", "B": "m"}, 4, 1, "eval")
    for lane in ("A", "B"):
        for case in range(4):
            judged = CheckResult("judge", case % 2 == 0)
            usage = JudgeUsage(judge_id="abc123")  # the judge that judged them
            result = EvalResult(lane, case, 0, True, checks=(judged,), judge=usage)
            store.add_result(evaluation, result, [], "m")
    set_grade(store, result_ref(store, evaluation, "A", 0, 0), Grade(True, "crisp"))
    set_grade(store, result_ref(store, evaluation, "A", 1, 0), Grade(True))
    for case, choice in enumerate(("first", "first", "second", "tie")):
        choose(store, evaluation, PairChoice(case, "A", "B", case % 2 == 0, 3, choice))  # type: ignore[arg-type]
    store.close()
    shown = history(db, capsys, "show", str(evaluation))
    assert "case 1 · A · repeat 1: 👍 crisp" in shown
    assert "A over B: 67% (2/3, 95% CI 21%–94%) · 1 tie" in shown
    assert (
        "judge's agreement with the human grades: κ 0.00 · true pass 50% · true fail — · "
        "2 labels — uncalibrated (fewer than 50 human grades of judged runs)" in shown
    )
    document = json.loads(history(db, capsys, "show", str(evaluation), "--json"))
    assert document["pairwise"][0]["first_wins"] == 2
    assert document["judge_agreement"]["calibrated"] is False
