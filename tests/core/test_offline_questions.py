"""The offline model answers only the question its replies were written for: asked another, it
says so plainly — never the example's "$1,680 per year" for "What is 2+2?"."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.cli.main import main
from sandbox_app.core.results.evaluation import read_results
from sandbox_app.core.results.verdict import Expected
from sandbox_app.core.scenarios.scenario import EvalCase
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir


def test_run_with_another_question_says_the_offline_model_has_no_replies(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "--question", "What is 2+2?"]) == 1
    out, err = capsys.readouterr()
    assert "$1,680" not in out + err
    assert "no replies for this question" in out + err


def test_the_scripts_question_survives_a_save_after_the_question_was_edited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = load_scenario(scenarios_dir() / "brightgrid.json")
    path = tmp_path / "edited.json"
    save_scenario(scenario.with_changes(question="What is 2+2?"), path)
    assert load_scenario(path).script.question == scenario.question
    assert main(["run", str(path)]) == 1
    assert "no replies for this question" in capsys.readouterr().out
    assert main(["run", str(scenarios_dir() / "brightgrid.json")]) == 0  # its own: answered


def test_a_case_without_replies_is_not_a_wrong_answer(tmp_path: Path) -> None:
    scenario = load_scenario(scenarios_dir() / "test_set.json")
    imported = EvalCase("What is the capital of France?", Expected("Paris"), None, ())
    path = tmp_path / "with_an_imported_case.json"
    save_scenario(scenario.with_changes(test_set=(*scenario.test_set, imported)), path)
    out = tmp_path / "results.jsonl"
    eval_command([str(path), "--out", str(out)], io.StringIO())
    last = next(r for r in read_results(out) if r.question == imported.question)
    assert last.status == "failed"  # a run that could not be made, not an answer
    assert "no replies for this question" in str(last.reason)
    assert "$1,680" not in str(last.answer)
