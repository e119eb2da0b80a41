"""Trajectory checks: each check passes and fails on a purpose-built offline case (the offline
model's replies write the path), named in the results file; the file's and an import's
checks, with one-line errors; the built-in test set's guess that is right by luck."""

from __future__ import annotations

import asyncio
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.application.eval_runner import EvalLane, EvalRunner
from sandbox_app.backends.registry import SCRIPTED, config_for
from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.core.results.compare import Price
from sandbox_app.core.results.eval_report import results_markdown
from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.results.evaluation import RunKey, read_results
from sandbox_app.core.results.trajectory import trajectory_checks
from sandbox_app.core.running.metrics import RunMetrics, StepMetrics
from sandbox_app.core.scenarios.lane_settings import LaneSettings
from sandbox_app.core.scenarios.scenario import EvalCase, Expected, Scenario, Script
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.scenario_file import (
    load_scenario,
    save_scenario,
    scenario_from_dict,
    scenario_to_dict,
    scenarios_dir,
)
from sandbox_app.core.scenarios.test_set import import_cases
from sandbox_app.core.scenarios.trajectory_spec import TrajectorySpec

QUESTION = "What does Brightgrid Pro cost per developer for a year?"
SEARCH = "Thought: Find the price.\nAction: search[Brightgrid Pro price]"
CALC = "Thought: Twelve months.\nAction: calculator[20 * 12]"
ANSWER = "Thought: Done.\nAnswer: $240"
# The paths the offline model takes (each ends with the right answer: only the path differs).
PATHS = {
    "search then calculator": [SEARCH, CALC, ANSWER],
    "calculator then search": [CALC, SEARCH, ANSWER],
    "a guess": [ANSWER],
    "three searches": [SEARCH, SEARCH, SEARCH, CALC, ANSWER],
    "a format error": ["It is probably 240 dollars.", ANSWER],
    "a fabricated observation": [SEARCH + "\nObservation: Pro costs $20.", CALC, ANSWER],
    "keyword input": ['Thought: Look.\nAction: search[query="Brightgrid", top=3]', ANSWER],
}


def scenario(path: str, checks: dict[str, Any], defaults: dict[str, Any] | None = None) -> Scenario:
    case = EvalCase(
        QUESTION,
        Expected("240", "number", 0.5),
        replies=tuple(PATHS[path]),
        checks=TrajectorySpec.from_dict(checks),
    )
    return Scenario(
        title="paths",
        question=QUESTION,
        max_steps=8,
        # A server that ignores stop sequences: a fabricated observation reaches the app.
        script=Script(tokens_per_second=0, ignore_stop=True),
        test_set=(case,),
        checks=TrajectorySpec.from_dict(defaults or {}),
    )


def result_of(tmp_path: Path, path: str, checks: dict[str, Any], **kw: Any) -> EvalResult:
    """The case run by `react-sandbox eval`: its line in the results file."""
    tmp_path.mkdir(exist_ok=True)
    file, results = tmp_path / "paths.json", tmp_path / "results.jsonl"
    save_scenario(scenario(path, checks, **kw), file)
    eval_command([str(file), "--out", str(results)], io.StringIO())
    (result,) = read_results(results)
    return result


def checks_by_name(result: EvalResult) -> dict[str, tuple[bool | None, str]]:
    return {c.name: (c.passed, c.detail) for c in result.checks}


# (checks, the path that passes them, the path that fails, the check's name, its detail)
CASES = [
    ({"tools_called": ["search"]}, "search then calculator", "a guess",
     "tool used: search", "search never called"),
    ({"tools_called": ["search", "calculator"], "order": "in_order"}, "three searches",
     "calculator then search", "tool order: search → calculator",
     "called calculator before search"),
    ({"tools_called": ["search", "calculator"], "order": "exact"}, "search then calculator",
     "three searches", "tool sequence: search → calculator",
     "called search, search, search, calculator"),
    ({"never": ["calculator"]}, "a guess", "calculator then search",
     "never: calculator", "calculator called at step 1"),
    ({"inputs": [{"tool": "search", "match": "contains", "value": "pro PRICE"}]},
     "search then calculator", "a guess", 'input of search contains "pro PRICE"',
     "search never called"),
    ({"inputs": [{"tool": "search", "match": "exact", "value": "brightgrid pro price"}]},
     "search then calculator", "keyword input", 'input of search is "brightgrid pro price"',
     'search called with "query=\\"Brightgrid\\", top=3"'),
    ({"inputs": [{"tool": "search", "match": "regex", "value": "^bright\\w+ pro"}]},
     "three searches", "keyword input", 'input of search matches "^bright\\\\w+ pro"',
     'search called with "query=\\"Brightgrid\\", top=3"'),
    ({"inputs": [{"tool": "search", "match": "json", "value": {"query": "Brightgrid", "top": 3}}]},
     "keyword input", "search then calculator",
     'input of search holds {"query": "Brightgrid", "top": 3}',
     'search called with "Brightgrid Pro price"'),
    ({"max_steps": 3}, "search then calculator", "three searches", "steps ≤ 3", "5 steps > 3"),
    ({"no_format_errors": True}, "search then calculator", "a format error",
     "no format errors", "1 format error"),
    ({"no_fabrication": True}, "search then calculator", "a fabricated observation",
     "no fabricated observation", "1 fabricated observation cut"),
]  # fmt: skip


@pytest.mark.parametrize(("checks", "good", "bad", "name", "detail"), CASES)
def test_each_check_passes_on_the_right_path_and_fails_on_the_wrong_one(
    tmp_path: Path, checks: dict[str, Any], good: str, bad: str, name: str, detail: str
) -> None:
    passed = result_of(tmp_path / "good", good, checks)
    assert passed.passed is True
    assert checks_by_name(passed)[name] == (True, "")
    failed = result_of(tmp_path / "bad", bad, checks)
    assert failed.answer == "$240"  # the answer was right: the path failed it
    assert failed.passed is False
    assert checks_by_name(failed)[name] == (False, detail)


def test_tokens_are_bounded_and_the_bound_named(tmp_path: Path) -> None:
    loose = result_of(tmp_path / "loose", "search then calculator", {"max_tokens": 100_000})
    assert checks_by_name(loose)["tokens ≤ 100,000"] == (True, "")
    tight = result_of(tmp_path / "tight", "search then calculator", {"max_tokens": 10})
    passed, detail = checks_by_name(tight)["tokens ≤ 10"]
    assert passed is False
    assert re.fullmatch(r"~?[\d,]+ tokens > 10", detail)
    assert tight.passed is False


def metrics(wall_s: float, tokens_in: int, tokens_out: int) -> RunMetrics:
    step = StepMetrics(1, 0.1, wall_s, tokens_in, tokens_out, estimated=False)
    return RunMetrics((step,), wall_s=wall_s)


def test_cost_and_time_are_checked_against_their_bounds() -> None:
    spec = TrajectorySpec.from_dict({"max_cost": 0.01, "max_seconds": 30})
    price = Price(input_per_million=1.0, output_per_million=10.0)
    cheap, dear = metrics(12.0, 1_000, 500), metrics(41.2, 5_000, 1_000)
    assert [(c.name, c.passed, c.detail) for c in trajectory_checks(spec, [], cheap, price)] == [
        ("cost ≤ $0.01", True, ""),
        ("time ≤ 30 s", True, ""),
    ]
    assert [(c.passed, c.detail) for c in trajectory_checks(spec, [], dear, price)] == [
        (False, "$0.0150 > $0.01"),
        (False, "41.2 s > 30 s"),
    ]
    # No price for the model: the bound cannot be checked, and that is never a pass.
    (cost, _) = trajectory_checks(spec, [], cheap, None, "tiny-model")
    assert (cost.passed, cost.detail) == (
        None,
        "no price for tiny-model (Prices…, or eval --prices)",
    )


def test_the_runner_checks_cost_by_the_lanes_price_and_time_on_a_real_run() -> None:
    config = config_for(SCRIPTED)
    lane = EvalLane("offline", config, LaneSettings())
    results: list[dict[str, Any]] = []
    checks = {"max_cost": 0.5, "max_seconds": 600}
    for prices in ({config.model_name: Price(1.0, 1.0)}, {}):
        runner = EvalRunner(
            scenario("search then calculator", checks),
            [lane],
            lambda result, _record: results.append(result),
            prices=prices,
        )
        asyncio.run(runner.run_all([RunKey("offline", 0, 0)]))
    priced, unpriced = (checks_by_name(r) for r in results)
    assert priced == {"cost ≤ $0.5": (True, ""), "time ≤ 600 s": (True, "")}
    assert unpriced["cost ≤ $0.5"][0] is None
    assert [r.passed for r in results] == [True, False]


def test_a_cases_checks_are_over_the_scenarios_defaults(tmp_path: Path) -> None:
    defaults = {"tools_called": ["search"], "max_steps": 2, "no_format_errors": True}
    result = result_of(tmp_path, "search then calculator", {"max_steps": 3}, defaults=defaults)
    assert list(checks_by_name(result)) == ["tool used: search", "steps ≤ 3", "no format errors"]
    assert result.passed is True


def test_checks_round_trip_through_the_scenario_file(tmp_path: Path) -> None:
    checks = {
        "tools_called": ["search", "calculator"],
        "order": "exact",
        "never": ["delete_file"],
        "inputs": [
            {"tool": "search", "match": "contains", "value": "Brightgrid"},
            {"tool": "calculator", "match": "json", "value": {"expression": "20 * 12"}},
        ],
        "max_steps": 4,
        "no_format_errors": True,
        "no_fabrication": False,
        "max_tokens": 2000,
        "max_cost": 0.01,
        "max_seconds": 30.0,
    }
    file = tmp_path / "s.json"
    save_scenario(scenario("a guess", checks, defaults={"max_steps": 6}), file)
    data = json.loads(file.read_text(encoding="utf-8"))
    assert data["test_set"][0]["checks"] == checks
    assert data["checks"] == {"max_steps": 6}
    loaded = load_scenario(file)
    assert loaded.test_set[0].checks == TrajectorySpec.from_dict(checks)
    # A scenario without checks writes none: its file stays as it was.
    assert "checks" not in scenario_to_dict(Scenario())


AT = '"test_set[0].checks'  # where a case's checks are in the file


@pytest.mark.parametrize(
    ("checks", "message"),
    [
        ({"order": "sideways"}, AT + '.order" must be one of any, in_order, exact.'),
        ({"max_steps": -1}, AT + '.max_steps" must be a whole number, at least 0 (got -1).'),
        ({"tools_called": "search"}, AT + '.tools_called" must be a list of tool names.'),
        ({"no_fabrication": "yes"}, AT + '.no_fabrication" must be true or false (got "yes").'),
        ({"max_cost": "cheap"}, AT + '.max_cost" must be a number, at least 0 (got "cheap").'),
        ({"steps": 3}, AT + '" has no check "steps"; known: tools_called, order, never, '
         "inputs, max_steps, no_format_errors, no_fabrication, max_tokens, max_cost, max_seconds."),
        ({"inputs": [{"tool": "search", "match": "regex", "value": "(a"}]},
         AT + '.inputs[0].value" is not a valid regex: missing ), unterminated subpattern at '
         "position 0."),
        ({"inputs": [{"tool": "search", "match": "json", "value": "x"}]},
         AT + '.inputs[0].value" must be a JSON object for match "json".'),
    ],
)  # fmt: skip
def test_bad_checks_in_a_file_are_one_line(checks: dict[str, Any], message: str) -> None:
    data = scenario_to_dict(scenario("a guess", {}))
    data["test_set"][0]["checks"] = checks
    with pytest.raises(ScenarioError) as err:
        scenario_from_dict(data)
    assert str(err.value) == message


def test_checks_import_from_csv_columns_and_jsonl_objects() -> None:
    csv_text = (
        "question,answer,tools_called,order,never,max_steps\n"
        "Q1,240,search | calculator,in_order,delete_file,4\n"
        "Q2,5000,,,,\n"
    )
    first, second = import_cases(csv_text, "csv")
    assert first.checks == TrajectorySpec(
        tools_called=("search", "calculator"), order="in_order", never=("delete_file",), max_steps=4
    )
    assert second.checks == TrajectorySpec()  # empty cells say nothing
    assert second.variables == {}  # and are no variables either
    jsonl = (
        '{"question": "Q", "answer": "240", "checks": {"no_fabrication": true, '
        '"inputs": [{"tool": "search", "match": "contains", "value": "Pro"}]}, "max_steps": 3}\n'
    )
    (case,) = import_cases(jsonl, "jsonl")
    assert case.checks.no_fabrication is True
    assert case.checks.max_steps == 3
    assert case.checks.inputs is not None
    assert case.checks.inputs[0].value == "Pro"
    with pytest.raises(ScenarioError, match=r"^row 2: \"max_steps\" must be a whole number"):
        import_cases("question,answer,max_steps\nQ,1,four\n", "csv")
    with pytest.raises(ScenarioError) as err:
        import_cases("question,answer,order\nQ,1,sideways\n", "csv")
    assert str(err.value) == 'row 2: "checks.order" must be one of any, in_order, exact.'


def test_tool_lists_split_at_spaces_commas_and_bars() -> None:
    csv_text = (
        "question,answer,tools_called,never\n"
        "Q1,240,search calculator,delete_file ask_user\n"
        'Q2,5000,"search,  calculator",\n'
    )
    first, second = import_cases(csv_text, "csv")
    assert first.checks.tools_called == ("search", "calculator")  # not one "search calculator"
    assert first.checks.never == ("delete_file", "ask_user")
    assert second.checks.tools_called == ("search", "calculator")


def test_the_built_in_test_set_catches_a_right_answer_reached_by_guessing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example = scenarios_dir() / "test_set.json"
    results_file = tmp_path / "results.jsonl"
    assert eval_command([str(example), "--out", str(results_file)], io.StringIO()) == 0
    results = sorted(read_results(results_file), key=lambda r: r.case)
    guess = results[11]
    assert "9 developers" in (guess.question or "")
    assert guess.answer == "$2,160 per year"  # the right number: the answer check passes
    assert guess.expected == "2160"
    assert guess.passed is False  # its path does not: it never searched
    path = [c for c in guess.checks if c.name != "judge"]  # the judge has its own tests
    failed = {c.name: c.detail for c in path if not c.passed}
    assert failed == {
        "tool used: search": "search never called",
        "tool order: search → calculator": "search never called",
    }
    assert all(r.passed and r.checks for r in results[:11])  # every other path is right
    err = capsys.readouterr().err
    assert "case 12 repeat 1: FAILED ($2,160 per year · ✗ tool used: search — search never " in err
    markdown = results_markdown([r.question for r in results], ["scripted"], results)
    assert (
        "- case 12, scripted, repeat 1: ✗ tool used: search — search never called; "
        "✗ tool order: search → calculator — search never called"
    ) in markdown
