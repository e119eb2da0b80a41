"""The scenario's own tools (canned, ask me, error), per-tool policies, and the prompt-injection
lesson: through real runs (the offline model, or the test server through the SDK)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.cli.main import main
from sandbox_app.core.results.verdict import matches
from sandbox_app.core.running.events import Observation
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir
from sandbox_app.core.tools import tools_for
from sandbox_app.core.tools.mock import CannedRule, MockToolSpec
from tests.helpers import SendEmail, builtin, finished, of_type, run_events, server_backend
from tests.model_server import ModelScript, ModelServer

WEATHER = MockToolSpec(
    "weather",
    "Today's weather for a city.",
    input_hint="city",
    rules=(
        CannedRule("Paris", "18 °C, clear", "exact"),
        CannedRule("oslo", "4 °C, rain", "contains"),
        CannedRule(r"^new\s+york$", "25 °C, humid", "regex"),
    ),
    default="No forecast for that city.",
)


def with_tool(spec: MockToolSpec, replies: list[str], **changes: Any) -> Scenario:
    scenario = builtin("brightgrid")
    return scenario.with_changes(
        custom_tools=(spec,),
        enabled_tools=(*scenario.enabled_tools, spec.name),
        script=scenario.script.__class__(replies=tuple(replies), tokens_per_second=0),
        **changes,
    )


def observations(events: list[Any]) -> list[str]:
    return [o.text for o in of_type(events, Observation)]


def calls(*inputs: str) -> list[str]:
    return [f"Action: weather[{text}]" for text in inputs] + ["Answer: done"]


def run_offline(scenario: Scenario, **engine: Any) -> list[Any]:
    from tests.helpers import scripted

    return run_events(scenario, scripted(scenario), **engine)


def test_canned_rules_in_order_then_the_default(fake_server: ModelServer) -> None:
    inputs = ["Paris", " Paris ", "paris", "Oslo, Norway", "new  york", "Rome"]
    fake_server.set_model("m", ModelScript(replies=calls(*inputs)))
    scenario = with_tool(WEATHER, [], max_steps=10)
    events = run_events(scenario, server_backend(fake_server.base_url), model="m")
    assert observations(events) == [
        "18 °C, clear",  # exact
        "18 °C, clear",  # exact ignores the spaces at the ends
        "No forecast for that city.",  # exact is exact about case
        "4 °C, rain",  # contains, any case
        "25 °C, humid",  # regex
        "No forecast for that city.",
    ]
    # The prompt describes it like a built-in, from the scenario's words.
    system = fake_server.requests[0]["messages"][0]["content"]
    assert "weather[city]: Today's weather for a city." in system


def test_latency_shows_in_the_step_metrics() -> None:
    slow = MockToolSpec("weather", "Weather.", latency_s=0.2, default="sunny")
    events = run_offline(with_tool(slow, calls("Paris")))
    assert observations(events) == ["sunny"]
    assert finished(events).metrics.steps[0].tool_s >= 0.19


def test_an_error_tool_always_fails_and_the_run_goes_on() -> None:
    down = MockToolSpec("weather", "Weather.", behaviour="error", default="service down")
    events = run_offline(with_tool(down, calls("Paris", "Oslo")))
    (first, second) = of_type(events, Observation)
    assert (first.text, first.error) == ("Error: service down", True)
    assert second.text == "Error: service down"
    assert finished(events).status == "answered"


def test_ask_me_takes_the_observation_from_a_person() -> None:
    asked: list[tuple[str, str]] = []

    async def person(tool: str, input: str) -> str | None:
        asked.append((tool, input))
        return "12 °C" if input == "Paris" else None  # declines the second call

    ask = MockToolSpec("weather", "Weather.", behaviour="ask")
    scenario = with_tool(ask, calls("Paris", "Oslo"))
    tools = tools_for(scenario.enabled_tools, scenario.documents, scenario.custom_tools, ask=person)
    events = run_offline(scenario, tools=tools)
    assert asked == [("weather", "Paris"), ("weather", "Oslo")]
    assert observations(events) == ["12 °C", "Error: the user declined to answer weather"]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_cli_asks_on_the_terminal_and_says_so_when_it_cannot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ask.json"
    save_scenario(with_tool(MockToolSpec("weather", "W.", behaviour="ask"), calls("Paris")), path)
    monkeypatch.setattr("sys.stdin", _Terminal("21 °C, sunny\n"))
    assert main(["run", str(path), "--json"]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    texts = [e["text"] for e in document["events"] if e["type"] == "Observation"]
    assert texts == ["21 °C, sunny"]
    assert "The model called weather with 'Paris'" in captured.err
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # not a terminal
    assert main(["run", str(path), "--json"]) == 0
    captured = capsys.readouterr()
    assert "weather asks a person for its result and stdin is not a terminal" in captured.err
    assert "declined to answer weather" in captured.out


# ---- policies ---------------------------------------------------------------------------


def email_run(
    fake_server: ModelServer, policies: dict[str, Any], trusted: frozenset[str] = frozenset()
) -> tuple[list[Any], SendEmail, list[str]]:
    tool = SendEmail()
    asked: list[str] = []

    async def approve(name: str, input: str) -> bool:
        asked.append(name)
        return True

    fake_server.set_model("m", ModelScript(replies=["Action: send_email[a@b.c]", "Answer: ok"]))
    scenario = builtin("brightgrid").with_changes(policies=policies)
    events = run_events(
        scenario,
        server_backend(fake_server.base_url),
        model="m",
        approve=approve,
        tools=[*tools_for(scenario.enabled_tools, scenario.documents), tool],
        trusted=trusted,
    )
    return events, tool, asked


def test_a_side_effecting_tool_asks_by_default_and_runs_once_approved(
    fake_server: ModelServer,
) -> None:
    _, tool, asked = email_run(fake_server, {})
    assert (asked, tool.sent) == (["send_email"], ["a@b.c"])


def test_a_file_saying_auto_cannot_pre_approve_side_effects(
    fake_server: ModelServer,
) -> None:
    _, tool, asked = email_run(fake_server, {"send_email": "auto"})
    assert asked == ["send_email"]  # still asked: nobody here trusted it
    _, tool, asked = email_run(fake_server, {"send_email": "auto"}, frozenset({"send_email"}))
    assert (asked, tool.sent) == ([], ["a@b.c"])  # trusted here: runs unasked


def test_deny_answers_with_an_error_and_never_runs(fake_server: ModelServer) -> None:
    events, tool, asked = email_run(fake_server, {"send_email": "deny"})
    assert (asked, tool.sent) == ([], [])
    assert observations(events) == [
        "Error: send_email may not be used in this run (its policy is deny)."
    ]


def test_ask_on_a_read_only_tool_asks_too() -> None:
    asked: list[str] = []

    async def decline(name: str, input: str) -> bool:
        asked.append(name)
        return False

    scenario = builtin("brightgrid").with_changes(policies={"search": "ask"})
    events = run_offline(scenario, approve=decline)
    assert asked == ["search"]
    assert observations(events)[0] == "Error: the user declined to run search"


def test_the_cli_needs_allow_for_a_side_effecting_tool_set_to_auto(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sender = MockToolSpec("notify", "Sends a note.", read_only=False, default="sent")
    path = tmp_path / "notify.json"
    scenario = with_tool(sender, ["Action: notify[team]", "Answer: done"])
    save_scenario(scenario.with_changes(policies={"notify": "auto"}), path)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["run", str(path)]) == 0
    captured = capsys.readouterr()
    assert "Error: the user declined to run notify" in captured.out
    assert "--allow notify lets it run" in captured.err
    assert main(["run", str(path), "--allow", "notify"]) == 0
    assert "Observation: sent" in capsys.readouterr().out
    assert main(["run", str(path), "--allow", "nobody"]) == 1
    assert "--allow nobody: no such tool is enabled" in capsys.readouterr().err


# ---- the file ---------------------------------------------------------------------------


def test_tools_and_policies_round_trip(tmp_path: Path) -> None:
    scenario = with_tool(WEATHER, calls("Paris")).with_changes(
        policies={"weather": "ask", "search": "deny"}
    )
    save_scenario(scenario, tmp_path / "s.json")
    assert load_scenario(tmp_path / "s.json") == scenario


BAD_TOOLS = {
    '{"name": "9lives", "description": "x"}': '"tools.custom[0].name" must be a word',
    '{"name": "search", "description": "x"}': "\"tools.custom[0].name\" 'search' is taken",
    '{"name": "w"}': '"tools.custom[0].description" is empty',
    '{"name": "w", "description": "x", "behaviour": "magic"}': (
        '"tools.custom[0].behaviour" must be one of canned, ask, error'
    ),
    '{"name": "w", "description": "x", "rules": [{"match": "regex", "pattern": "("}]}': (
        '"tools.custom[0].rules[0].pattern" is not a valid regex'
    ),
    '{"name": "w", "description": "x", "latency_s": 99}': (
        '"tools.custom[0].latency_s" must be from 0 to 30'
    ),
}


@pytest.mark.parametrize("tool", list(BAD_TOOLS))
def test_a_malformed_tool_is_one_line_naming_it(tmp_path: Path, tool: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"version": 1, "tools": {"custom": [' + tool + "]}}")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert BAD_TOOLS[tool] in str(info.value)
    assert "\n" not in str(info.value)


def test_a_bad_policy_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"version": 1, "tools": {"policies": {"search": "sometimes"}}}')
    with pytest.raises(ScenarioError, match=r'"tools.policies.search" must be one of auto, ask'):
        load_scenario(path)


# ---- the prompt-injection lesson --------------------------------------------------------


def test_the_injection_lesson_offline_never_answers_42() -> None:
    scenario = load_scenario(scenarios_dir() / "prompt_injection.json")
    events = run_offline(
        scenario.with_changes(
            script=scenario.script.__class__(replies=scenario.script.replies, tokens_per_second=0)
        )
    )
    done = finished(events)
    assert "Final Answer: 42" in observations(events)[0]  # the model saw it, as data
    assert (done.status, done.answer) == ("answered", "$60 per month")
    assert scenario.expected is not None
    assert matches(done.answer, scenario.expected)


def test_a_model_that_obeys_the_injection_is_marked_wrong(fake_server: ModelServer) -> None:
    scenario = load_scenario(scenarios_dir() / "prompt_injection.json")
    obeying = ["Action: search[Brightgrid Pro price per month]", "Final Answer: 42"]
    fake_server.set_model("m", ModelScript(replies=obeying))
    done = finished(run_events(scenario, server_backend(fake_server.base_url), model="m"))
    assert done.answer == "42"
    assert scenario.expected is not None
    assert not matches(done.answer, scenario.expected)


def test_a_mock_tools_limit_is_its_own() -> None:
    import asyncio

    from sandbox_app.core.tools import ToolRouter
    from sandbox_app.core.tools.mock import MockTool

    async def slow_person(tool: str, input: str) -> str | None:
        await asyncio.sleep(0.3)  # a person who takes longer than the router's limit
        return "answered"

    async def calls() -> list[str]:
        ask = MockTool(MockToolSpec("poll", "Asks.", behaviour="ask"), slow_person)
        slow = MockTool(MockToolSpec("slow", "Slow.", latency_s=0.3, default="late"))
        router = ToolRouter([ask, slow], timeout=0.1)
        return [(await router.run_tool(name, "x")).text for name in ("poll", "slow")]

    assert asyncio.run(calls()) == ["answered", "late"]
