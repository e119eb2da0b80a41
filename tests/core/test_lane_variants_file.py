"""A lane's prompt variant in the scenario file and on the command line: a pinned version,
dialect, tools and max steps round-trip; a lane without them is written as before; a pin the
history lacks is one line from `eval`, before any run."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sandbox_app.cli.main import main
from sandbox_app.core.scenarios.prompt_versions import PromptVersion, record, version_of
from sandbox_app.core.scenarios.scenario import (
    EvalCase,
    Expected,
    LaneConfig,
    LaneSettings,
    Scenario,
)
from sandbox_app.core.scenarios.scenario_file import default_scenario, load_scenario, save_scenario

NOW = datetime(2025, 1, 2, tzinfo=UTC)


def _pinned_scenario(pin: str | None = None) -> tuple[Scenario, PromptVersion]:
    base = default_scenario()
    told = base.with_changes(system_prompt="Version A.\n{tools}\n{format}")
    version = version_of(told, told.tools())
    variant = LaneSettings(
        prompt=pin or version.id, dialect="paren", enabled_tools=("calculator",), max_steps=8
    )
    lanes = (LaneConfig("scripted", settings=variant), LaneConfig("scripted"))
    return base.with_changes(lanes=lanes, prompt_history=record((), version, NOW)), version


def test_a_pinned_lane_round_trips_and_a_plain_lane_is_written_as_before(tmp_path: Path) -> None:
    scenario, version = _pinned_scenario()
    path = tmp_path / "s.json"
    save_scenario(scenario, path)
    written = json.loads(path.read_text(encoding="utf-8"))
    pinned, plain = written["lanes"]
    assert (pinned["prompt"], pinned["dialect"]) == (version.id, "paren")
    assert (pinned["enabled_tools"], pinned["max_steps"]) == (["calculator"], 8)
    assert not {"prompt", "dialect", "enabled_tools", "max_steps"} & set(plain)
    assert not {"prompt", "enabled_tools"} & set(written["model"])
    loaded = load_scenario(path)
    assert loaded.lanes == scenario.lanes
    lane = loaded.with_lane(loaded.lanes[0].settings.over(loaded.model))
    assert lane.system_prompt == "Version A.\n{tools}\n{format}"
    assert (lane.dialect, lane.enabled_tools, lane.max_steps) == ("paren", ("calculator",), 8)
    assert lane.model.prompt is None  # applied, so never kept twice


def test_a_lane_setting_of_the_wrong_type_is_one_line(tmp_path: Path) -> None:
    scenario, _ = _pinned_scenario()
    path = tmp_path / "s.json"
    save_scenario(scenario, path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["lanes"][0]["enabled_tools"] = "calculator"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=r'"lanes\[0\].enabled_tools" must be a list of names'):
        load_scenario(path)


def test_eval_refuses_a_lane_pinned_to_a_missing_version_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario, _ = _pinned_scenario(pin="deadbeef")
    scenario = scenario.with_changes(test_set=(EvalCase("2+2?", Expected("4")),))
    path = tmp_path / "s.json"
    save_scenario(scenario, path)
    assert main(["eval", str(path), "--out", str(tmp_path / "r.jsonl")]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert "no prompt version 'deadbeef'" in err, err
    assert not (tmp_path / "r.jsonl").exists()


def test_eval_lane_options_set_a_lanes_variant() -> None:
    assert LaneSettings.parse_option("enabled_tools", "calculator+search") == (
        "enabled_tools",
        ("calculator", "search"),
    )
    assert LaneSettings.parse_option("max_steps", "auto") == ("max_steps", None)
