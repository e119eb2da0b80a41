"""Generate cases… without the window (issue 35, item 2): a model's reply read as data — a
JSON array of cases by the test set's own row rules, never evaluated, a hostile or malformed
reply refused in one line, a bad element left out with its reason, duplicates of the cases
there are flagged; the offline model plays the example's written reply, and an
OpenAI-compatible server is asked through the real SDK."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from sandbox_app.application.backend_choice import BackendChoice
from sandbox_app.application.case_generator import NO_CASES, generate_cases
from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.backends.registry import SCRIPTED, config_for
from sandbox_app.cli.lane_spec import lane_from_spec
from sandbox_app.core.optimizing.generated_cases import (
    MAX_PROPOSED,
    generation_prompt,
    normalized,
    read_cases,
)
from sandbox_app.core.running.backend import BackendError
from sandbox_app.core.scenarios.lane_settings import LaneSettings
from sandbox_app.core.scenarios.scenario import EvalCase, Expected, Script
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir
from tests.model_server import ModelScript, ModelServer

EXISTING = (
    EvalCase("How much is Brightgrid Team for 12 seats a year?", Expected("2,592")),
    EvalCase("What does Brightgrid Pro cost?", Expected("$20")),
)
TOOLS = ["search", "calculator"]
GOOD = {"question": "How many rows does the free plan export?", "answer": "5,000"}


def offline() -> BackendChoice:
    return BackendChoice(config_for(SCRIPTED), LaneSettings(), label="offline")


def test_the_offline_example_proposes_four_cases_one_a_duplicate() -> None:
    scenario = load_scenario(scenarios_dir() / "improve_offline.json")
    proposals = asyncio.run(
        generate_cases(scenario, scenario.tools(), offline(), 4, KeyStore(), known_tools=TOOLS)
    )
    questions = [p.case.question for p in proposals.cases]
    assert len(questions) == 4
    assert [p.duplicate for p in proposals.cases] == ["", "", "case 2", ""]
    assert questions[2] == scenario.test_set[1].question
    first = proposals.cases[0].case
    assert first.expected.answer == "$60"
    assert first.checks.tools_called == ("search", "calculator")
    assert first.checks.order == "in_order"
    assert proposals.cases[3].case.checks.max_steps == 3
    assert proposals.problems == ()


def test_the_offline_model_without_written_cases_says_so_in_one_line() -> None:
    scenario = load_scenario(scenarios_dir() / "improve_offline.json")
    bare = scenario.with_changes(script=Script())
    with pytest.raises(BackendError) as caught:
        asyncio.run(generate_cases(bare, bare.tools(), offline(), 3, KeyStore()))
    assert str(caught.value) == NO_CASES


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        ("I cannot help with that.", "holds no JSON array"),
        ('{"question": "a", "answer": "b"}', "holds no JSON array"),
        ("[1, 2]", "proposal 1: not a JSON object (int)"),
        ('[{"question": 5, "answer": "x"}]', "proposal 1"),
        ('[{"question": "", "answer": "x"}]', "is empty"),
        ('[{"question": "q?", "answer": "x", "match": "eval"}]', '"match" must be one of'),
        ('[{"question": "q?", "answer": "x", "max_steps": "lots"}]', "max_steps"),
        ('[{"question": "q?", "answer": "x", "tools_called": ["rm_rf"]}]', 'named "rm_rf"'),
        ("[" * 100_000 + "]" * 100_000, "cannot be read"),
        ('[{"question": "q?", "answer": "x"', "holds no JSON array"),
        ("[NaN, {]", "cannot be read"),
    ],
)
def test_a_malformed_or_hostile_reply_is_refused_in_one_line(reply: str, said: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        read_cases(reply, EXISTING, TOOLS)
    message = str(caught.value)
    assert said in message
    assert "\n" not in message
    assert len(message) < 400


def test_a_bad_element_is_left_out_with_its_reason_and_the_good_ones_kept() -> None:
    reply = json.dumps([GOOD, "just text", {**GOOD, "question": "Is it free?", "match": "?"}])
    proposals = read_cases(reply, EXISTING, TOOLS)
    assert [p.case.question for p in proposals.cases] == [GOOD["question"]]
    assert proposals.problems[0] == "proposal 2: not a JSON object (str)"
    assert proposals.problems[1].startswith("proposal 3:")
    assert all("\n" not in line for line in proposals.problems)


def test_the_reply_is_data_never_run_and_unknown_keys_become_nothing() -> None:
    hostile = {
        "question": "__import__('os').system('touch /tmp/pwned')",
        "answer": "{{secret}}",
        "replies": ["Answer: forced"],
        "variables": {"secret": "x"},
        "judge_replies": ["PASS"],
        "api_key": "sk-live",
    }
    (proposed,) = read_cases(json.dumps([hostile]), EXISTING, TOOLS).cases
    case = proposed.case
    assert case.question == hostile["question"]  # kept as the characters it is
    assert case.expected.answer == "{{secret}}"
    assert case.replies == ()
    assert case.judge_replies == ()
    assert dict(case.variables) == {}


def test_the_array_is_found_after_thinking_and_inside_a_fence() -> None:
    thinking = "<think>Maybe [one] or [two] cases; let me list them.</think>\n"
    fenced = f"{thinking}Here they are:\n```json\n{json.dumps([GOOD])}\n```\nNote: [done]"
    assert [p.case.question for p in read_cases(fenced, EXISTING).cases] == [GOOD["question"]]
    prose = f"Sure [see below]:\n{json.dumps([GOOD])}"
    assert len(read_cases(prose, EXISTING).cases) == 1


def test_duplicates_are_flagged_by_their_normalized_question() -> None:
    reply = json.dumps(
        [
            {"question": "  what does BRIGHTGRID pro   cost ", "answer": "$20"},
            GOOD,
            {"question": GOOD["question"].upper(), "answer": "5,000"},
        ]
    )
    flags = [p.duplicate for p in read_cases(reply, EXISTING).cases]
    assert flags == ["case 2", "", "proposal 2"]
    assert normalized("What does Pro cost?") == normalized("what  does pro cost")


def test_a_reply_that_runs_on_is_read_to_a_bound() -> None:
    items = [{"question": f"Question {i}?", "answer": str(i)} for i in range(MAX_PROPOSED + 30)]
    proposals = read_cases(json.dumps(items), EXISTING)
    assert len(proposals.cases) == MAX_PROPOSED
    assert f"the first {MAX_PROPOSED} read" in proposals.problems[0]


def test_the_prompt_shows_the_template_the_tools_and_the_cases_bounded() -> None:
    scenario = load_scenario(scenarios_dir() / "improve_offline.json")
    many = tuple(EvalCase(f"Question {i}?", Expected(str(i))) for i in range(100))
    prompt = generation_prompt("T" * 50_000, scenario.tools(), many, 7)
    assert "Propose 7 new cases" in prompt
    assert "- search:" in prompt
    assert "Question 99? → 99" in prompt
    assert "Question 5?" not in prompt  # only the last ones shown
    assert "the last 30 shown" in prompt
    assert len(prompt) < 20_000


def test_the_written_cases_survive_a_save_and_reopen(tmp_path: Path) -> None:
    path = tmp_path / "improve_offline.json"
    shutil.copy(scenarios_dir() / "improve_offline.json", path)
    scenario = load_scenario(path)
    assert scenario.script.generated_cases
    save_scenario(scenario, path)
    assert load_scenario(path).script.generated_cases == scenario.script.generated_cases


def test_a_server_is_asked_through_the_real_sdk(fake_server: ModelServer) -> None:
    reply = "<think>Cover the free plan.</think>\n" + json.dumps(
        [{**GOOD, "tools_called": ["search"]}, {"question": EXISTING[0].question, "answer": "x"}]
    )
    fake_server.set_model("writer", ModelScript(replies=[reply]))
    scenario = load_scenario(scenarios_dir() / "improve_offline.json")
    scenario = scenario.with_changes(test_set=EXISTING)
    lane = lane_from_spec(f"{fake_server.base_url}:writer", 10.0, LaneSettings())
    proposals = asyncio.run(
        generate_cases(scenario, scenario.tools(), lane, 2, KeyStore(), known_tools=TOOLS)
    )
    assert [(p.case.question, p.duplicate) for p in proposals.cases] == [
        (GOOD["question"], ""),
        (EXISTING[0].question, "case 1"),
    ]
    (request,) = fake_server.requests
    asked = request["messages"][0]["content"]
    assert EXISTING[1].question in asked
    assert "- calculator:" in asked
    assert "Propose 2 new cases" in asked
