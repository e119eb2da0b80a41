"""The command line and prompt versions: ``prompts list|show|diff``, ``run --prompt`` (checked
at the test server: the system prompt it received), and ``eval --prompt A --prompt B`` (each
version × each lane, every result line and summary row naming its version)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sandbox_app.application.run_builder import RunSpec
from sandbox_app.backends.registry import SCRIPTED, config_for
from sandbox_app.cli.main import main
from sandbox_app.core.scenarios.prompt_versions import record
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir
from tests.helpers import replies_of
from tests.model_server import ModelScript, ModelServer

T0 = datetime(2025, 1, 31, 9, 30, tzinfo=UTC)
FIRST = "You answer with tools.\nTools:\n{tools}\n\n{format}"
SECOND = "You answer carefully with tools.\nTools:\n{tools}\n\n{format}\nNever guess."


def with_two_versions(base: Scenario, tmp_path: Path) -> tuple[Path, str, str]:
    """``base`` saved with two versions run in its history (FIRST named "plain", starred;
    SECOND in paren and without search); the file and the two short ids."""
    first = base.with_changes(system_prompt=FIRST)
    second = base.with_changes(system_prompt=SECOND, dialect="paren")
    second = second.with_changes(enabled_tools=("calculator",))
    v1 = RunSpec(first, config_for(SCRIPTED)).prompt_version
    v2 = RunSpec(second, config_for(SCRIPTED)).prompt_version
    history = record(record((), v1, T0, runs=3), v2, T0 + timedelta(hours=1))
    history = (replace(history[0], name="plain", starred=True), history[1])
    path = tmp_path / "versions.json"
    save_scenario(base.with_changes(prompt_history=history), path)
    return path, v1.short, v2.short


@pytest.fixture
def brightgrid(tmp_path: Path) -> tuple[Path, str, str]:
    return with_two_versions(load_scenario(scenarios_dir() / "brightgrid.json"), tmp_path)


def test_prompts_list_shows_each_version_latest_first(
    brightgrid: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    path, a, b = brightgrid
    assert main(["prompts", "list", str(path)]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    assert header.split() == ["id", "last", "used", "star", "runs", "name"]
    assert [row.split()[0] for row in rows] == [b, a]
    assert rows[1].split()[-3:] == ["★", "3", "plain"]
    assert rows[0].split()[-1] == "1"


def test_prompts_show_and_diff(
    brightgrid: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    path, a, b = brightgrid
    assert main(["prompts", "show", "plain", str(path)]) == 0
    shown = capsys.readouterr().out
    assert f"version {a} (plain) ★" in shown
    assert "dialect: bracket · tool calling: react" in shown
    assert shown.endswith("template:\n" + FIRST + "\n")
    assert main(["prompts", "diff", a, b, str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == [f"{a} → {b}", "dialect: bracket → paren", "tool removed: search"]
    assert lines[3:] == [
        "template:",
        "You answer {+carefully +}with tools.",
        "Tools:",
        "{tools}",
        "",
        "{format}{+",
        "Never guess.+}",
    ]


def test_prompts_errors_are_one_line(
    brightgrid: tuple[Path, str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _, _ = brightgrid
    before = path.read_bytes()
    assert main(["prompts", "show", "zzzz", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("react-sandbox prompts: no prompt version 'zzzz'")
    assert err.count("\n") == 1
    assert main(["prompts", "list", str(tmp_path / "missing.json")]) == 1
    assert capsys.readouterr().err == "react-sandbox prompts: missing.json does not exist.\n"
    assert main(["prompts", "list", str(scenarios_dir() / "brightgrid.json")]) == 0
    assert "no prompt versions yet" in capsys.readouterr().err
    assert path.read_bytes() == before  # reading never writes


def test_hostile_words_in_a_version_never_reach_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = load_scenario(scenarios_dir() / "brightgrid.json")
    hostile = base.with_changes(system_prompt="\x1b]0;pwned\x07 {tools} {format}")
    path, a, _ = with_two_versions(hostile, tmp_path)
    scenario = load_scenario(path)
    history = (*scenario.prompt_history[:-1], replace(scenario.prompt_history[-1], name="\x1b[2J"))
    save_scenario(scenario.with_changes(prompt_history=history), path)
    for argv in (["list"], ["show", a], ["diff", a, "plain"]):
        main(["prompts", *argv, str(path)])
        out = capsys.readouterr().out
        assert "\x1b" not in out
        assert "\x07" not in out


def test_run_prompt_sends_that_versions_system_prompt(
    fake_server: ModelServer,
    brightgrid: tuple[Path, str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, a, b = brightgrid
    fake_server.set_model("m", ModelScript(replies=replies_of("brightgrid")))
    server = ["--base-url", fake_server.base_url, "--model", "m", "--json"]
    assert main(["run", str(path), "--prompt", a, *server]) == 0
    document = json.loads(capsys.readouterr().out)
    system = fake_server.requests[0]["messages"][0]["content"]
    assert system.startswith("You answer with tools.\nTools:\n")
    assert "Never guess." not in system
    assert "search" in system  # version A has both tools
    assert document["settings"]["prompt_version"].startswith(a)
    fake_server.reset()
    fake_server.set_model("m", ModelScript(replies=replies_of("brightgrid")))
    main(["run", str(path), "--prompt", b, *server])
    document = json.loads(capsys.readouterr().out)
    system = fake_server.requests[0]["messages"][0]["content"]
    assert system.startswith("You answer carefully with tools.")
    assert system.rstrip().endswith("Never guess.")
    assert "search(" not in system  # B enables the calculator only
    assert document["settings"]["prompt_version"].startswith(b)
    assert document["settings"]["dialect"] == "paren"


def test_run_prompt_errors_are_one_line_and_run_nothing(
    fake_server: ModelServer,
    brightgrid: tuple[Path, str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, _, _ = brightgrid
    server = ["--base-url", fake_server.base_url, "--model", "m"]
    assert main(["run", str(path), "--prompt", "nope", *server]) == 1
    assert capsys.readouterr().err == (
        f"react-sandbox: --prompt: no prompt version 'nope'; the history has "
        f"{load_scenario(path).prompt_history[0].short} (plain), "
        f"{load_scenario(path).prompt_history[1].short}\n"
    )
    assert fake_server.requests == []


def test_eval_two_prompts_gives_a_row_per_version_and_lane(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = load_scenario(scenarios_dir() / "test_set.json")  # the built-in test set
    path, a, b = with_two_versions(base, tmp_path)
    out = tmp_path / "results.jsonl"
    lanes = ["--lane", "scripted", "--lane", "scripted,temperature=0.5"]
    argv = ["eval", str(path), "--prompt", a, "--prompt", b, *lanes, "--out", str(out)]
    assert main(argv) == 0
    # The lane rows (the within-evaluation verdicts follow them: their own test).
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("scripted @")]
    titles = [row.split(":")[0] for row in rows]
    # Two lanes of one model stay apart (#2), as without --prompt.
    assert titles == [f"scripted @ {v}{n}" for v in ("plain", b) for n in ("", "#2")]
    assert [row.rsplit("· prompt ", 1)[1] for row in rows] == [a, a, b, b]
    results = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    cases = len(base.test_set)
    assert len(results) == 4 * cases
    by_lane = {r["lane"]: r["prompt_version"][:8] for r in results}
    assert by_lane == dict(zip(titles, [a, a, b, b], strict=True))


def test_eval_prompt_naming_one_version_twice_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, a, _ = with_two_versions(load_scenario(scenarios_dir() / "test_set.json"), tmp_path)
    out = tmp_path / "results.jsonl"
    assert main(["eval", str(path), "--prompt", a, "--prompt", "plain", "--out", str(out)]) == 1
    assert capsys.readouterr().err == f"react-sandbox eval: --prompt names version {a} twice\n"
    assert not out.exists()
