"""The request inspector shows what a native tool-calling run sent back to a model that requires
its reasoning (backends/transport/passback.py), exactly as the server received it."""

from __future__ import annotations

import json

from pytestqt.qtbot import QtBot

from sandbox_app.ui.window.main_window import MainWindow
from tests.core.test_passback import FIRST_THOUGHT, script_for
from tests.model_server import ModelServer


def test_the_inspector_shows_the_reasoning_sent_back(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    fake_server.set_model("deepseek-reasoner", script_for("deepseek"))
    window.backend_panel.select("custom", fake_server.base_url, "deepseek-reasoner")
    combo = window.backend_panel.settings_form.widgets["tool_calling"]
    combo.setCurrentIndex(combo.findData("native"))
    window.start_run()
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=20000)
    assert fake_server.stats["errors"] == 0
    assert len(fake_server.requests) == 3, window.run_pane.trace.plain_text()[-400:]
    dialog = window.run_pane.inspect(2)
    assert dialog is not None
    shown = json.loads(dialog.text.toPlainText())["request"]
    assert shown["messages"] == fake_server.requests[1]["messages"]
    (sent_back,) = [m for m in shown["messages"] if m.get("tool_calls")]
    assert sent_back["reasoning_content"] == FIRST_THOUGHT
    assert FIRST_THOUGHT in dialog.text.toPlainText()
