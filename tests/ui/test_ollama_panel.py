"""Ollama's own API in the window: a run with its thinking folded, the model list's sizes and
what is loaded, and Pull (progress, success, failure, Cancel), against tests/model_server/ollama.py
through the real ``ollama`` library."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from sandbox_app.ui.lane.backend_panel import BackendPanel
from sandbox_app.ui.lane.pull_bar import STEPS
from sandbox_app.ui.trace.highlighter import Role
from sandbox_app.ui.window.main_window import MainWindow
from tests.core.test_ollama_native import text_replies
from tests.model_server import LocalModel, ModelServer
from tests.model_server.ollama import fake_ollama
from tests.ui.test_thinking_runs import blocks
from tests.ui.test_window import run_and_wait

__all__ = ["fake_ollama"]


def on_ollama(panel: BackendPanel, server: ModelServer, model: str) -> None:
    panel.select("ollama-native", server.root)
    panel.model_combo.setCurrentText(model)


def test_a_run_on_ollamas_own_api_answers_with_its_thinking_folded(
    qtbot: QtBot, window: MainWindow, fake_ollama: ModelServer
) -> None:
    fake_ollama.add(LocalModel("qwen3:8b", loaded=False), text_replies())
    on_ollama(window.backend_panel, fake_ollama, "qwen3:8b")
    run_and_wait(qtbot, window)
    assert window.answer_label.text() == "$1,680 per year"
    thinking = blocks(window.trace, Role.THINKING)
    assert any("calculator[999 * 999]" in text for text, _ in thinking), thinking
    assert not any(visible for _, visible in thinking)  # folded once the model moved on
    assert not any("999" in text for text, _ in blocks(window.trace, Role.MODEL))


def test_the_model_list_says_each_models_size_and_whether_it_is_loaded(
    qtbot: QtBot, window: MainWindow, fake_ollama: ModelServer
) -> None:
    fake_ollama.add(LocalModel("qwen3:8b", size=5_225_376_047))
    fake_ollama.add(LocalModel("gemma3:1b", loaded=False, size=815_319_791))
    panel = window.backend_panel
    on_ollama(panel, fake_ollama, "")
    qtbot.mouseClick(panel.refresh_button, Qt.MouseButton.LeftButton)
    combo = panel.model_combo
    qtbot.waitUntil(lambda: combo.count() == 2, timeout=5000)
    tips = [str(combo.itemData(i, Qt.ItemDataRole.ToolTipRole)) for i in range(2)]
    assert [combo.itemText(i) for i in range(2)] == ["gemma3:1b", "qwen3:8b"]
    assert "gemma3:1b — 815 MB<" in tips[0]
    assert "qwen3:8b — 5.2 GB, loaded<" in tips[1]


def test_pull_is_only_for_a_kind_that_can(window: MainWindow, fake_ollama: ModelServer) -> None:
    panel = window.backend_panel
    on_ollama(panel, fake_ollama, "m")
    assert panel.pull_bar.button.isEnabled()
    panel.select("ollama", "")  # the OpenAI-compatible preset cannot pull
    assert not panel.pull_bar.isEnabled()


def test_pull_shows_its_progress_then_the_model_is_listed(
    qtbot: QtBot, window: MainWindow, fake_ollama: ModelServer
) -> None:
    fake_ollama.registry["qwen3:0.6b"] = 522_653_767
    window.column.bar.settings_button.click()  # open: the bar's hiding is then its own doing
    panel = window.backend_panel
    on_ollama(panel, fake_ollama, "qwen3:0.6b")
    bar = panel.pull_bar
    values: list[int] = []
    bar.bar.valueChanged.connect(values.append)
    qtbot.mouseClick(bar.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bar.status.text() == "Pulled qwen3:0.6b.", timeout=10000)
    # Empty at the start, a quarter of the layer at a time, reset once it is done.
    assert values == [0, STEPS // 4, STEPS // 2, 3 * STEPS // 4, STEPS, 0]
    assert (bar.button.text(), bar.bar.isVisible()) == ("Pull", False)
    # Listed without pressing Refresh: the panel asks the server again once a pull is done.
    qtbot.waitUntil(lambda: panel.model_combo.findText("qwen3:0.6b") >= 0, timeout=5000)


def test_a_pull_can_be_cancelled_and_the_server_sees_the_stream_closed(
    qtbot: QtBot, window: MainWindow, fake_ollama: ModelServer
) -> None:
    fake_ollama.registry["qwen3:30b"] = 18_556_701_338
    fake_ollama.hold_pull = True  # a download that goes on until it is hung up on
    window.column.bar.settings_button.click()  # the model's settings, where Pull is, open
    panel = window.backend_panel
    on_ollama(panel, fake_ollama, "qwen3:30b")
    bar = panel.pull_bar
    qtbot.mouseClick(bar.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bar.bar.value() > 0, timeout=10000)
    assert bar.button.text() == "Cancel"
    assert bar.bar.isVisible()
    assert bar.status.text().startswith("qwen3:30b: pulling a2af6cc3eb7f — 25% (4.6 GB of 18.6 GB)")
    qtbot.mouseClick(bar.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(fake_ollama.pull_closed.is_set, timeout=5000)
    qtbot.waitUntil(lambda: bar.status.text() == "Pull of qwen3:30b cancelled.", timeout=5000)
    assert (bar.button.text(), bar.bar.isVisible(), bar.bar.value()) == ("Pull", False, 0)


def test_a_failed_pull_is_one_line(
    qtbot: QtBot, window: MainWindow, fake_ollama: ModelServer
) -> None:
    panel = window.backend_panel
    on_ollama(panel, fake_ollama, "no-such-model")
    qtbot.mouseClick(panel.pull_bar.button, Qt.MouseButton.LeftButton)
    status = panel.pull_bar.status
    qtbot.waitUntil(lambda: status.text().startswith("⚠"), timeout=10000)
    assert status.text() == (
        f"⚠ Ollama at {fake_ollama.host_port} could not pull 'no-such-model': "
        "pull model manifest: file does not exist"
    )
    assert panel.pull_bar.button.text() == "Pull"
