"""Test sets and `react-sandbox eval`: cases in the scenario file, CSV/JSONL import, the
headless evaluation offline and against the test server, resume after a kill."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from sandbox_app.cli.cli_io import EXIT_STOPPED
from sandbox_app.cli.evaluating.eval_command import (
    EXIT_BELOW_PASS_RATE,
    _lane_from_spec,
    eval_command,
)
from sandbox_app.core.estimates.intervals import wilson
from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.results.evaluation import RunKey, plan, read_results, still_to_run
from sandbox_app.core.scenarios.lane_settings import LaneSettings
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir
from sandbox_app.core.scenarios.test_set import import_cases
from tests.model_server import ModelScript, ModelServer

EXAMPLE = scenarios_dir() / "test_set.json"


def evaluate(tmp_path: Path, *args: str) -> tuple[int, str, list[EvalResult]]:
    out = io.StringIO()
    results = tmp_path / "results.jsonl"
    code = eval_command([str(EXAMPLE), "--out", str(results), *args], out)
    return code, out.getvalue(), read_results(results)


def test_wilson_interval_matches_known_values() -> None:
    # Reference values: Wilson score interval, z = 1.96 (e.g. Newcombe 1998, table I).
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert wilson(81, 263) == pytest.approx((0.2553, 0.3662), abs=1e-4)


def test_the_example_test_set_runs_offline_and_is_summarised(tmp_path: Path) -> None:
    code, out, results = evaluate(tmp_path, "--repeat", "2")
    assert code == 0
    assert len(results) == 24
    failed = sorted({r.case for r in results if not r.passed})
    assert failed == [11]  # the case whose scripted model guesses the price
    assert "scripted: 92% (22/24, 95% CI 65%–99% by case, 12 cases)" in out
    trace = results[0].events
    assert {"ActionParsed", "Observation", "RunFinished"} <= {e["type"] for e in trace or ()}


def test_below_the_minimum_pass_rate_exits_4(tmp_path: Path) -> None:
    code, out, _ = evaluate(tmp_path, "--min-pass-rate", "95%")
    assert code == EXIT_BELOW_PASS_RATE
    assert "below the minimum pass rate of 95%: scripted" in out


def test_resume_skips_what_is_done_and_only_failed_runs_the_failures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert evaluate(tmp_path)[0] == 0
    code, _, results = evaluate(tmp_path, "--resume")
    assert (code, len(results)) == (0, 12)  # nothing run twice
    capsys.readouterr()
    _, _, results = evaluate(tmp_path, "--only-failed")
    assert len(results) == 13  # the one failure, again
    assert results[-1].case == 11
    assert "1/1 scripted case 12 repeat 1: FAILED" in capsys.readouterr().err  # the progress


def test_an_existing_results_file_is_never_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text('{"kept": true}\n')
    assert eval_command([str(EXAMPLE), "--out", str(results)], io.StringIO()) == 1
    assert "exists: add --resume" in capsys.readouterr().err
    assert results.read_text() == '{"kept": true}\n'


def a_slow_evaluation(tmp_path: Path, runs_done: int) -> tuple[subprocess.Popen[str], list[str]]:
    """``eval`` of the example set in a subprocess, its offline model 150 ms a reply, one run
    at a time; returned once ``runs_done`` runs are written (with the command, to resume)."""
    slow = load_scenario(EXAMPLE)
    slow = slow.with_changes(script=slow.script.__class__(slow.script.replies, 150.0))
    scenario = tmp_path / "slow.json"
    save_scenario(slow, scenario)
    results = tmp_path / "results.jsonl"
    command = [sys.executable, "-m", "sandbox_app", "eval", str(scenario), "--out", str(results)]
    # Ctrl+C's default, whatever this process inherited: a shell's background job (a CI
    # runner's) starts with SIGINT ignored, and Python then never turns it into Ctrl+C.
    process = subprocess.Popen(
        [*command, "--concurrency", "1"],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert process.stderr is not None
    # A progress line (on stderr) is printed once its run's result line is written and flushed.
    progress = [process.stderr.readline() for _ in range(runs_done)]
    assert all("scripted case" in line for line in progress), progress
    return process, command


def test_a_killed_evaluation_resumes_with_nothing_lost(tmp_path: Path) -> None:
    process, command = a_slow_evaluation(tmp_path, 3)
    results = tmp_path / "results.jsonl"
    assert process.stderr is not None
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    process.stderr.close()
    before = read_results(results)
    assert 3 <= len(before) < 12
    resumed = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    after = read_results(results)
    keys = [(r.lane, r.case, r.repeat) for r in after]
    assert sorted(keys) == sorted({(k.lane, k.case, k.repeat) for k in plan(["scripted"], 12, 1)})
    assert after[: len(before)] == before  # what was written before the kill is kept as it was


def test_ctrl_c_stops_with_exit_3_and_resume_goes_on(tmp_path: Path) -> None:
    process, command = a_slow_evaluation(tmp_path, 2)
    results = tmp_path / "results.jsonl"
    assert process.stderr is not None
    process.send_signal(signal.SIGINT)  # what Ctrl+C in the terminal sends
    code = process.wait(timeout=30)
    said = process.stderr.read()
    process.stderr.close()
    assert code == EXIT_STOPPED, said
    assert "Traceback" not in said
    written = len(read_results(results))
    assert f"stopped after {written} runs; results.jsonl has them, --resume goes on" in said
    resumed = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert len(read_results(results)) == 12


def test_two_server_lanes_side_by_side(tmp_path: Path, fake_server: ModelServer) -> None:
    cases = load_scenario(EXAMPLE).test_set
    by_question = {c.question: list(c.replies) for c in cases}  # runs arrive in any order
    fake_server.set_model("good", ModelScript(by_question=by_question))
    fake_server.set_model("bad", ModelScript(replies=["Answer: 42"], cycle=True))
    url = fake_server.base_url
    code, _, results = evaluate(
        tmp_path,
        "--lane",
        f"{url}:good",
        "--lane",
        f"{url}:bad,temperature=0.5",
        "--concurrency",
        "2",
    )
    assert code == 0
    by_lane = {
        lane: [r for r in results if r.lane == lane] for lane in (f"{url}:good", f"{url}:bad")
    }
    assert [len(v) for v in by_lane.values()] == [12, 12]
    assert sum(r.passed for r in by_lane[f"{url}:bad"]) == 0
    assert all(r["temperature"] == 0.5 for r in fake_server.requests if r["model"] == "bad")


def test_the_html_report_shows_the_grid_and_escapes_model_text(tmp_path: Path) -> None:
    from sandbox_app.core.results.eval_report import grid, to_html

    report = tmp_path / "report.html"
    code, out, results = evaluate(tmp_path, "--repeat", "2", "--report", str(report))
    assert code == 0
    assert f"report: {report}" in out
    page = report.read_text(encoding="utf-8")
    assert "92% (22/24)" in page
    assert "65%–99% by case, 12 cases" in page
    assert page.count("<tr>") == 1 + 1 + 1 + 12  # two header rows, one lane, twelve cases
    questions = [c.question for c in load_scenario(EXAMPLE).test_set]
    rows = grid(questions, ["scripted"], results)
    assert [row[2] for row in rows] == ["2/2"] * 11 + ["0/2"]
    hostile = [replace(results[0], answer="<script>alert(1)</script>", passed=False)]
    assert "<script>" not in to_html("t", questions, ["scripted"], hostile)


def test_lane_specs() -> None:
    base = LaneSettings(max_tokens=300, tool_calling="native")  # the scenario's "model"
    lane = _lane_from_spec("http://localhost:11434/v1:qwen3:8b,temperature=0.5", 60, base)
    assert (lane.config.base_url, lane.config.model) == ("http://localhost:11434/v1", "qwen3:8b")
    assert lane.settings == base.replace(temperature=0.5)  # the rest is the scenario's
    lane = _lane_from_spec("ollama:qwen3:8b,max_tokens=auto,reasoning_effort=low", 60, base)
    assert (lane.config.backend_id, lane.config.model) == ("ollama", "qwen3:8b")
    assert lane.settings == base.replace(max_tokens=None, reasoning_effort="low")
    with pytest.raises(ValueError, match="use temperature="):
        _lane_from_spec("ollama:m,colour=blue", 60, base)


def test_still_to_run_by_key() -> None:
    planned = plan(["a", "b"], 2, 1)
    done = [EvalResult("a", 0, 0, passed=False)]
    assert RunKey("a", 0, 0) not in still_to_run(planned, done)
    assert still_to_run(planned, done, only_failed=True) == [RunKey("a", 0, 0)]


CSV = (
    "question,answer,match,documents\n"
    "What is 2 + 2?,4,number,\n"
    "Refunds?,5 working days,contains,Refunds take 5 working days. | Other\n"
)


def test_import_from_csv_and_jsonl() -> None:
    cases = import_cases(CSV, "csv")
    assert [(c.question, c.expected.answer, c.expected.match) for c in cases] == [
        ("What is 2 + 2?", "4", "number"),
        ("Refunds?", "5 working days", "contains"),
    ]
    assert cases[1].documents == ("Refunds take 5 working days.", "Other")
    jsonl = (
        '{"question": "Q1", "answer": "1", "replies": ["Answer: 1"]}\n\n'
        '{"question": "Q2", "expected": {"answer": "2", "match": "exact"}}\n'
    )
    cases = import_cases(jsonl, "jsonl")
    assert cases[0].replies == ("Answer: 1",)
    assert cases[1].expected.match == "exact"


@pytest.mark.parametrize(
    ("text", "kind", "message"),
    [
        ("q,a\n1,2\n", "csv", 'the header must name a "question" and an "answer" column.'),
        ("question,answer\n,4\n", "csv", 'row 2: "question" is empty.'),
        (
            "question,answer,match\nQ,4,fuzzy\n",
            "csv",
            'row 2: "match" must be one of exact, contains, number, regex.',
        ),
        ('{"question": "Q", "answer": "1"}\nnot json\n', "jsonl", "row 2: not a JSON object."),
        ("question,answer\n", "csv", "the file holds no cases (a header and at least one row)."),
    ],
)
def test_a_bad_row_is_one_line_naming_it(text: str, kind: str, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        import_cases(text, kind)
    assert str(info.value) == message


def test_a_test_set_round_trips_through_the_scenario_file(tmp_path: Path) -> None:
    scenario = load_scenario(EXAMPLE)
    assert len(scenario.test_set) == 12
    save_scenario(scenario, tmp_path / "copy.json")
    assert load_scenario(tmp_path / "copy.json") == scenario
    broken = json.loads(EXAMPLE.read_text())
    broken["test_set"][3]["expected"]["match"] = "fuzzy"
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    with pytest.raises(ScenarioError, match=r'"test_set\[3\].expected.match" must be one of'):
        load_scenario(tmp_path / "broken.json")


def test_the_cache_answers_a_request_seen_before_but_never_across_repeats_or_prompts(
    tmp_path: Path, fake_server: ModelServer
) -> None:
    replies = list(load_scenario(EXAMPLE).test_set[0].replies)
    fake_server.set_model("m", ModelScript(replies=replies))
    scenario = load_scenario(EXAMPLE)
    one_case = scenario.with_changes(test_set=scenario.test_set[:1])
    path = tmp_path / "one.json"
    save_scenario(one_case, path)
    cache = str(tmp_path / "cache")

    def evaluate_once(name: str, *extra: str) -> list[EvalResult]:
        lane = f"{fake_server.base_url}:m"
        args = [str(path), "--lane", lane, "--cache", cache, "--out", str(tmp_path / name)]
        assert eval_command([*args, *extra], io.StringIO()) == 0
        return read_results(tmp_path / name)

    first = evaluate_once("a.jsonl", "--repeat", "2")
    asked = fake_server.stats["completions"]
    assert asked == 2 * len(replies)  # each repeat is its own sample: nothing shared
    again = evaluate_once("b.jsonl", "--repeat", "2")
    assert fake_server.stats["completions"] == asked  # every request answered from the cache
    assert [r.answer for r in again] == [r.answer for r in first]
    changed = one_case.with_changes(system_prompt="Answer with care.\n{tools}\n{format}")
    save_scenario(changed, path)
    evaluate_once("c.jsonl")
    assert fake_server.stats["completions"] > asked  # a changed prompt never hits old entries


def test_a_text_lane_and_a_native_lane_of_the_offline_model(tmp_path: Path) -> None:
    code, _, results = evaluate(
        tmp_path, "--lane", "scripted", "--lane", "scripted,tool_calling=native"
    )
    assert code == 0
    lanes = sorted({str(r.lane) for r in results})
    assert lanes == ["scripted", "scripted (native tools)"]
    for lane in lanes:  # the same cases pass, the same one fails
        failed = sorted(r.case for r in results if r.lane == lane and not r.passed)
        assert failed == [11], lane
    native = next(r for r in results if r.lane == lanes[1])
    shown = "".join(e.get("text", "") for e in native.events or () if e["type"] == "TokenDelta")
    assert 'Action: search({"search_text": ' in shown


def test_the_cache_replays_native_tool_calls(tmp_path: Path, fake_server: ModelServer) -> None:
    from tests.core.test_native_tools import NATIVE_REPLIES

    fake_server.set_model("m", ModelScript(replies=[], native_replies=NATIVE_REPLIES))
    scenario = load_scenario(EXAMPLE)
    path = tmp_path / "one.json"
    save_scenario(scenario.with_changes(test_set=scenario.test_set[:1]), path)
    lane = f"{fake_server.base_url}:m,tool_calling=native"

    def evaluate_once(name: str) -> EvalResult:
        args = [str(path), "--lane", lane, "--cache", str(tmp_path / "cache")]
        assert eval_command([*args, "--out", str(tmp_path / name)], io.StringIO()) == 0
        (result,) = read_results(tmp_path / name)
        return result

    first = evaluate_once("a.jsonl")
    asked = fake_server.stats["completions"]
    assert asked == 3
    again = evaluate_once("b.jsonl")
    assert fake_server.stats["completions"] == asked
    actions = [
        [(e["tool"], e["input"]) for e in r.events or () if e["type"] == "ActionParsed"]
        for r in (first, again)
    ]
    assert actions[0] == actions[1] != []
    assert first.answer == again.answer == "$1,680 per year"


def test_a_lane_tally_takes_back_a_replaced_run() -> None:
    from sandbox_app.core.results.evaluation import LaneTally, summarise

    def result(repeat: int, passed: bool, wall: float) -> EvalResult:
        metrics = {"steps": [{}, {}], "tool_calls": 1, "wall_s": wall, "tokens_in": 10}
        line = {"lane": "a", "case": 0, "repeat": repeat, "passed": passed, "metrics": metrics}
        return EvalResult.from_dict(line)

    tally = LaneTally()
    first, second = result(0, False, 2.0), result(1, True, 1.0)
    tally.add(first)
    tally.add(second)
    tally.remove(first)
    tally.add(result(0, True, 3.0))  # re-run of repeat 0
    (expected,) = summarise([first, second, result(0, True, 3.0)], ["a"])
    assert tally.summary("a") == expected
    assert (expected.runs, expected.passed, expected.tool_calls) == (2, 2, 2)
    assert (expected.mean_steps, expected.latency_p95_s) == (2.0, 3.0)


def test_the_default_results_file_is_where_help_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        eval_command(["--help"], io.StringIO())
    said = " ".join(capsys.readouterr().out.split())
    assert "default: ./NAME.results.jsonl in the current folder" in said
    assert eval_command([str(EXAMPLE)], io.StringIO()) == 0
    assert len(read_results(tmp_path / "test_set.results.jsonl")) == 12


def test_ctrl_c_before_the_first_run_ends_leaves_no_file_and_names_none(
    tmp_path: Path, fake_server: ModelServer
) -> None:
    fake_server.set_model("slow", ModelScript(replies=["Answer: 42"], delay_first=60.0))
    process = subprocess.Popen(
        [sys.executable, "-m", "sandbox_app", "eval", str(EXAMPLE), "--lane",
         f"{fake_server.base_url}:slow", "--concurrency", "1"],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    assert fake_server.wait_for_stat("completions", 1, timeout=60)  # the first run is asking
    process.send_signal(signal.SIGINT)
    code = process.wait(timeout=30)
    assert process.stderr is not None
    said = process.stderr.read()
    process.stderr.close()
    assert code == EXIT_STOPPED, said
    assert "stopped before the first run ended; nothing written" in said
    assert "results.jsonl" not in said
    assert not (tmp_path / "test_set.results.jsonl").exists()


def test_token_counts_a_server_never_reported_are_estimated_and_marked_as_run_marks_them(
    tmp_path: Path, fake_server: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    # llama-cpp-python's server streams no usage (abetlen/llama-cpp-python#1082, #1640).
    from sandbox_app.cli.main import main

    cases = load_scenario(EXAMPLE).test_set
    by_question = {c.question: list(c.replies) for c in cases}
    fake_server.set_model("m", ModelScript(by_question=by_question, sends_usage=False))
    assert main(["run", "--base-url", fake_server.base_url, "--model", "m"]) == 0
    ran = capsys.readouterr().out
    assert "tokens ~" in ran  # `run`: "tokens ~716 in / ~70 out"
    code, out, results = evaluate(tmp_path, "--lane", f"{fake_server.base_url}:m")
    assert code == 0
    tokens_out = sum(r.metrics.tokens_out for r in results)
    tokens_in = sum(r.metrics.tokens_in for r in results)
    assert tokens_out > 0  # estimated from the replies, as `run` estimates them
    assert f"tokens ~{tokens_in:,} in / ~{tokens_out:,} out" in out
    assert all(r.metrics.estimated for r in results)
