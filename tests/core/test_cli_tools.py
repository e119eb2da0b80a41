"""The command line's tool choices. ``--allow TOOL`` on ``run`` and ``eval``: the user's word
that a tool runs unasked this time, whatever its policy (a deny in the file excepted, and said);
what ``eval`` will decline is said before it runs. ``--tools``: any tool the run would have
(built-ins, the scenario's own, plugins', MCP servers'). Through ``main(argv)``, offline, with
stdin not a terminal (so nothing that asks can be approved by accident)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.cli.main import main
from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.results.evaluation import read_results
from sandbox_app.core.scenarios.scenario import EvalCase, Expected, Scenario
from sandbox_app.core.scenarios.scenario_file import save_scenario
from sandbox_app.core.tools import plugins
from sandbox_app.core.tools.mcp_server import McpServerSpec
from sandbox_app.core.tools.mock import MockToolSpec
from tests.helpers import builtin

NOTIFY = MockToolSpec("notify", "Sends a note to the team.", read_only=False, default="sent")
MCP_SERVER = Path(__file__).resolve().parents[1] / "mcp_test_server.py"


def scenario_with(
    replies: list[str], *, custom: tuple[MockToolSpec, ...] = (NOTIFY,), **changes: Any
) -> Scenario:
    base = builtin("brightgrid")
    return base.with_changes(
        custom_tools=custom,
        enabled_tools=(*base.enabled_tools, *(spec.name for spec in custom)),
        script=base.script.__class__(replies=tuple(replies), tokens_per_second=0),
        **changes,
    )


NOTIFYING = ["Action: notify[team]", "Answer: done"]


@pytest.fixture(autouse=True)
def no_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))


def saved(tmp_path: Path, scenario: Scenario, name: str = "s.json") -> str:
    path = tmp_path / name
    save_scenario(scenario, path)
    return str(path)


def observations(run: dict[str, Any] | EvalResult) -> list[str]:
    """What the tools said in a run: ``run --json``'s document or an eval result."""
    events = run.events or () if isinstance(run, EvalResult) else run["events"]
    return [e["text"] for e in events if e["type"] == "Observation"]


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    code = main(["run", *argv, "--json"])
    captured = capsys.readouterr()
    assert captured.out, captured.err
    return code, observations(json.loads(captured.out)), captured.err


# ---- run ------------------------------------------------------------------------------------


def test_allow_runs_a_side_effecting_tool_left_at_its_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = saved(tmp_path, scenario_with(NOTIFYING))  # no policy in the file: ask
    assert run_json(capsys, path)[1] == ["Error: the user declined to run notify"]
    code, seen, err = run_json(capsys, path, "--allow", "notify")
    assert (code, seen) == (0, ["sent"])
    assert "declined" not in err


def test_allow_runs_a_tool_the_file_says_ask_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = saved(tmp_path, scenario_with(NOTIFYING, policies={"notify": "ask"}))
    assert run_json(capsys, path, "--allow", "notify")[1] == ["sent"]


def test_allow_does_not_override_a_deny_and_says_so_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = saved(tmp_path, scenario_with(NOTIFYING, policies={"notify": "deny"}))
    code, seen, err = run_json(capsys, path, "--allow", "notify")
    assert seen == ["Error: notify may not be used in this run (its policy is deny)."]
    assert err.strip().splitlines() == [
        "react-sandbox: --allow notify: the scenario denies notify (its policy is deny), "
        "so it stays denied"
    ]
    assert code == 0


class Sender:
    """A plugin tool with side effects (tests/plugin_example's is read-only)."""

    name = "sender"
    description = "Sends a message."
    input_hint = "text"
    read_only = False
    max_input = 100

    async def run(self, input: str) -> str:
        return f"sent {input}"


@pytest.fixture
def sender_plugin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    entry = EntryPoint("sender", f"{__name__}:Sender", plugins.GROUP)
    monkeypatch.setattr(plugins, "entry_points", lambda group: [entry])
    plugins.installed.cache_clear()
    yield
    plugins.installed.cache_clear()


@pytest.mark.usefixtures("sender_plugin")
def test_allow_runs_a_side_effecting_plugin_tool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = scenario_with(["Action: sender[hello]", "Answer: done"], custom=())
    path = saved(tmp_path, scenario.with_changes(enabled_tools=("search", "sender")))
    assert run_json(capsys, path)[1] == ["Error: the user declined to run sender"]
    assert run_json(capsys, path, "--allow", "sender")[1] == ["sent hello"]


def mcp_scenario(tmp_path: Path, enabled: tuple[str, ...] = ("search", "capital")) -> str:
    server = McpServerSpec("test", sys.executable, (str(MCP_SERVER),), timeout_s=10.0)
    scenario = scenario_with(["Action: capital[Japan]", "Answer: Tokyo"], custom=())
    return saved(tmp_path, scenario.with_changes(enabled_tools=enabled, mcp_servers=(server,)))


def run_process(*argv: str) -> tuple[int, list[str], str]:
    """The CLI in a process of its own: the MCP SDK starts a server with the stderr it found
    when first imported, which in this process would be a capture fixture's, closed since."""
    done = subprocess.run(
        [sys.executable, "-m", "sandbox_app", "run", *argv, "--json"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    seen = observations(json.loads(done.stdout)) if done.stdout else []
    return done.returncode, seen, done.stderr


def test_allow_runs_an_mcp_tool_whose_read_only_hint_is_not_believed(tmp_path: Path) -> None:
    path = mcp_scenario(tmp_path)  # no policy: the server's hint is untrusted, so it asks
    assert run_process(path, "--mcp")[1] == ["Error: the user declined to run capital"]
    code, seen, err = run_process(path, "--mcp", "--allow", "capital")
    assert (code, seen) == (0, ["Tokyo"]), err


# ---- eval -----------------------------------------------------------------------------------


def with_cases(scenario: Scenario) -> Scenario:
    case = EvalCase("Tell the team.", Expected("done"), replies=tuple(NOTIFYING))
    return scenario.with_changes(test_set=(case, case))


def evaluate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], scenario: Scenario, *argv: str
) -> tuple[int, list[EvalResult], str]:
    out = tmp_path / f"results{len(list(tmp_path.iterdir()))}.jsonl"
    code = main(["eval", saved(tmp_path, scenario), "--out", str(out), *argv])
    results = read_results(out)
    return code, results, capsys.readouterr().err


def test_eval_says_once_which_tools_it_will_decline_and_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, results, err = evaluate(tmp_path, capsys, with_cases(scenario_with(NOTIFYING)))
    assert code == 0
    assert [observations(r) for r in results] == [["Error: the user declined to run notify"]] * 2
    notices = [line for line in err.splitlines() if "declined" in line]
    assert notices == [
        "react-sandbox eval: eval asks no one, so every call of these tools will be declined: "
        "notify (it has side effects); --allow TOOL lets one run unasked"
    ]


def test_eval_allow_runs_the_tool_unasked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = with_cases(scenario_with(NOTIFYING))
    code, results, err = evaluate(tmp_path, capsys, scenario, "--allow", "notify")
    assert code == 0
    assert [observations(r) for r in results] == [["sent"]] * 2
    assert "declined" not in err


def test_eval_allow_keeps_a_deny_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = with_cases(scenario_with(NOTIFYING, policies={"notify": "deny"}))
    code, results, err = evaluate(tmp_path, capsys, scenario, "--allow", "notify")
    assert code == 0
    assert [observations(r) for r in results] == [
        ["Error: notify may not be used in this run (its policy is deny)."]
    ] * 2
    assert "--allow notify: the scenario denies notify" in err


def test_eval_allow_of_a_tool_not_enabled_is_one_line_and_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results.jsonl"
    path = saved(tmp_path, with_cases(scenario_with(NOTIFYING)))
    assert main(["eval", path, "--out", str(out), "--allow", "nobody"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == (
        "react-sandbox eval: --allow nobody: no such tool is enabled in this scenario"
    )
    assert not out.exists()


# ---- --tools --------------------------------------------------------------------------------


def test_tools_accepts_the_scenarios_own_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = saved(tmp_path, scenario_with(NOTIFYING).with_changes(enabled_tools=("search",)))
    code, seen, _ = run_json(capsys, path, "--tools", "calculator,notify", "--allow", "notify")
    assert (code, seen) == (0, ["sent"])


@pytest.mark.usefixtures("sender_plugin")
def test_tools_accepts_a_plugins_tool(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = scenario_with(["Action: sender[hi]", "Answer: done"], custom=())
    path = saved(tmp_path, scenario)  # the file enables search and calculator only
    code, seen, _ = run_json(capsys, path, "--tools", "search, sender", "--allow", "sender")
    assert (code, seen) == (0, ["sent hi"])


def test_tools_accepts_an_mcp_servers_tool_with_mcp(tmp_path: Path) -> None:
    path = mcp_scenario(tmp_path, enabled=("search",))  # capital is not in the file
    code, seen, err = run_process(path, "--mcp", "--tools", "capital", "--allow", "capital")
    assert (code, seen) == (0, ["Tokyo"]), err


def test_an_unknown_tool_is_one_line_listing_the_known_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = saved(tmp_path, scenario_with(NOTIFYING))
    assert main(["run", path, "--tools", "search,wether"]) == 1
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        "react-sandbox: --tools: unknown tool 'wether'; known: calculator, search, finish, notify"
    ]
    assert captured.out == ""


def test_with_mcp_the_known_tools_include_the_servers(tmp_path: Path) -> None:
    code, seen, err = run_process(mcp_scenario(tmp_path), "--mcp", "--tools", "capitol")
    assert (code, seen) == (1, [])  # nothing on stdout either
    (line,) = err.splitlines()
    assert line.startswith("react-sandbox: --tools: unknown tool 'capitol'; known: calculator, ")
    assert "capital" in line.split("known: ")[1].split(", ")
