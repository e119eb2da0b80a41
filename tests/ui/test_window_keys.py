"""The key rule in the window: the main run, a restart and every compare lane."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from sandbox_app.core.scenario import LaneConfig
from sandbox_app.ui.main_window import MainWindow
from tests.fakeserver import FakeOpenAIServer, ModelScript

ANSWER = ["Thought: easy.\nAnswer: 4"]


def run_and_wait(qtbot: QtBot, window: MainWindow) -> None:
    qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.controller.running, timeout=2000)
    qtbot.waitUntil(lambda: not window.controller.running, timeout=15000)
    assert window.answer_label.text() == "4", window.answer_status.text()


@pytest.fixture
def provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    monkeypatch.setenv("GROQ_API_KEY", "gsk-groq-secret")
    monkeypatch.delenv("REACT_SANDBOX_API_KEY", raising=False)


@pytest.mark.usefixtures("provider_keys")
def test_editing_the_openai_presets_url_never_sends_the_openai_key(
    qtbot: QtBot, make_window: Callable[..., MainWindow], fake_server: FakeOpenAIServer
) -> None:
    fake_server.set_model("m", ModelScript(replies=ANSWER, cycle=True))
    first = make_window()
    first.set_scenario(first.scenario.with_changes(question="What is 2 + 2?"))
    panel = first.backend_panel
    panel.select("OpenAI")
    assert panel.key_status.text() == "Key from the environment (OPENAI_API_KEY)."
    panel.base_url_edit.setText(fake_server.base_url)
    panel.model_combo.setCurrentText("m")
    assert "The OpenAI key goes only to api.openai.com" in panel.key_status.text()
    run_and_wait(qtbot, first)
    first.close()  # the preset and the edited URL are saved: the next start repeats them
    second = make_window()
    assert second.backend_panel.preset_combo.currentText() == "OpenAI"
    assert second.backend_panel.base_url_edit.text() == fake_server.base_url
    run_and_wait(qtbot, second)
    assert fake_server.authorizations == ["Bearer not-needed"] * 2


@pytest.mark.usefixtures("provider_keys")
def test_a_key_typed_for_one_host_stays_with_that_host(
    qtbot: QtBot, window: MainWindow, fake_server: FakeOpenAIServer
) -> None:
    fake_server.set_model("m", ModelScript(replies=ANSWER, cycle=True))
    window.set_scenario(window.scenario.with_changes(question="What is 2 + 2?"))
    panel = window.backend_panel
    panel.select("Custom URL", fake_server.base_url, "m")
    panel.key_edit.setText("sk-typed-for-the-test-server")
    run_and_wait(qtbot, window)
    panel.base_url_edit.setText("http://127.0.0.1:9/v1")  # another host: the field empties
    assert panel.key_edit.text() == ""
    panel.base_url_edit.setText(fake_server.base_url)  # back: the typed key comes back
    assert panel.key_edit.text() == "sk-typed-for-the-test-server"
    assert fake_server.authorizations == ["Bearer sk-typed-for-the-test-server"]


@pytest.mark.usefixtures("provider_keys")
def test_compare_lanes_follow_the_same_rule(
    qtbot: QtBot, window: MainWindow, fake_server: FakeOpenAIServer
) -> None:
    fake_server.set_model("m", ModelScript(replies=ANSWER, cycle=True))
    window.set_scenario(window.scenario.with_changes(question="What is 2 + 2?"))
    compare = window.compare
    compare.set_lanes(
        (
            LaneConfig("OpenAI", fake_server.base_url, "m"),
            LaneConfig("Groq", fake_server.base_url, "m"),
        )
    )
    window.tabs.setCurrentWidget(compare)
    qtbot.mouseClick(compare.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: compare.running, timeout=2000)
    qtbot.waitUntil(lambda: not compare.running, timeout=20000)
    assert [lane.record.runs[-1].answer for lane in compare.lanes] == ["4", "4"]
    assert fake_server.authorizations == ["Bearer not-needed"] * 2
