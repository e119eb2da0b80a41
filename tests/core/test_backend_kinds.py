"""A backend kind is data: one registered from a test module reaches the scenario file's lanes,
``run --backend``, ``eval --lane`` and ``eval`` over a file's lanes, with no other edit."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.backends.catalogue.kinds import BackendKind
from sandbox_app.backends.registry import (
    backend_id,
    backend_ids,
    config_for,
    display_name,
    key_notice,
    register_kind,
    waiting_for,
)
from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.cli.main import main
from sandbox_app.core.results.evaluation import read_results
from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir
from tests.echo_kind import ECHO, answer, registered
from tests.model_server import ModelScript, ModelServer

TEST_SET = scenarios_dir() / "test_set.json"


@pytest.fixture
def echo() -> Iterator[BackendKind]:
    yield from registered()


def test_a_registered_kind_is_a_backend_id_until_it_is_removed() -> None:
    assert "echo" not in backend_ids()
    for kind in registered():
        assert backend_ids()[-1] == "echo"
        assert (backend_id("ECHO "), display_name("echo")) == ("echo", "Echo")
        config = config_for("echo", model="m")
        assert config.kind is kind
        assert (config.url, key_notice(config, KeyStore()), waiting_for(config)) == ("", "", "Echo")
    assert "echo" not in backend_ids()
    with pytest.raises(ValueError, match=r"^unknown backend 'echo'; known: scripted, "):
        config_for("echo")


def test_a_kind_cannot_take_an_id_or_name_already_taken(echo: BackendKind) -> None:
    with pytest.raises(ValueError, match=r"^backend kind 'echo': echo already taken$"):
        register_kind(echo)
    with pytest.raises(ValueError, match="lm studio already taken"):
        register_kind(BackendKind("other", "LM Studio", echo.make))
    assert backend_ids().count("echo") == 1


def test_a_key_field_needs_an_account() -> None:
    with pytest.raises(ValueError, match="a key field and an account go together"):
        BackendKind("keyed", "Keyed", ECHO.make, fields=frozenset({"key"}))


def test_the_scenario_files_lanes_keep_a_registered_kind(echo: BackendKind, tmp_path: Path) -> None:
    scenario = load_scenario(TEST_SET).with_changes(lanes=(LaneConfig("echo", model="m"),))
    save_scenario(scenario, tmp_path / "s.json")
    lane = load_scenario(tmp_path / "s.json").lanes[0]
    assert (lane.backend, lane.model) == ("echo", "m")
    assert config_for(lane.backend).kind is echo


def test_run_backend_takes_a_registered_kind_and_its_model_answers(
    echo: BackendKind, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--backend", "echo", "--model", "m"]) == 0
    assert answer("m") in capsys.readouterr().out


def test_run_backend_names_every_known_id_when_it_knows_none(
    echo: BackendKind, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--backend", "nope", "--model", "m"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("react-sandbox: unknown backend 'nope'; known: scripted, openai, ")
    assert err.endswith(f"known: {', '.join(backend_ids())}")  # the built-in kinds', then echo
    assert err.endswith(", echo")
    assert "\n" not in err


def test_run_refuses_a_url_for_a_kind_without_one(
    echo: BackendKind, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "--backend", "echo", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
    assert main(args) == 1
    assert capsys.readouterr().err == "react-sandbox: --base-url: the Echo backend takes no URL\n"


def test_run_backend_takes_a_preset_id_with_its_url(
    fake_server: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.set_model("m", ModelScript(replies=["Answer: from the server"], cycle=True))
    args = ["run", "--backend", "lmstudio", "--base-url", fake_server.base_url, "--model", "m"]
    assert main(args) == 0
    assert "Answer: from the server" in capsys.readouterr().out
    assert [r["model"] for r in fake_server.requests] == ["m"]


def test_run_backend_openai_keeps_meaning_the_openai_preset(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "--backend", "openai"]) == 1  # before any request: no model named
    assert capsys.readouterr().err == "react-sandbox: --model is required for the OpenAI backend\n"


def test_eval_lane_takes_a_registered_kind(echo: BackendKind, tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    out = io.StringIO()
    code = eval_command([str(TEST_SET), "--lane", "echo:m", "--out", str(results)], out)
    assert code == 0
    runs = read_results(results)
    assert len(runs) == 12  # every case of the test set, answered by the echo model
    assert {(r.lane, r.answer) for r in runs} == {("echo:m", "echo from m")}
    assert "echo:m: 0% (0/12" in out.getvalue()


def test_eval_runs_a_scenario_files_lanes_of_a_registered_kind(
    echo: BackendKind, tmp_path: Path
) -> None:
    lanes = (LaneConfig("echo", model="a"), LaneConfig("echo", model="b"))
    save_scenario(load_scenario(TEST_SET).with_changes(lanes=lanes), tmp_path / "s.json")
    results = tmp_path / "r.jsonl"
    assert main(["eval", str(tmp_path / "s.json"), "--out", str(results)]) == 0
    answers = {(r.lane, r.answer) for r in read_results(results)}
    assert answers == {("echo:a", "echo from a"), ("echo:b", "echo from b")}


def test_eval_lane_wants_a_model_for_a_kind_with_one(
    echo: BackendKind, capsys: pytest.CaptureFixture[str]
) -> None:
    assert eval_command([str(TEST_SET), "--lane", "echo"], io.StringIO()) == 1
    assert capsys.readouterr().err == (
        "react-sandbox eval: --lane 'echo': write BACKEND:MODEL or URL:MODEL\n"
    )
