"""The headless CLI: the same engine, printed to a terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from sandbox_app.cli import main
from sandbox_app.core.scenario import scenarios_dir
from tests.fakeserver import FakeOpenAIServer, ModelScript
from tests.helpers import replies_of


def test_run_with_no_arguments_answers_the_brightgrid_question_offline() -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "sandbox_app", "run"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "Action: calculator[20 * 12 * 7]" in result.stdout
    assert "Observation: 1680" in result.stdout
    assert "Final answer: $1,680 per year" in result.stdout


def test_run_against_an_openai_compatible_server(
    fake_server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.set_model("m1", ModelScript(replies=replies_of("calculator_chain")))
    scenario = str(scenarios_dir() / "calculator_chain.json")
    code = main(["run", scenario, "--base-url", fake_server.base_url, "--model", "m1", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert (code, document["status"], document["answer"]) == (0, "answered", "668")
    assert document["metrics"]["tool_calls"] == 3
    assert {"ActionParsed", "Observation", "TokenDelta"} <= {e["type"] for e in document["events"]}


def test_exit_code_2_on_max_steps(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--max-steps", "1"]) == 2
    assert "Reached max steps without final answer" in capsys.readouterr().out


def test_exit_code_1_and_one_line_for_a_bad_scenario(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "/nonexistent/x.json"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == "react-sandbox: x.json does not exist."


def test_help_prints_in_a_terminal() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sandbox_app", "--help"], capture_output=True, text=True, check=True
    )
    assert "react-sandbox" in result.stdout
    assert "run" in result.stdout


def test_token_budget_flag_stops_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--token-budget", "100"]) == 1
    assert "Token budget of 100 used up after step 1" in capsys.readouterr().out


def test_an_openai_key_is_never_sent_to_another_server(
    fake_server: FakeOpenAIServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    monkeypatch.delenv("REACT_SANDBOX_API_KEY", raising=False)
    fake_server.set_model("m1", ModelScript(replies=["Answer: 1"]))
    assert main(["run", "--base-url", fake_server.base_url, "--model", "m1"]) == 0
    assert fake_server.authorizations == ["Bearer not-needed"]
    monkeypatch.setenv("REACT_SANDBOX_API_KEY", "sk-proxy")
    assert main(["run", "--base-url", fake_server.base_url, "--model", "m1"]) == 0
    assert fake_server.authorizations[-1] == "Bearer sk-proxy"
