"""A backend kind is data: one registered from a test module reaches the scenario file's lanes,
``run --backend``, ``eval --lane`` and ``eval`` over a file's lanes, with no other edit."""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.backends.catalogue.kinds import BackendKind, Listed
from sandbox_app.backends.registry import (
    backend_id,
    backend_ids,
    catalogue,
    config_for,
    display_name,
    key_notice,
    register_kind,
    resolved,
    unregister_kind,
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


def test_every_kind_the_catalogue_lists_is_where_it_says_and_lists_its_backends() -> None:
    """The catalogue names each kind by a string, imported on first use: a typo, a kind moved
    or a backend renamed in one place only fails here, not at a user's first run of it."""
    entries = catalogue()
    assert [entry.id for entry in entries][:2] == ["scripted", "openai-compatible"]
    for entry in entries:
        kind = resolved(entry)
        assert kind.listed(entry.where) == entry
        for backend, name in entry.backends:
            assert config_for(backend).kind is kind
            assert display_name(backend) == name == kind.choice(backend).name


def test_an_entry_that_names_the_wrong_place_is_refused_in_one_line() -> None:
    typo = Listed.single("typo", "Typo", "sandbox_app.backends.offline.scripted:KINDS")
    other = Listed.single("other", "Other", "sandbox_app.backends.offline.scripted:KIND")
    for entry, error, words in (
        (typo, AttributeError, "scripted has no 'KINDS'"),
        (other, ValueError, "backend kind 'other': sandbox_app.backends.offline.scripted:KIND "),
    ):
        register_kind(entry)
        try:
            assert entry.id in backend_ids()  # listed without importing anything
            with pytest.raises(error, match=words):
                config_for(entry.id)
        finally:
            unregister_kind(entry.id)


def test_listing_the_backends_imports_only_the_kind_chosen() -> None:
    """The panel's list, a file's names: data. The offline model's kind alone is imported when
    it is chosen (the window's first frame), none of the five server kinds."""
    code = (
        "import sys\n"
        "from sandbox_app.backends import registry\n"
        "names = [registry.display_name(b) for b in registry.backend_ids()]\n"
        "registry.config_for(registry.backend_id('Scripted (offline)'))\n"
        "print(sorted(m for m in sys.modules if m.endswith(('_kind', '.scripted'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert out.strip() == "['sandbox_app.backends.offline.scripted']"


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
