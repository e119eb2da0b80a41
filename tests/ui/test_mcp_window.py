"""MCP servers in the window: add a server, Connect, its tools become toggles and run in the
loop; a server that cannot start is one line in the dialog."""

from __future__ import annotations

import asyncio
import json
import sys

from pytestqt.qtbot import QtBot

from sandbox_app.core.scenario_file import scenario_to_dict
from sandbox_app.ui.main_window import MainWindow
from tests.core.test_mcp import SERVER
from tests.fakeserver import FakeOpenAIServer, ModelScript


def close_connections(qtbot: QtBot, window: MainWindow) -> None:
    closing = asyncio.ensure_future(window.tool_panel.mcp.close_all())
    qtbot.waitUntil(closing.done, timeout=10000)


def test_connect_a_server_and_run_its_tool(
    qtbot: QtBot, window: MainWindow, fake_server: FakeOpenAIServer
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
