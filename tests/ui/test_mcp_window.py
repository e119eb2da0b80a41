"""MCP servers in the window: add a server, Connect, its tools become toggles and run in the
loop; a server that cannot start is one line in the dialog, and so is one that dies (then the
button reads Reconnect); a tool renamed for a taken name is said once; trust follows the
program, not the name."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.scenarios.scenario_file import scenario_to_dict
from sandbox_app.core.tools.mcp_server import McpServerSpec
from sandbox_app.ui.tools.mcp_servers import McpServersDialog
from sandbox_app.ui.window.main_window import MainWindow
from tests.core.test_mcp import SERVER, free_port, serving_http
from tests.model_server import ModelScript, ModelServer


def close_connections(qtbot: QtBot, window: MainWindow) -> None:
    closing = asyncio.ensure_future(window.tool_panel.mcp.close_all())
    qtbot.waitUntil(closing.done, timeout=10000)


def test_connect_a_server_and_run_its_tool(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    panel = window.tool_panel
    dialog = panel.edit_servers()
    dialog.add_server()
    dialog.name_edit.setText("geo")
    dialog.where_edit.setText(f"{sys.executable} {SERVER}")
    assert dialog.server_list.item(0).text() == "geo"  # type: ignore[union-attr]
    try:
        task = dialog.connect_current()
        assert task is not None
        qtbot.waitUntil(task.done, timeout=30000)
        assert dialog.status.text() == "connected: 7 tools"
        dialog.accept()
        (server,) = window.current_scenario().mcp_servers
        assert (server.name, server.command, server.args) == ("geo", sys.executable, (str(SERVER),))
        # Each of its tools is a toggle with its policy: all ask, whatever the server says…
        assert panel.policy_combos["capital"].currentText() == "ask"
        assert panel.policy_combos["secret"].currentText() == "ask"
        # …until the user trusts its read-only hints: then those tools are auto.
        dialog = panel.edit_servers()
        assert not dialog.trust_box.isChecked()
        dialog.trust_box.setChecked(True)
        assert panel.policy_combos["capital"].currentText() == "auto"
        assert panel.policy_combos["secret"].currentText() == "ask"
        dialog.accept()
        # Trust lives in the session, never in the scenario's file.
        assert "trust" not in json.dumps(scenario_to_dict(window.current_scenario())).lower()
        panel.checkboxes["capital"].setChecked(True)
        fake_server.set_model("m", ModelScript(replies=["Action: capital[Japan]", "Answer: Tokyo"]))
        window.backend_panel.select("custom", fake_server.base_url, "m")
        window.start_run()
        qtbot.waitUntil(lambda: not window.run_pane.running, timeout=20000)
        assert "Observation: Tokyo" in window.run_pane.trace.plain_text()
    finally:
        close_connections(qtbot, window)
    assert "capital" not in panel.checkboxes  # closed: its tools are gone


def test_a_server_that_cannot_start_is_one_line(qtbot: QtBot, window: MainWindow) -> None:
    dialog = window.tool_panel.edit_servers()
    dialog.add_server()
    dialog.name_edit.setText("nope")
    dialog.where_edit.setText("/no/such/program --flag")
    task = dialog.connect_current()
    assert task is not None
    qtbot.waitUntil(task.done, timeout=30000)
    assert dialog.status.text() == (
        "⚠ MCP server nope (/no/such/program --flag) failed: cannot start "
        "'/no/such/program' (not found)."
    )
    dialog.where_edit.setText("")
    assert dialog.connect_current() is None
    assert dialog.message.text() == (
        '⚠ "tools.mcp[0]" needs a "command" (stdio) or a "url" (HTTP), not both.'
    )


def run_tool(qtbot: QtBot, window: MainWindow, name: str, input: str) -> str:
    """What the connected tool ``name`` answers, as a run would call it; the wait is far
    shorter than the server's timeout, so a call left hanging fails here."""
    (tool,) = [t for t in window.tool_panel.mcp.workspace.model.sources if t.name == name]
    call: asyncio.Future[str] = asyncio.ensure_future(tool.run(input))
    qtbot.waitUntil(call.done, timeout=10000)
    return call.result()


def http_server_in_dialog(window: MainWindow) -> tuple[McpServersDialog, str, int]:
    """The MCP dialog with one server, "web", over HTTP on a free port, not yet connected."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    dialog = window.tool_panel.edit_servers()
    dialog.add_server()
    dialog.name_edit.setText("web")
    dialog.where_edit.setText(url)
    return dialog, url, port


def connect_shown(qtbot: QtBot, dialog: McpServersDialog, tools: int = 7) -> None:
    """Connect the shown server and wait until it is connected with ``tools`` tools."""
    task = dialog.connect_current()
    assert task is not None
    qtbot.waitUntil(task.done, timeout=30000)
    assert dialog.status.text().splitlines()[0] == f"connected: {tools} tools"
    assert dialog.connect_button.text() == "Connect"


def test_a_server_gone_over_http_says_so_and_reconnects(qtbot: QtBot, window: MainWindow) -> None:
    dialog, url, port = http_server_in_dialog(window)
    dialog.timeout_spin.setValue(60)  # a call left pending would take a minute to fail
    try:
        with serving_http(port) as process:
            connect_shown(qtbot, dialog)
            process.kill()
            process.wait(timeout=10)
            answer = run_tool(qtbot, window, "capital", "France")
        gone = f"MCP server web ({url}) is gone: connection refused; reconnect it in MCP servers…"
        assert answer == f"Error: {gone}"
        # The open dialog says so by itself, and offers to reconnect.
        qtbot.waitUntil(lambda: dialog.status.text() == f"⚠ {gone}", timeout=5000)
        assert dialog.connect_button.text() == "Reconnect"
        assert run_tool(qtbot, window, "capital", "Norway") == f"Error: {gone}"  # still gone
        with serving_http(port):  # the server is back: Reconnect brings its tools back
            connect_shown(qtbot, dialog)
            assert run_tool(qtbot, window, "capital", "Japan") == "Tokyo"
    finally:
        close_connections(qtbot, window)


def test_a_server_that_dies_while_idle_is_shown_gone(
    qtbot: QtBot, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No run calls it: the connection's own ping finds it gone and the dialog says so."""
    watch = "sandbox_app.backends.mcp_client.mcp_tools.WATCH_EVERY_S"
    monkeypatch.setattr(watch, 0.2, raising=False)
    dialog, url, port = http_server_in_dialog(window)
    try:
        with serving_http(port) as process:
            connect_shown(qtbot, dialog)
            process.kill()
            process.wait(timeout=10)
            reconnect = "reconnect it in MCP servers…"
            gone = f"⚠ MCP server web ({url}) is gone: connection refused; {reconnect}"
            qtbot.waitUntil(lambda: dialog.status.text() == gone, timeout=10000)
            assert dialog.connect_button.text() == "Reconnect"
    finally:
        close_connections(qtbot, window)


def test_a_renamed_tool_is_said_once_in_its_servers_status(
    qtbot: QtBot, window: MainWindow
) -> None:
    dialog = window.tool_panel.edit_servers()
    dialog.add_server()
    dialog.name_edit.setText("evaltools")
    dialog.where_edit.setText(f"{sys.executable} {SERVER} --clash")
    try:
        task = dialog.connect_current()
        assert task is not None
        qtbot.waitUntil(task.done, timeout=30000)
        assert dialog.status.text() == (
            "connected: 8 tools\n"
            "Tool calculator of evaltools is offered as evaltools_calculator "
            "(calculator is taken)."
        )
        assert run_tool(qtbot, window, "evaltools_calculator", "two plus two") == "four"
    finally:
        close_connections(qtbot, window)


def test_another_file_naming_another_program_alike_gets_no_trust(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    """Trust follows the program, not the name: "geo" is trusted in one file; the next file
    names another program "geo". Its opening drops the old connection (its tools leave the
    toggles at once), the box is unticked, and after Connect the new program's wipe (a
    read-only hint, a lie) asks."""
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    for path, args in ((first, (str(SERVER),)), (second, (str(SERVER), "--hostile"))):
        server = McpServerSpec("geo", sys.executable, args, timeout_s=5.0)
        scenario = Scenario(title=path.stem, mcp_servers=(server,))
        path.write_text(json.dumps(scenario_to_dict(scenario)), encoding="utf-8")
    panel = window.tool_panel
    try:
        assert window.files.open_scenario(first)
        dialog = panel.edit_servers()
        connect_shown(qtbot, dialog)
        dialog.trust_box.setChecked(True)
        dialog.accept()
        assert panel.policy_combos["capital"].currentText() == "auto"  # trusted: runs unasked
        assert window.files.open_scenario(second)
        assert "capital" not in panel.checkboxes  # gone with its connection, before any run
        assert panel.mcp.set.names() == []
        dialog = panel.edit_servers()
        assert dialog.status.text() == "not connected"
        assert not dialog.trust_box.isChecked()
        connect_shown(qtbot, dialog, tools=10)
        assert panel.policy_combos["wipe"].currentText() == "ask"  # its hints: asking
        assert panel.policy_combos["capital"].currentText() == "ask"
        dialog.reject()
        # The first file's program again: its trust went when the other file was opened.
        assert window.files.open_scenario(first)
        dialog = panel.edit_servers()
        assert not dialog.trust_box.isChecked()
        dialog.reject()
    finally:
        close_connections(qtbot, window)
