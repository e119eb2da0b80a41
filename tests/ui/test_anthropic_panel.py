"""The model panel with the Anthropic (Claude) kind: its own URL, its Thinking budget and
Prompt cache rows, and a run with thinking against the local Messages API server."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QSpinBox
from pytestqt.qtbot import QtBot

from sandbox_app.ui.window.main_window import MainWindow
from tests.core.test_anthropic_kind import text_turns
from tests.model_server import ModelScript, ModelServer
from tests.model_server.anthropic import fake_anthropic
from tests.ui.form_rows import setting_row

__all__ = ["fake_anthropic"]


def test_the_anthropic_panel_shows_its_rows_and_runs_with_thinking(
    qtbot: QtBot,
    make_window: Callable[..., MainWindow],
    fake_anthropic: ModelServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    window = make_window()
    panel = window.backend_panel
    combo = panel.preset_combo
    combo.setCurrentIndex(combo.findData("anthropic"))
    assert combo.currentText() == "Anthropic (Claude)"
    assert panel.base_url_edit.text() == "https://api.anthropic.com"
    budget = setting_row(panel, "thinking_budget", "Thinking budget", QSpinBox)
    cache = setting_row(panel, "prompt_cache", "Prompt cache", QCheckBox)
    assert not budget.isHidden()
    assert not cache.isHidden()
    assert panel.settings_form.widgets["context_window"].isHidden()  # Ollama's, not Claude's
    fake_anthropic.set_model("claude-test", ModelScript(replies=text_turns()))
    panel.base_url_edit.setText(fake_anthropic.base_url)
    panel.base_url_edit.editingFinished.emit()
    panel.model_combo.setCurrentText("claude-test")
    budget.setValue(2048)
    qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "$1,680" in window.answer_label.text(), timeout=15000)
    assert fake_anthropic.requests[0]["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "Action: calculator[25 * 12 * 7]" in window.run_pane.trace.plain_text()
