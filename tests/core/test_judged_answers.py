"""Judged answers: a rubric graded by a judge model — the offline model playing one from written
verdicts, and one over HTTP (the real openai SDK against the test server) — pass, fail and
nonsense (unjudged, never a pass), structured output and its text fallback, the judge's
requests cached on a rerun, its tokens and cost counted."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.core.results.checks import CheckResult, described
from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.results.evaluation import read_results
from sandbox_app.core.results.judging import fill_prompt, judge_check, parse_verdict
from sandbox_app.core.scenarios.judge_file import judge_from_dict
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir
from sandbox_app.core.scenarios.test_set import import_cases
from tests.model_server import ModelScript, ModelServer, UnsupportedParam
from tests.model_server.anthropic import fake_anthropic

__all__ = ["fake_anthropic"]  # the fixture, imported for pytest

RUBRIC = "The answer names a colour."
ANSWERS = ("Red", "Seven", "Blue")  # graded pass, fail and nonsense below
PASS = '{"verdict": "pass", "score": 5, "reason": "It names a colour."}'
FAIL = "Verdict: FAIL\nReason: Seven is a number, not a colour."
NONSENSE = "What a lovely question! I enjoyed reading it."


def scenario_file(tmp_path: Path, judge: dict[str, Any], own: bool = False) -> Path:
    """Three cases the offline model answers Red, Seven and Blue; ``own``: each case carries
    its own offline verdict (pass, fail, nonsense)."""
    verdicts = (PASS, FAIL, NONSENSE)
    cases = [
        {
            "question": f"Question {i + 1}?",
            "expected": {"answer": answer},
            "replies": [f"Thought: Done.\nAnswer: {answer}"],
            **({"judge_replies": [verdicts[i]]} if own else {}),
        }
        for i, answer in enumerate(ANSWERS)
    ]
    data = {
        "version": 1,
        "title": "Colours",
        "question": "Question 1?",
        "tools": {"enabled": ["calculator"]},
        "script": {"tokens_per_second": 0},
        "test_set": cases,
        "rubric": RUBRIC,
        "judge": judge,
    }
    path = tmp_path / "colours.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def evaluate(path: Path, out: Path, *args: str) -> tuple[str, dict[int, EvalResult]]:
    printed = io.StringIO()
    eval_command([str(path), "--out", str(out), *args], printed)
    return printed.getvalue(), {r.case: r for r in read_results(out)}


def judge_of(result: EvalResult) -> CheckResult:
    (check,) = [c for c in result.checks if c.name == "judge"]
    return check


def test_verdicts_are_read_from_json_or_text_and_nonsense_is_unjudged() -> None:
    fenced = 'Sure! ```json\n{"verdict": "pass", "reason": "Fine."}\n```'
    assert parse_verdict(fenced, "pass_fail", 4).passed is True
    assert parse_verdict("**FAIL**\nReason: wrong unit", "pass_fail", 4).passed is False
    assert parse_verdict("Score: 4\nReason: good", "score", 4).passed is True
    assert parse_verdict('{"score": 3, "reason": "thin"}', "score", 4).passed is False
    for nonsense in ("Score: 9", "I think it passes", "", '{"score": 0}', '{"verdict": "maybe"}'):
        verdict = parse_verdict(nonsense, "score", 4)
        assert verdict.passed is None, nonsense
    assert "outside 1–5" in parse_verdict("Score: 9", "score", 4).reason
    # Repeats: the majority decides, the agreement is said; a split is unjudged.
    yes, no = parse_verdict(PASS, "pass_fail", 4), parse_verdict(FAIL, "pass_fail", 4)
    assert judge_check([yes, yes, no]).detail.startswith("2/3 pass — It names a colour.")
    assert judge_check([yes, yes, no]).passed is True
    assert judge_check([yes, no]).passed is None


def test_the_prompt_is_filled_once_so_an_answer_cannot_fill_itself() -> None:
    filled = fill_prompt("Q {{question}} A {{answer}} R {{ rubric }}", {
        "question": "why?", "answer": "see {{rubric}}", "rubric": "be kind", "expected": ""
    })  # fmt: skip
    assert filled == "Q why? A see {{rubric}} R be kind"


def test_the_offline_judge_grades_pass_fail_and_nonsense_as_unjudged(tmp_path: Path) -> None:
    path = scenario_file(tmp_path, {"backend": "scripted"}, own=True)
    printed, results = evaluate(path, tmp_path / "out.jsonl")
    judged = [judge_of(results[case]) for case in range(3)]
    assert [j.passed for j in judged] == [True, False, None]
    assert judged[0].detail == "pass (score 5/5) — It names a colour."
    assert "Seven is a number" in judged[1].detail
    assert judged[2].detail.startswith("unjudged — no pass or fail in the judge's reply")
    # Every answer matched its expected one: the judge alone decides, and unjudged never passes.
    assert [results[c].passed for c in range(3)] == [True, False, False]
    assert "33% (1/3" in printed
    assert "✓ judge — pass (score 5/5) — It names a colour." in described(
        results[0].answer, results[0].checks
    )
    assert "? judge — unjudged" in described(results[2].answer, results[2].checks)


def test_a_case_without_written_verdicts_is_unjudged_by_the_offline_judge(tmp_path: Path) -> None:
    _, results = evaluate(scenario_file(tmp_path, {}), tmp_path / "out.jsonl")
    assert all(judge_of(r).passed is None for r in results.values())
    assert "no verdicts written" in judge_of(results[0]).detail
    assert not any(r.passed for r in results.values())


def http_judge(server: ModelServer, **script: Any) -> dict[str, Any]:
    """A judge at the test server whose verdict depends on the answer it is shown."""
    verdicts = dict(zip(ANSWERS, (PASS, FAIL, NONSENSE), strict=True))
    by_question = {f"Grade this answer: {a}": [v] for a, v in verdicts.items()}
    server.set_model("judge", ModelScript(by_question=by_question, **script))
    return {
        "backend": "custom",
        "base_url": server.base_url,
        "model": "judge",
        "prompt": "Grade this answer: {{answer}}",
        "price": [2.0, 8.0],
    }


def test_a_judge_over_http_with_structured_output_and_its_cache(
    tmp_path: Path, fake_server: ModelServer
) -> None:
    path = scenario_file(tmp_path, http_judge(fake_server))
    cache = str(tmp_path / "cache")
    printed, results = evaluate(path, tmp_path / "first.jsonl", "--cache", cache)
    assert [judge_of(results[c]).passed for c in range(3)] == [True, False, None]
    judge_requests = [r for r in fake_server.requests if r["model"] == "judge"]
    assert len(judge_requests) == 3
    schema = judge_requests[0]["response_format"]
    assert schema["type"] == "json_schema"
    assert schema["json_schema"]["schema"]["required"] == ["verdict", "score", "reason"]
    # Counted in cost: the judge's tokens at its price, in each result and the summary.
    usage = results[0].judge
    assert usage is not None
    assert usage.tokens_in > 0
    assert usage.tokens_out > 0
    assert usage.cost == pytest.approx((usage.tokens_in * 2 + usage.tokens_out * 8) / 1e6)
    assert "· judge " in printed
    assert " tokens, $0.0" in printed

    asked = fake_server.stats["completions"]
    _, again = evaluate(path, tmp_path / "second.jsonl", "--cache", cache)
    assert fake_server.stats["completions"] == asked  # the rerun asked the judge nothing
    assert [judge_of(again[c]) for c in range(3)] == [judge_of(results[c]) for c in range(3)]


def test_a_server_refusing_structured_output_is_asked_in_text(
    tmp_path: Path, fake_server: ModelServer
) -> None:
    refusal = UnsupportedParam("response_format", "response_format is not supported here.")
    path = scenario_file(tmp_path, http_judge(fake_server, reject_params=(refusal,)))
    _, results = evaluate(path, tmp_path / "out.jsonl", "--concurrency", "1")
    assert [judge_of(results[c]).passed for c in range(3)] == [True, False, None]
    sent = [("response_format" in r) for r in fake_server.requests if r["model"] == "judge"]
    assert sent == [True, False, False, False]  # refused once, then asked in text only
    assert fake_server.stats["errors"] == 1


def test_a_judge_that_cannot_be_reached_leaves_every_answer_unjudged(tmp_path: Path) -> None:
    judge = {"backend": "custom", "base_url": "http://127.0.0.1:9/v1", "model": "judge"}
    _, results = evaluate(scenario_file(tmp_path, judge), tmp_path / "out.jsonl")
    assert all(judge_of(r).passed is None for r in results.values())
    assert "the judge failed" in judge_of(results[0]).detail


def test_rubric_and_judge_round_trip_through_the_file_and_import(tmp_path: Path) -> None:
    scenario = load_scenario(scenario_file(tmp_path, {"backend": "scripted", "mode": "score"}))
    saved = tmp_path / "saved.json"
    save_scenario(scenario, saved)
    again = load_scenario(saved)
    assert (again.rubric, again.judge) == (RUBRIC, scenario.judge)
    assert again.judge is not None
    assert again.judge.mode == "score"
    csv_cases = import_cases("question,answer,rubric\nQ?,4,Says four.\n", "csv")
    assert csv_cases[0].rubric == "Says four."
    jsonl = '{"question": "Q?", "answer": "4", "rubric": "Four.", "judge_replies": ["PASS"]}'
    (case,) = import_cases(jsonl, "jsonl")
    assert (case.rubric, case.judge_replies) == ("Four.", ("PASS",))


@pytest.mark.parametrize(
    ("judge", "message"),
    [
        ({"mode": "vibes"}, '"judge.mode" must be one of pass_fail, score.'),
        ({"threshold": 6}, '"judge.threshold" must be from 1 to 5 (got 6).'),
        ({"prompt": "Grade it."}, '"judge.prompt" must contain {{answer}}.'),
        ({"repeats": 0}, '"judge.repeats" must be from 1 to 9 (got 0).'),
        ({"temperature": 9}, '"judge.temperature" must be'),
    ],
)
def test_a_bad_judge_is_one_line_naming_the_field(judge: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        judge_from_dict(judge)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_the_built_in_test_set_is_judged_offline(tmp_path: Path) -> None:
    printed, results = evaluate(scenarios_dir() / "test_set.json", tmp_path / "out.jsonl")
    verdicts = {case: judge_of(r) for case, r in results.items()}
    assert all(v.passed for case, v in verdicts.items() if case != 11)
    assert verdicts[11].passed is False
    assert "guessed price" in verdicts[11].detail
    assert "judge " in printed


def test_a_judge_setting_its_kind_cannot_send_leaves_answers_unjudged_and_asks_nothing(
    tmp_path: Path, fake_anthropic: ModelServer
) -> None:
    # Anthropic's Messages API has no seed: never asked without it, one line in the check.
    judge = {"backend": "anthropic", "base_url": fake_anthropic.base_url, "model": "judge"}
    _, results = evaluate(scenario_file(tmp_path, judge | {"seed": 3}), tmp_path / "out.jsonl")
    assert all(judge_of(r).passed is None for r in results.values())
    assert judge_of(results[0]).detail.endswith(
        "judge not asked: seed: Anthropic (Claude) cannot send it; leave it unset for this backend"
    )
    assert fake_anthropic.requests == []


def test_the_offline_judge_never_grades_a_real_models_answers_and_says_so(
    tmp_path: Path, fake_server: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    # The shipped test set's judge plays verdicts written for the offline model's answers: on
    # a real model's answer its "pass" and reason would be a grade that never read it.
    example = scenarios_dir() / "test_set.json"
    cases = load_scenario(example).test_set
    by_question = {c.question: list(c.replies) for c in cases}  # runs arrive in any order
    fake_server.set_model("m", ModelScript(by_question=by_question))
    lane = f"{fake_server.base_url}:m"
    out = tmp_path / "results.jsonl"
    args = [str(example), "--lane", "scripted", "--lane", lane, "--out", str(out)]
    assert eval_command(args, io.StringIO()) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "offline judge" in line]
    assert said == [
        "react-sandbox eval: the offline judge's written verdicts grade only the offline "
        f"model's answers: {lane} not judged (choose a judge model to grade them)"
    ]
    results = read_results(out)
    judged = {r.lane: [c.name for c in r.checks].count("judge") for r in results}
    assert judged == {"scripted": 1, lane: 0}  # the offline model's answers still are
    real = [r for r in results if r.lane == lane]
    assert len(real) == 12
    assert all(r.judge is None for r in real)


def test_the_judge_sees_the_whole_trajectory_bounded(
    tmp_path: Path, fake_server: ModelServer
) -> None:
    # The default prompt shows the judge the run's steps: its tool call and what the tool
    # returned, not only the final answer (langfuse#8151's judges see only the last span).
    fake_server.set_model("judge", ModelScript(replies=[PASS]))
    path = scenario_file(
        tmp_path, {"backend": "custom", "base_url": fake_server.base_url, "model": "judge"}
    )
    data = json.loads(path.read_text(encoding="utf-8"))
    data["test_set"] = data["test_set"][:1]
    data["test_set"][0]["replies"] = [
        "Thought: Add them.\nAction: calculator[17 + 25]",
        "Thought: Done.\nAnswer: Red",
    ]
    path.write_text(json.dumps(data), encoding="utf-8")
    evaluate(path, tmp_path / "r.jsonl")
    (asked,) = [r for r in fake_server.requests if r["model"] == "judge"]
    prompt = asked["messages"][0]["content"]
    assert "Action: calculator" in prompt
    assert "17 + 25" in prompt
    assert "Observation: 42" in prompt  # the observation the tool returned
    assert prompt.index("Action: calculator") < prompt.rindex("Red")


def test_a_long_trajectory_keeps_its_start_and_end_within_the_bound() -> None:
    from sandbox_app.core.results.judging import MAX_TRAJECTORY, trajectory_text
    from sandbox_app.core.running.events import Notice

    events = [Notice(i, f"step {i} " + "x" * 200) for i in range(400)]
    text = trajectory_text(events)
    assert len(text) < MAX_TRAJECTORY + 100
    assert text.startswith("[step 0 ")
    assert "step 399 " in text
    assert "characters of the middle steps left out" in text
