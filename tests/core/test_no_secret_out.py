"""A key a server quotes back in its error ("… for key Bearer sk-…") reaches no output: the
run's JSON, the terminal, the OTel file and collector, eval's results, JUnit and report. The
app scrubs it where the server's text becomes the app's (backends/transport/server_text.py), so each
sink here is only looked at, through the real CLI against the real local test servers."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import mcp.client.stdio  # noqa: F401  (see test_an_mcp_servers_words_never_show_the_secret…)
import pytest

from sandbox_app.backends.catalogue.keys import CUSTOM_KEY_ENV
from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.cli.main import main
from sandbox_app.core.scenarios.scenario_file import save_scenario, scenarios_dir
from sandbox_app.core.untrusted.outside_text import KEY_REMOVED
from tests.model_server import ModelScript, ModelServer
from tests.model_server.anthropic import fake_anthropic
from tests.model_server.gemini import gemini_server
from tests.model_server.responses import responses_server
from tests.otlp_receiver import OtlpReceiver, otlp_receiver

__all__ = ["fake_anthropic", "gemini_server", "otlp_receiver", "responses_server"]

KEY = "rs-KEY-5f3a9c0d17e24b68"
QUOTED = f"Invalid request for key Bearer {KEY} (check it)"


@pytest.fixture(autouse=True)
def _the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The key the app sends every local test server (the key rule's catch-all variable)."""
    monkeypatch.setenv(CUSTOM_KEY_ENV, KEY)


def quoting_server(kind: str, request: pytest.FixtureRequest) -> list[str]:
    """The flags of a ``kind`` test server whose every chat request fails quoting the key."""
    if kind == "custom":
        server: Any = request.getfixturevalue("fake_server")
        assert isinstance(server, ModelServer)
        server.set_model("m", ModelScript(fail_status=400, fail_message=QUOTED))
    elif kind == "anthropic":
        server = request.getfixturevalue("fake_anthropic")
        assert isinstance(server, ModelServer)
        server.set_model("m", ModelScript(fail_status=400, fail_message=QUOTED))
    elif kind == "responses":
        server = request.getfixturevalue("responses_server")
        assert isinstance(server, ModelServer)
        server.set_model("m", ModelScript(fail_status=500, fail_message=QUOTED))
    else:
        server = request.getfixturevalue("gemini_server")
        assert isinstance(server, ModelServer)
        server.set_model("m", ModelScript(fail_status=400, fail_message=QUOTED))
    return ["--backend", kind, "--base-url", server.base_url, "--model", "m"]


@pytest.mark.parametrize("kind", ["custom", "anthropic", "responses", "gemini"])
def test_run_json_says_the_servers_words_without_the_key(
    kind: str, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", *quoting_server(kind, request), "--json"]) == 1
    printed = capsys.readouterr()
    reason = json.loads(printed.out)["reason"]
    assert f"Invalid request for key Bearer {KEY_REMOVED}" in reason
    assert KEY not in printed.out + printed.err


def test_the_terminal_shows_the_error_without_the_key(
    request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", *quoting_server("custom", request)]) == 1
    printed = capsys.readouterr()
    assert f"Bearer {KEY_REMOVED}" in printed.out + printed.err
    assert KEY not in printed.out + printed.err


def test_the_otel_file_and_the_collector_get_no_key(
    request: pytest.FixtureRequest, otlp_receiver: OtlpReceiver, tmp_path: Path
) -> None:
    """Without --otlp-content: the span's status is all of the error a collector gets."""
    spans = tmp_path / "spans.json"
    flags = ["--otlp-file", str(spans), "--otlp", otlp_receiver.endpoint]
    assert main(["run", *quoting_server("custom", request), *flags]) == 1
    written = spans.read_text(encoding="utf-8")
    assert KEY_REMOVED in written
    assert KEY not in written
    statuses = [span.status.message for span in otlp_receiver.spans()]
    assert any(KEY_REMOVED in status for status in statuses), statuses
    assert not any(KEY in status for status in statuses)


def test_eval_results_junit_report_and_otel_file_get_no_key(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = quoting_server("custom", request)[3]
    outputs = {name: tmp_path / name for name in ("results.jsonl", "junit.xml", "report.html")}
    spans = tmp_path / "spans.json"
    args = [str(scenarios_dir() / "test_set.json"), "--lane", f"{url}:m"]
    args += ["--out", str(outputs["results.jsonl"]), "--junit", str(outputs["junit.xml"])]
    args += ["--report", str(outputs["report.html"]), "--otlp-file", str(spans)]
    printed = io.StringIO()
    eval_command(args, printed)
    for path in (*outputs.values(), spans):
        written = path.read_text(encoding="utf-8")
        assert KEY_REMOVED in written, path.name
        assert KEY not in written, path.name
    assert KEY not in printed.getvalue()


def test_an_mcp_servers_words_never_show_the_secret_it_was_given(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An MCP server's secret (its ``secret_env``) quoted in a tool's answer: the observation
    in run --json says the server's words without it. capfd: the MCP client hands the
    server process a real stderr, and its default one is the ``sys.stderr`` of its first
    import, so it is imported with this module, never under a test's capture."""
    from tests.core.test_mcp import scenario_with, spec
    from tests.helpers import builtin

    monkeypatch.setenv("SANDBOX_TEST_TOKEN", KEY)
    scenario = scenario_with(["secret"]).with_changes(
        mcp_servers=(spec(secret_env=("SANDBOX_TEST_TOKEN",)),),
        script=replace(builtin("brightgrid").script, replies=("Action: secret[{}]", "Answer: ok")),
    )
    path = tmp_path / "mcp.json"
    save_scenario(scenario, path)
    assert main(["run", str(path), "--mcp", "--json", "--allow", "secret"]) == 0
    printed = capfd.readouterr()
    document = json.loads(printed.out)
    observed = [e["text"] for e in document["events"] if e["type"] == "Observation"]
    assert observed == [f"wrong token {KEY_REMOVED}"]
    assert KEY not in printed.out + printed.err
