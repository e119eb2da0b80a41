"""The headless CLI: the same engine, printed to a terminal."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox_app.cli.main import main
from sandbox_app.core.scenarios.scenario_file import scenarios_dir
from tests.helpers import replies_of
from tests.model_server import ModelScript, ModelServer


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
    fake_server: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.set_model("m1", ModelScript(replies=replies_of("calculator_chain")))
    scenario = str(scenarios_dir() / "calculator_chain.json")
    code = main(["run", scenario, "--base-url", fake_server.base_url, "--model", "m1", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert (code, document["status"], document["answer"]) == (0, "answered", "668")
    assert document["metrics"]["tool_calls"] == 3
    assert {"ActionParsed", "Observation", "TokenDelta"} <= {e["type"] for e in document["events"]}


def test_exit_code_5_on_max_steps(capsys: pytest.CaptureFixture[str]) -> None:
    # Not 2: that is argparse's usage error, and a script must tell the two apart.
    assert main(["run", "--max-steps", "1"]) == 5
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
    fake_server: ModelServer,
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


@pytest.fixture
def silent_server() -> Iterator[str]:
    """The base URL of a server that takes the connection and never answers.

    The kernel completes the TCP handshake into the listen backlog; nothing ever accepts it.
    """
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_server_that_never_answers_shows_the_wait_in_seconds(
    silent_server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    host = silent_server.split("/")[2]
    code = main(["run", "--base-url", silent_server, "--model", "m", "--timeout", "3"])
    out = capsys.readouterr().out
    assert code == 1, out
    lines = out.splitlines()
    # Not a terminal: a plain line at 1, 2, 4… s (4 s only if starting the client was slow).
    notices = [line for line in lines if line.startswith("[waiting")]
    assert notices[:2] == [f"[waiting for {host}… 1 s]", f"[waiting for {host}… 2 s]"], out
    assert set(notices) <= {f"[waiting for {host}… {s} s]" for s in (1, 2, 4)}, out
    failed = lines.index(f"failed: No answer from {host} after 3 s (timed out).")
    assert lines.index("── Step 1 ──") < lines.index(notices[0])
    assert lines.index(notices[-1]) < failed


def test_on_a_terminal_the_wait_is_one_status_line_erased_when_text_arrives(
    fake_server: ModelServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_server.set_model("m1", ModelScript(replies=["Answer: 1"], delay_first=1.3))
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["run", "--base-url", fake_server.base_url, "--model", "m1"]) == 0
    host = fake_server.base_url.split("/")[2]
    text = terminal.getvalue()
    # Rewritten in place (\r, then erase to the end of the line), never a new line of its own.
    assert f"── Step 1 ──\n\rwaiting for {host}… 1 s\033[K" in text
    assert " s\033[K\r\033[KAnswer: 1" in text  # erased just before the model's text
    assert "[waiting" not in text
    assert capsys.readouterr().out == ""


def test_no_waiting_notice_when_the_model_answers_at_once(
    fake_server: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.set_model("m1", ModelScript(replies=["Answer: 1"]))
    assert main(["run", "--base-url", fake_server.base_url, "--model", "m1"]) == 0
    out = capsys.readouterr().out
    assert "waiting" not in out
    assert "Final answer: 1" in out


def test_json_output_stays_one_document_while_the_server_is_silent(
    silent_server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "--base-url", silent_server, "--model", "m", "--timeout", "1.5", "--json"])
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert (code, document["status"]) == (1, "failed")
    assert "timed out" in document["reason"]
    assert captured.err == ""  # stderr is not a terminal here: no status line either


def test_native_tool_calls_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--tool-calling", "native"]) == 0
    out = capsys.readouterr().out
    assert 'Action: search({"search_text": "Brightgrid Pro price per developer"})' in out
    assert "Final answer: $1,680 per year" in out


def test_a_native_reply_without_a_call_is_printed_as_the_answer_as_the_window_shows_it(
    fake_server: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.core.test_native_tools import NATIVE_REPLIES

    fake_server.set_model("m", ModelScript(replies=[], native_replies=NATIVE_REPLIES))
    args = ["run", "--base-url", fake_server.base_url, "--model", "m", "--tool-calling", "native"]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "Answer: $1,680 per year" in lines  # the window's line for it
    assert not any(line.startswith("Thought: $1,680") for line in lines)
    # A reply that went on to call a tool stays a Thought, its Action line under it.
    thought = lines.index("Thought: I need the price per developer first.")
    assert lines[thought + 1].startswith('Action: search({"query": ')


# Imported first by the process (PYTHONPATH): the SDK's chat module, which only making a client
# imports (not the health check's HTTP library), takes 2.5 s, as on a cold disk.
SLOW_SDK_IMPORT = """
import importlib.abc, sys, time

class SlowSdk(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "openai.resources.chat":
            sys.meta_path.remove(self)
            time.sleep(2.5)
        return None

sys.meta_path.insert(0, SlowSdk())
"""


def test_the_sdks_start_up_is_never_counted_as_waiting_for_the_server(
    fake_server: ModelServer, tmp_path: Path
) -> None:
    (tmp_path / "sitecustomize.py").write_text(SLOW_SDK_IMPORT)
    fake_server.set_model("m1", ModelScript(replies=["Answer: 1"]))  # answers at once
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "sandbox_app", "run", "--base-url", fake_server.base_url,
         "--model", "m1"],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Final answer: 1" in result.stdout
    assert "waiting" not in result.stdout  # the server answered at once
