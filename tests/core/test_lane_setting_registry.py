"""A lane setting added from outside the app's modules (core/scenarios/lane_settings.py's registry)
reaches every front end with no other edit: the scenario file, `run`'s flags, `eval --lane`
and the run record. (The model panel's row: tests/ui/test_lane_setting_registry.py.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox_app.cli.evaluating.eval_command import _lane_from_spec
from sandbox_app.cli.main import main
from sandbox_app.core.scenarios.lane_settings import (
    LaneSettings,
    Rule,
    Setting,
    register,
    unregister,
)
from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir
from tests.model_server import ModelScript, ModelServer

FAKE = Setting(
    "fake_level",
    Rule("whole", 1, 9, nullable=True),
    None,
    "Fake level",
    "a test's",
    request_key="fake_level",  # sent to servers as it is
)


@pytest.fixture
def fake_setting() -> Iterator[Setting]:
    register(FAKE)
    yield FAKE
    unregister(FAKE.name)


ANSWER = "Thought: I know it.\nAnswer: 4"


def _one_case(tmp_path: Path, **changes: object) -> Path:
    """The test-set example cut to its first case, with ``changes``, saved."""
    example = load_scenario(scenarios_dir() / "test_set.json")
    scenario = example.with_changes(test_set=example.test_set[:1], **changes)
    save_scenario(scenario, tmp_path / "one.json")
    return tmp_path / "one.json"


def test_the_scenario_file_keeps_a_new_setting_for_the_scenario_and_each_lane(
    fake_setting: Setting, tmp_path: Path
) -> None:
    scenario = load_scenario(scenarios_dir() / "brightgrid.json").with_changes(
        model=LaneSettings(fake_level=3),
        lanes=(LaneConfig("scripted", settings=LaneSettings(fake_level=7)), LaneConfig()),
    )
    save_scenario(scenario, tmp_path / "s.json")
    data = json.loads((tmp_path / "s.json").read_text())
    assert data["model"]["fake_level"] == 3
    assert [lane["fake_level"] for lane in data["lanes"]] == [7, None]
    again = load_scenario(tmp_path / "s.json")
    assert again == scenario
    assert again.model["fake_level"] == 3


def test_a_bad_value_in_a_file_is_one_line_naming_it(fake_setting: Setting, tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"version": 1, "lanes": [{"fake_level": 12}]}')
    with pytest.raises(ValueError, match=r'"lanes\[0\].fake_level" must be from 1 to 9'):
        load_scenario(path)


def test_run_has_a_flag_for_it_and_records_it(
    fake_setting: Setting, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--fake-level", "4", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["settings"]["fake_level"] == 4
    assert main(["run", "--fake-level", "10"]) == 1
    err = capsys.readouterr().err
    assert err == "react-sandbox: --fake-level must be from 1 to 9 (got 10).\n"


def test_a_setting_with_a_request_key_reaches_the_server_only_when_set(
    fake_server: ModelServer, fake_setting: Setting, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.set_model("m", ModelScript(replies=("Thought: done.\nAnswer: 4",)))
    url = fake_server.base_url
    assert main(["run", "--base-url", url, "--model", "m", "--fake-level", "3"]) == 0
    assert fake_server.requests[-1]["fake_level"] == 3
    assert main(["run", "--base-url", url, "--model", "m"]) == 0
    assert "fake_level" not in fake_server.requests[-1]  # None: not sent
    capsys.readouterr()


def test_eval_lanes_take_it_as_an_option_and_send_it(
    fake_server: ModelServer,
    fake_setting: Setting,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake_server.set_model("m", ModelScript(replies=(ANSWER,)))
    test_set = str(_one_case(tmp_path))
    out = str(tmp_path / "r.jsonl")
    assert main(["eval", test_set, "--lane", "scripted,fake_level=0", "--out", out]) == 1
    assert "--lane option fake_level must be from 1 to 9 (got 0)" in capsys.readouterr().err
    lane = f"{fake_server.base_url}:m,fake_level=5"
    assert main(["eval", test_set, "--lane", lane, "--out", out]) == 0
    assert [r["fake_level"] for r in fake_server.requests] == [5]


def test_a_lane_has_the_scenarios_unshown_settings_unless_it_names_them(
    fake_server: ModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # top_p and seed have no row in the model panel: a lane that does not name them runs
    # with the scenario's; one that names its own seed runs with that.
    fake_server.set_model("m", ModelScript(replies=(ANSWER,)))
    url = fake_server.base_url
    path = _one_case(
        tmp_path,
        model=LaneSettings(seed=42, top_p=0.5),
        lanes=(
            LaneConfig("custom", url, "m"),
            LaneConfig("custom", url, "m", LaneSettings(seed=7)),
        ),
    )
    lanes = load_scenario(path).lanes
    assert [lane.settings.given().get("seed") for lane in lanes] == [None, 7]
    assert main(["eval", str(path), "--out", str(tmp_path / "r.jsonl")]) == 0
    sent = sorted((r["seed"], r["top_p"]) for r in fake_server.requests)
    assert sent == [(7, 0.5), (42, 0.5)]


def test_without_it_the_flag_and_option_are_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--fake-level", "4"])
    with pytest.raises(ValueError, match="not a lane option"):
        _lane_from_spec("ollama:m,fake_level=5", 60, LaneSettings())
