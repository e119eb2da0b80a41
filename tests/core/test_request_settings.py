"""Each backend kind sends the lane settings that are request parameters where its own API
takes them (backends/catalogue/request_fields.py), as its test server received them through the real
SDK or client; a setting a kind cannot send is refused before the run, in one line naming
the setting and the kind, and nothing reaches the server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import reduce
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.cli.main import main
from sandbox_app.core.scenarios.lane_settings import Rule, Setting, register, unregister
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir
from tests.model_server import ModelScript
from tests.model_server.anthropic import fake_anthropic
from tests.model_server.gemini import gemini_server
from tests.model_server.ollama import fake_ollama
from tests.model_server.responses import responses_server

__all__ = ["fake_anthropic", "fake_ollama", "gemini_server", "responses_server"]

ANSWER = "Thought: I know it.\nAnswer: 4"
# A kind's test server, scripted to answer once: run's flags to reach it, and its bodies.
Served = tuple[list[str], Callable[[], list[dict[str, Any]]]]


def _chat(request: pytest.FixtureRequest) -> Served:
    server = request.getfixturevalue("fake_server")
    server.set_model("m", ModelScript(replies=(ANSWER,)))
    return ["--base-url", server.base_url], lambda: list(server.requests)


def _anthropic(request: pytest.FixtureRequest) -> Served:
    server = request.getfixturevalue("fake_anthropic")
    server.set_model("m", ModelScript(replies=[ANSWER]))
    return ["--backend", "anthropic", "--base-url", server.base_url], lambda: server.requests


def _responses(request: pytest.FixtureRequest) -> Served:
    server = request.getfixturevalue("responses_server")
    server.set_model("m", ModelScript(replies=[ANSWER]))
    return ["--backend", "responses", "--base-url", server.base_url], lambda: server.requests


def _gemini(request: pytest.FixtureRequest) -> Served:
    server = request.getfixturevalue("gemini_server")
    server.set_model("m", ModelScript(replies=[ANSWER]))
    return ["--backend", "gemini", "--base-url", server.base_url], lambda: server.requests


def _ollama(request: pytest.FixtureRequest) -> Served:
    server = request.getfixturevalue("fake_ollama")
    server.set_model("m", ModelScript(replies=[ANSWER]))
    return ["--backend", "ollama-native", "--base-url", server.root], lambda: server.requests


SERVED = {
    "custom": _chat,
    "anthropic": _anthropic,
    "responses": _responses,
    "gemini": _gemini,
    "ollama-native": _ollama,
}


def sent(request: pytest.FixtureRequest, kind: str, *flags: str) -> dict[str, Any]:
    """The body the kind's server received for a one-step ``run`` with ``flags``."""
    reach, bodies = SERVED[kind](request)
    assert main(["run", *reach, "--model", "m", *flags]) == 0
    return bodies()[-1]


def at(body: dict[str, Any], path: str) -> Any:
    return reduce(lambda value, key: value.get(key) if value else None, path.split("."), body)


PASSED = Setting("fake_level", Rule("whole", 1, 9, nullable=True), None, request_key="fake_level")


@pytest.fixture
def passed() -> Iterator[Setting]:
    register(PASSED)
    yield PASSED
    unregister(PASSED.name)


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        ("custom", "fake_level"),
        ("anthropic", "fake_level"),
        ("responses", "fake_level"),
        ("gemini", "generationConfig.fake_level"),  # the API reads proto names too
        ("ollama-native", "options.fake_level"),  # a model parameter, as Modelfiles name them
    ],
)
def test_a_setting_with_a_request_key_reaches_every_kinds_server(
    request: pytest.FixtureRequest,
    passed: Setting,
    kind: str,
    path: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert at(sent(request, kind, "--fake-level", "3"), path) == 3
    capsys.readouterr()


@pytest.mark.parametrize(
    ("kind", "flags", "line"),
    [
        ("anthropic", ("--seed", "7"), "seed: Anthropic (Claude) cannot send it"),
        ("responses", ("--seed", "7"), "seed: OpenAI Responses API cannot send it"),
        ("ollama-native", ("--reasoning-effort", "high"), "reasoning_effort: Ollama (native"),
    ],
)
def test_a_setting_a_kind_cannot_send_is_refused_before_the_run_in_one_line(
    request: pytest.FixtureRequest,
    kind: str,
    flags: tuple[str, ...],
    line: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    reach, bodies = SERVED[kind](request)
    assert main(["run", *reach, "--model", "m", *flags]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"react-sandbox: {line}")
    assert err.endswith("; leave it unset for this backend\n")
    assert err.count("\n") == 1
    assert bodies() == []  # never sent without it: nothing was sent


def test_eval_refuses_such_a_lane_before_any_run(
    request: pytest.FixtureRequest, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reach, bodies = SERVED["anthropic"](request)
    example = load_scenario(scenarios_dir() / "test_set.json")
    save_scenario(example.with_changes(test_set=example.test_set[:1]), tmp_path / "one.json")
    lane = f"anthropic:{reach[-1]}:m,seed=7"
    argv = ["eval", str(tmp_path / "one.json"), "--lane", lane, "--out", str(tmp_path / "r")]
    assert main(argv) == 1
    assert "seed: Anthropic (Claude) cannot send it" in capsys.readouterr().err
    assert bodies() == []


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        ("custom", "top_p"),
        ("anthropic", "top_p"),
        ("responses", "top_p"),
        ("gemini", "generationConfig.topP"),
        ("ollama-native", "options.top_p"),
    ],
)
def test_top_p_reaches_every_kinds_server_where_its_api_takes_it(
    request: pytest.FixtureRequest, kind: str, path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert at(sent(request, kind, "--top-p", "0.5"), path) == 0.5
    capsys.readouterr()
