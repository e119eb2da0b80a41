"""MCP servers as tool sources: a real server (tests/mcp_test_server.py, written with the
official SDK) over stdio, its tools listed and called from real runs; an error, a server killed
mid-run and a call that hangs are one line each and the run goes on."""

from __future__ import annotations

import asyncio
import io
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.backends.mcp_client.mcp_tools import McpConnection, McpError
from sandbox_app.cli.main import main
from sandbox_app.core.running.engine import ReactEngine
from sandbox_app.core.running.events import Observation
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario
from sandbox_app.core.tools import Tool, tools_for
from sandbox_app.core.tools.mcp_server import McpServerSpec
from tests.helpers import builtin, collect, finished, of_type, server_backend
from tests.model_server import ModelScript, ModelServer

SERVER = Path(__file__).resolve().parents[1] / "mcp_test_server.py"


def spec(timeout_s: float = 5.0, **changes: Any) -> McpServerSpec:
    return McpServerSpec("test", sys.executable, (str(SERVER),), timeout_s=timeout_s, **changes)


def scenario_with(names: Sequence[str]) -> Scenario:
    return builtin("brightgrid").with_changes(enabled_tools=("search", *names), max_steps=6)


async def run_with_server(
    server: ModelServer,
    replies: list[str],
    names: Sequence[str],
    mcp: McpServerSpec | None = None,
    **engine: Any,
) -> list[Any]:
    server.set_model("m", ModelScript(replies=replies))
    # The user trusts the test server's read-only hints (these runs have no one to ask).
    connection = McpConnection(mcp or spec(), trust_hints=True)
    try:
        sources: list[Tool] = list(await connection.connect())
        scenario = engine.pop("scenario", None) or scenario_with(names)
        tools = tools_for(scenario.enabled_tools, scenario.documents, sources=sources)
        backend = server_backend(server.base_url)
        run = ReactEngine(scenario, backend, model="m", tools=tools, **engine)
        return await collect(run, backend)
    finally:
        await connection.close()


def texts(events: list[Any]) -> list[str]:
    return [o.text for o in of_type(events, Observation)]


def test_connect_lists_the_tools_with_their_inputs() -> None:
    async def listed() -> list[Any]:
        connection = McpConnection(spec())
        try:
            return await connection.connect()
        finally:
            await connection.close()

    tools = {t.name: t for t in asyncio.run(listed())}
    assert set(tools) == {"capital", "find", "add", "secret", "fail", "hang", "die"}
    assert tools["capital"].description == "The capital city of a country."
    assert tools["capital"].input_hint == "country"
    # Its server says read-only, but a server not trusted is not believed: the router asks.
    assert (tools["capital"].hinted_read_only, tools["capital"].read_only) == (True, False)
    assert tools["add"].input_hint == "JSON object with a, b"
    assert not tools["secret"].hinted_read_only


def test_tools_are_called_from_a_real_run(fake_server: ModelServer) -> None:
    replies = [
        "Action: capital[France]",
        'Action: add[{"a": 2, "b": 40}]',
        "Action: add[2 and 40]",
        "Answer: Paris, 42",
    ]
    events = asyncio.run(run_with_server(fake_server, replies, ["capital", "add"]))
    assert texts(events) == ["Paris", "42", "Error: write the input as a JSON object (a, b)."]
    assert finished(events).status == "answered"
    system = fake_server.requests[0]["messages"][0]["content"]
    assert "capital[country]: The capital city of a country." in system


def test_an_error_a_hang_and_a_dead_server_are_one_line_each(
    fake_server: ModelServer,
) -> None:
    replies = [
        "Action: fail[no reason]",
        "Action: hang[30]",
        "Action: die[1]",
        "Action: capital[Norway]",
        "Answer: the server is gone",
    ]
    names = ["fail", "hang", "die", "capital"]
    events = asyncio.run(run_with_server(fake_server, replies, names, spec(timeout_s=1)))
    failed, hung, died, after = of_type(events, Observation)
    assert failed.error
    assert failed.text == "Error executing tool fail: cannot do that: no reason"  # the server's
    assert hung.text == "Error: MCP server test did not answer hang within 1 s."
    assert died.text.startswith("Error: MCP server test (")
    assert died.text.endswith(") is gone: connection closed.")
    assert after.text == died.text  # gone is gone: the next call says the same at once
    assert all("\n" not in o.text for o in (failed, hung, died))
    assert finished(events).status == "answered"  # the run went on


def test_a_secret_comes_from_the_environment_and_a_call_is_approved(
    fake_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SANDBOX_TEST_TOKEN", "s3cret")
    asked: list[str] = []

    async def approve(tool: str, input: str) -> bool:
        asked.append(tool)
        return True

    replies = ["Action: secret[{}]", "Answer: ok"]
    mcp = spec(secret_env=("SANDBOX_TEST_TOKEN",))
    events = asyncio.run(run_with_server(fake_server, replies, ["secret"], mcp, approve=approve))
    assert asked == ["secret"]  # not marked read-only: asked first
    assert texts(events) == ["has the token"]


def test_native_tool_calls_send_the_servers_schema(fake_server: ModelServer) -> None:

    call = '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>'
    scenario = scenario_with(["add"])
    scenario = scenario.with_changes(model=scenario.model.replace(tool_calling="native"))
    events = asyncio.run(run_with_server(fake_server, [call, "5"], ["add"], scenario=scenario))
    assert texts(events) == ["5"]
    (sent,) = [t for t in fake_server.requests[0]["tools"] if t["function"]["name"] == "add"]
    parameters = sent["function"]["parameters"]
    assert set(parameters["properties"]) == {"a", "b"}
    assert parameters["properties"]["a"]["type"] == "integer"


def test_a_server_that_cannot_start_is_one_line() -> None:
    connection = McpConnection(McpServerSpec("nope", "/no/such/program"))
    with pytest.raises(McpError) as info:
        asyncio.run(connection.connect())
    assert str(info.value) == (
        "MCP server nope (/no/such/program) failed: cannot start '/no/such/program' (not found)."
    )


def test_the_cli_starts_mcp_servers_only_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = scenario_with(["capital"]).with_changes(
        mcp_servers=(spec(),),
        policies={"capital": "auto"},
        script=builtin("brightgrid").script.__class__(
            replies=("Action: capital[Japan]", "Answer: Tokyo"), tokens_per_second=0
        ),
    )
    path = tmp_path / "mcp.json"
    save_scenario(scenario, path)
    assert load_scenario(path).mcp_servers == (spec(),)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["run", str(path)]) == 1
    assert "the scenario uses MCP servers (test: " in capsys.readouterr().err
    # An MCP tool asks unless allowed: its server's read-only hint is not believed, and the
    # file's "auto" holds only with --allow.
    assert main(["run", str(path), "--mcp", "--json", "--allow", "capital"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [e["text"] for e in document["events"] if e["type"] == "Observation"] == ["Tokyo"]
    broken = scenario.with_changes(mcp_servers=(McpServerSpec("nope", "/no/such/program"),))
    save_scenario(broken, path)
    assert main(["run", str(path), "--mcp"]) == 1
    assert "MCP server nope (/no/such/program) failed" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("server", "message"),
    [
        ('{"name": "x"}', '"tools.mcp[0]" needs a "command" (stdio) or a "url" (HTTP)'),
        ('{"name": "x", "url": "ftp://h"}', '"tools.mcp[0].url" must start with http://'),
        ('{"name": "x", "command": "p", "env": {"A B": "1"}}', "'A B' is not an environment"),
    ],
)
def test_a_malformed_server_is_one_line(tmp_path: Path, server: str, message: str) -> None:
    from sandbox_app.core.scenarios.scenario_fields import ScenarioError

    path = tmp_path / "bad.json"
    path.write_text('{"version": 1, "tools": {"mcp": [' + server + "]}}")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert message in str(info.value)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_listening(process: Any) -> threading.Thread:
    """Until the server says it listens (uvicorn's start-up line on its stderr); the deadline
    reports what it said. Read unbuffered from the pipe (a buffered reader can hold the line
    select() already reported); its later output is drained on a thread so it never blocks."""
    fd = process.stderr.fileno()
    deadline, said = time.monotonic() + 30, b""
    while b"Uvicorn running on" not in said:
        ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
        chunk = os.read(fd, 4096) if ready else b""
        if not chunk:  # the deadline, or the server ended
            shown = said.decode(errors="replace").splitlines()
            raise AssertionError(f"the HTTP server never listened (exit {process.poll()}): {shown}")
        said += chunk

    def drain() -> None:
        while os.read(fd, 4096):
            pass

    thread = threading.Thread(target=drain, daemon=True)
    thread.start()
    return thread


@contextmanager
def serving_http(port: int) -> Iterator[subprocess.Popen[bytes]]:
    """The test server over HTTP on ``port``, listening; ended when the block ends (if the
    test has not ended it first)."""
    command = [sys.executable, str(SERVER), "--http", str(port)]
    with subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as process:
        try:
            drain = wait_until_listening(process)
            yield process
        finally:
            process.terminate()
            process.wait(timeout=10)
        drain.join(timeout=10)  # its output ends with the process; the pipe closes after


def test_a_server_over_streamable_http(fake_server: ModelServer) -> None:
    port = free_port()
    with serving_http(port):
        http = McpServerSpec("web", url=f"http://127.0.0.1:{port}/mcp", timeout_s=5)
        replies = ["Action: capital[Norway]", "Answer: Oslo"]
        events = asyncio.run(run_with_server(fake_server, replies, ["capital"], http))
        assert texts(events) == ["Oslo"]


def test_a_server_gone_over_http_fails_its_calls_at_once() -> None:
    """The SDK leaves a call to a dead HTTP server pending: it waited the server's whole
    timeout (60 s here). Now the call says the server is gone, at once, and so does the next."""
    port = free_port()

    async def session(process: subprocess.Popen[bytes]) -> tuple[list[str], str]:
        http = McpServerSpec("web", url=f"http://127.0.0.1:{port}/mcp", timeout_s=60)
        connection = McpConnection(http, trust_hints=True)
        try:
            capital = {t.name: t for t in await connection.connect()}["capital"]
            answers = [await capital.run("Norway")]
            process.kill()
            process.wait(timeout=10)
            for _ in range(2):  # far within the server's 60 s: a hang fails here
                answers.append(await asyncio.wait_for(capital.run("France"), 10))
            return answers, connection.ended
        finally:
            await connection.close()

    with serving_http(port) as process:
        answers, ended = asyncio.run(session(process))
    gone = f"MCP server web (http://127.0.0.1:{port}/mcp) is gone: connection refused."
    assert answers == ["Oslo", f"Error: {gone}", f"Error: {gone}"]
    assert ended == gone


def test_optional_parameters_and_the_servers_own_timeout() -> None:
    from sandbox_app.core.tools import ToolRouter

    async def calls() -> list[str]:
        connection = McpConnection(spec(timeout_s=5), trust_hints=True)
        try:
            # The router's own limit is short here: the server's timeout is the one used.
            router = ToolRouter(await connection.connect(), timeout=0.3)
            found = await router.run_tool("find", '{"query": "Oslo"}')  # limit left out
            slow = await router.run_tool("hang", "1")
            return [found.text, slow.text]
        finally:
            await connection.close()

    assert asyncio.run(calls()) == ["1 result for Oslo", "done"]


def test_a_tool_named_like_another_is_offered_under_its_servers_name() -> None:
    async def call() -> tuple[list[str], str]:
        connection = McpConnection(spec())
        try:
            tools = await connection.connect(taken=("capital", "Search"))
            by_name = {t.name: t for t in tools}
            return sorted(by_name), await by_name["test_capital"].run("France")
        finally:
            await connection.close()

    names, answer = asyncio.run(call())
    assert "test_capital" in names
    assert "capital" not in names
    assert answer == "Paris"  # called by its own name on the server


def test_the_cli_says_once_that_a_tool_was_renamed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    clash = McpServerSpec("evaltools", sys.executable, (str(SERVER), "--clash"))
    scenario = scenario_with(["evaltools_calculator"]).with_changes(
        mcp_servers=(clash,),
        policies={"evaltools_calculator": "auto"},
        script=builtin("brightgrid").script.__class__(
            replies=("Action: evaltools_calculator[two plus two]", "Answer: four"),
            tokens_per_second=0,
        ),
    )
    path = tmp_path / "clash.json"
    save_scenario(scenario, path)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["run", str(path), "--mcp", "--json", "--allow", "evaltools_calculator"]) == 0
    captured = capsys.readouterr()
    notice = (
        "Tool calculator of evaltools is offered as evaltools_calculator (calculator is taken)."
    )
    assert captured.err.count(notice) == 1
    document = json.loads(captured.out)
    assert [e["text"] for e in document["events"] if e["type"] == "Observation"] == ["four"]
