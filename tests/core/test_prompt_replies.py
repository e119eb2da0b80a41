"""The offline model plays the replies written for the prompt version it is told
(``script.by_prompt``), and the default replies for any other version; the built-in
prompt_variants.json example shows two versions of one prompt giving different traces."""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from sandbox_app.application.run_builder import RunSpec, build_run
from sandbox_app.backends.mcp_client.mcp_tools import McpConnection
from sandbox_app.backends.registry import config_for
from sandbox_app.cli.main import main
from sandbox_app.core.running.engine import drive
from sandbox_app.core.running.events import (
    ActionParsed,
    Event,
    Notice,
    Observation,
    RunFinished,
)
from sandbox_app.core.scenarios.prompt_versions import version_of
from sandbox_app.core.scenarios.scenario import LaneSettings, PromptReplies, Scenario, Script
from sandbox_app.core.scenarios.scenario_file import (
    ScenarioError,
    load_scenario,
    save_scenario,
    scenarios_dir,
)
from sandbox_app.core.tools.mcp_server import McpServerSpec

EXAMPLE = scenarios_dir() / "prompt_variants.json"
MCP_SERVER = Path(__file__).resolve().parents[1] / "mcp_test_server.py"  # a real MCP server


def _run(scenario: Scenario, lane: LaneSettings | None = None) -> tuple[RunFinished, list[str]]:
    """The engine's run of ``scenario`` as a lane with ``lane`` runs it, on the offline model:
    its end and the tools it called."""
    told = scenario.with_lane(lane or LaneSettings())
    told = told.with_changes(script=replace(told.script, tokens_per_second=0.0))  # no pacing
    engine, _backend = build_run(RunSpec(told, config_for("scripted")))
    events: list[Event] = []
    finished = asyncio.run(drive(engine, events.append))
    calls = [e.tool for e in events if isinstance(e, ActionParsed)]
    return finished, calls


def test_each_pinned_version_plays_its_own_replies() -> None:
    scenario = load_scenario(EXAMPLE)
    brief, brief_calls = _run(scenario, LaneSettings(prompt="brief"))
    grounded, grounded_calls = _run(scenario, LaneSettings(prompt="grounded"))
    assert brief.answer == "About $2,160 per year"
    assert brief_calls == []
    assert grounded.answer == "$2,592 per year"
    assert grounded_calls == ["search", "calculator"]


def test_a_version_named_by_its_id_plays_its_replies() -> None:
    scenario = load_scenario(EXAMPLE)
    grounded = next(e for e in scenario.prompt_history if e.name == "grounded")
    script = scenario.script
    by_id = tuple(
        PromptReplies(grounded.short, p.replies) if p.prompt == "grounded" else p
        for p in script.by_prompt
    )
    renamed = scenario.with_changes(script=replace(script, by_prompt=by_id))
    finished, calls = _run(renamed, LaneSettings(prompt="grounded"))
    assert finished.answer == "$2,592 per year"
    assert calls == ["search", "calculator"]


def test_a_version_with_no_replies_of_its_own_plays_the_default_ones() -> None:
    scenario = load_scenario(EXAMPLE)
    edited = scenario.with_changes(system_prompt="Be quick.\n{tools}\n{format}")
    assert version_of(edited, edited.tools()).id not in {e.id for e in scenario.prompt_history}
    finished, calls = _run(edited)
    assert finished.answer == "About $2,160 per year"
    assert calls == []
    # The editor's own words are the "grounded" version: the Run tab plays its replies.
    assert _run(scenario)[0].answer == "$2,592 per year"


def test_run_prompt_picks_the_versions_replies(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(EXAMPLE), "--prompt", "brief"]) == 0
    assert "Final answer: About $2,160 per year" in capsys.readouterr().out
    assert main(["run", str(EXAMPLE), "--prompt", "grounded"]) == 0
    assert "Final answer: $2,592 per year" in capsys.readouterr().out


def test_replies_by_prompt_round_trip_and_a_script_without_is_written_as_before(
    tmp_path: Path,
) -> None:
    scenario = load_scenario(EXAMPLE)
    path = tmp_path / "copy.json"
    save_scenario(scenario, path)
    assert load_scenario(path) == scenario
    plain = load_scenario(scenarios_dir() / "brightgrid.json")
    save_scenario(plain, path)
    assert "by_prompt" not in json.loads(path.read_text(encoding="utf-8"))["script"]


@pytest.mark.parametrize(
    ("by_prompt", "message"),
    [
        ("grounded", '"script.by_prompt" must be a list'),
        (["grounded"], "script.by_prompt[0] must be a JSON object."),
        ([{"replies": ["Answer: 1"]}], '"script.by_prompt[0].prompt" must name a prompt version'),
        (
            [{"prompt": "a", "replies": "Answer: 1"}],
            '"script.by_prompt[0].replies" must be a list',
        ),
        (
            [{"prompt": "a", "replies": [1]}],
            '"script.by_prompt[0].replies" must be a list of strings',
        ),
        (
            [{"prompt": "a", "replies": []}, {"prompt": "A", "replies": []}],
            "\"script.by_prompt[1].prompt\" names 'A' twice",
        ),
    ],
)
def test_a_bad_replies_by_prompt_entry_is_one_line_and_the_file_is_kept(
    tmp_path: Path, by_prompt: object, message: str
) -> None:
    data = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    data["script"]["by_prompt"] = by_prompt
    path = tmp_path / "bad.json"
    text = json.dumps(data)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert message in str(err.value)
    assert "\n" not in str(err.value)
    assert path.read_text(encoding="utf-8") == text


def test_with_an_mcp_tool_the_replies_for_the_runs_own_version_are_played() -> None:
    # The run's version counts the MCP server's tools (RunSpec.prompt_version); the offline
    # model is told that version, never works out its own from the scenario's tools alone.
    async def played() -> tuple[str, str | None]:
        connection = McpConnection(
            McpServerSpec("test", sys.executable, (str(MCP_SERVER),)), trust_hints=True
        )
        try:
            sources = await connection.connect()
            base = load_scenario(scenarios_dir() / "brightgrid.json")
            scenario = base.with_changes(enabled_tools=("search", "capital"))
            version = RunSpec(scenario, config_for("scripted"), sources=sources).prompt_version
            script = Script(
                replies=("Answer: the default replies",),
                tokens_per_second=0.0,
                by_prompt=(
                    PromptReplies(version.id, ("Action: capital[France]", "Answer: Paris")),
                ),
            )
            spec = RunSpec(
                scenario.with_changes(script=script), config_for("scripted"), sources=sources
            )
            engine, _backend = build_run(spec)
            events: list[Event] = []
            finished = await drive(engine, events.append)
            observed = next((e.text for e in events if isinstance(e, Observation)), None)
            return finished.answer, observed
        finally:
            await connection.close()

    answer, observed = asyncio.run(played())
    assert answer == "Paris"
    assert observed == "Paris"  # the MCP server's answer to the version's own call


WRITTEN_FOR_BRIEF = "offline replies written for brief"
SAME_REPLIES = "offline: the same replies for every prompt (none written for this version)"


def _notes(scenario: Scenario, lane: LaneSettings | None = None) -> list[str]:
    """The notices a run's trace shows before its first step (issue 34, item 7)."""
    told = scenario.with_lane(lane or LaneSettings())
    told = told.with_changes(script=replace(told.script, tokens_per_second=0.0))
    engine, _backend = build_run(RunSpec(told, config_for("scripted")))
    events: list[Event] = []
    asyncio.run(drive(engine, events.append))
    return [e.text for e in events if isinstance(e, Notice) and e.step == 0]


def test_a_run_says_whether_its_offline_replies_were_written_for_its_version() -> None:
    scenario = load_scenario(EXAMPLE)
    assert _notes(scenario, LaneSettings(prompt="brief")) == [WRITTEN_FOR_BRIEF]
    assert _notes(scenario) == ["offline replies written for grounded"]  # the editor's
    # An improved prompt nobody wrote replies for: the default ones, and the trace says so.
    edited = scenario.with_changes(system_prompt="Look every price up.\n{tools}\n{format}")
    assert _notes(edited) == [SAME_REPLIES]


def test_run_prints_whether_the_replies_were_written_for_the_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(EXAMPLE), "--prompt", "brief"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"[{WRITTEN_FOR_BRIEF}]"  # before the first step
    edited = load_scenario(EXAMPLE).with_changes(system_prompt="Be exact.\n{tools}\n{format}")
    path = tmp_path / "edited.json"
    save_scenario(edited, path)
    assert main(["run", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"[{SAME_REPLIES}]"
    assert "Final answer: About $2,160 per year" in out  # the default replies, said as such
