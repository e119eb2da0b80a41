"""Your tools in the window: add a mock tool and run it, answer an ask-me call live, deny a
tool, the confirmation before a tool with side effects runs unasked, and a plugin's toggle."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.core.tools import plugins
from sandbox_app.core.tools.mock import MockToolSpec
from sandbox_app.ui.tools.approval import AskDialog
from sandbox_app.ui.window.main_window import MainWindow
from tests.helpers import builtin
from tests.model_server import ModelScript, ModelServer
from tests.plugin_install import plugin_site  # noqa: F401  (a fixture)

CALLS_WEATHER = ["Action: weather[Paris]", "Answer: done"]


def on_server(window: MainWindow, server: ModelServer, replies: list[str]) -> None:
    server.set_model("m", ModelScript(replies=replies))
    window.backend_panel.select("custom", server.base_url, "m")


def run_and_wait(qtbot: QtBot, window: MainWindow) -> str:
    window.start_run()
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=20000)
    return window.run_pane.trace.plain_text()


def add_weather(qtbot: QtBot, window: MainWindow, behaviour: str = "canned") -> None:
    editor = window.tool_panel.edit_tools()
    qtbot.waitUntil(editor.isVisible, timeout=2000)
    editor.add_tool()
    editor.name_edit.setText("weather")
    editor.description_edit.setPlainText("Today's weather for a city.")
    editor.hint_edit.setText("city")
    editor.behaviour_combo.setCurrentText(behaviour)
    editor.add_rule("contains", "paris", "18 °C, clear")
    editor.default_edit.setText("No forecast.")
    editor.accept()
    assert not editor.isVisible(), editor.message.text()


def test_add_a_mock_tool_and_run_it(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    add_weather(qtbot, window)
    scenario = window.current_scenario()
    assert [spec.name for spec in scenario.custom_tools] == ["weather"]
    assert "weather" in scenario.enabled_tools  # a new tool is on
    assert window.tool_panel.checkboxes["weather"].isChecked()
    assert window.tool_panel.policy_combos["weather"].currentText() == "auto"
    on_server(window, fake_server, CALLS_WEATHER)
    trace = run_and_wait(qtbot, window)
    assert "Observation: 18 °C, clear" in trace
    system = fake_server.requests[0]["messages"][0]["content"]
    assert "weather[city]: Today's weather for a city." in system


def test_a_bad_tool_is_one_line_and_the_editor_stays_open(qtbot: QtBot, window: MainWindow) -> None:
    editor = window.tool_panel.edit_tools()
    editor.add_tool()
    editor.name_edit.setText("search")
    editor.description_edit.setPlainText("Looks things up.")
    editor.accept()
    assert editor.isVisible()
    assert editor.message.text() == "⚠ search: \"name\" 'search' is taken by another tool."
    editor.reject()
    assert window.current_scenario().custom_tools == ()


def test_answer_an_ask_me_call_live(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    add_weather(qtbot, window, behaviour="ask")
    on_server(window, fake_server, CALLS_WEATHER)
    window.start_run()

    def asked() -> AskDialog | None:
        found = [w for w in QApplication.topLevelWidgets() if isinstance(w, AskDialog)]
        return next((w for w in found if w.isVisible()), None)

    qtbot.waitUntil(lambda: asked() is not None, timeout=10000)
    dialog = asked()
    assert dialog is not None
    assert "Paris" in dialog.prompt.text()
    dialog.answer_edit.setPlainText("Sunny, 21 °C")
    dialog.accept()
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=10000)
    assert "Observation: Sunny, 21 °C" in window.run_pane.trace.plain_text()


def test_deny_answers_the_model_without_running(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    window.tool_panel.policy_combos["search"].setCurrentText("deny")
    assert window.current_scenario().policies == {"search": "deny"}
    on_server(window, fake_server, ["Action: search[price]", "Answer: unknown"])
    trace = run_and_wait(qtbot, window)
    assert "Observation: Error: search may not be used in this run (its policy is deny)." in trace


def confirm(qtbot: QtBot, window: MainWindow, allow: bool) -> None:
    panel = window.tool_panel
    qtbot.waitUntil(lambda: panel.question is not None, timeout=2000)
    box = panel.question
    assert box is not None
    assert "has side effects" in box.text()
    wanted = "Allow without asking" if allow else "Keep asking"
    (button,) = [b for b in box.buttons() if b.text() == wanted]
    button.click()
    qtbot.waitUntil(lambda: panel.question is None, timeout=2000)


def test_auto_for_a_side_effecting_tool_needs_a_confirmation(
    qtbot: QtBot, window: MainWindow
) -> None:
    notify = MockToolSpec("notify", "Sends a note.", read_only=False, default="sent")
    scenario = builtin("brightgrid").with_changes(
        custom_tools=(notify,), enabled_tools=("search", "notify")
    )
    window.set_scenario(scenario)
    combo = window.tool_panel.policy_combos["notify"]
    assert combo.currentText() == "ask"  # its default
    combo.setCurrentText("auto")
    confirm(qtbot, window, allow=False)
    assert combo.currentText() == "ask"
    assert "notify" not in window.workspace.model.trusted
    combo.setCurrentText("auto")
    confirm(qtbot, window, allow=True)
    assert window.current_scenario().policies == {"notify": "auto"}
    assert "notify" in window.workspace.model.trusted


def test_a_file_that_says_auto_is_asked_about_once_when_opened(
    qtbot: QtBot, window: MainWindow
) -> None:
    notify = MockToolSpec("notify", "Sends a note.", read_only=False, default="sent")
    scenario = builtin("brightgrid").with_changes(
        custom_tools=(notify,), enabled_tools=("notify",), policies={"notify": "auto"}
    )
    window.set_scenario(scenario)
    confirm(qtbot, window, allow=False)
    assert window.current_scenario().policies == {"notify": "ask"}
    assert window.tool_panel.policy_combos["notify"].currentText() == "ask"


@pytest.fixture
def plugin_on_path(
    plugin_site: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[None]:
    monkeypatch.syspath_prepend(str(plugin_site))
    plugins.installed.cache_clear()
    yield
    plugins.installed.cache_clear()


def test_an_installed_plugin_is_a_toggle(
    qtbot: QtBot, plugin_on_path: None, window: MainWindow, fake_server: ModelServer
) -> None:
    assert "weather" in window.tool_panel.checkboxes
    # The window started although one plugin exits when imported (argparse at module level).
    assert "Plugin 'broken'" in window.statusBar().currentMessage()
    assert "Plugin 'exits_at_import'" in window.statusBar().currentMessage()
    window.tool_panel.checkboxes["weather"].setChecked(True)
    on_server(window, fake_server, CALLS_WEATHER)
    assert "Observation: 18 °C, clear" in run_and_wait(qtbot, window)


def test_lanes_use_the_scenarios_tools(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    add_weather(qtbot, window)
    fake_server.set_model("m", ModelScript(replies=CALLS_WEATHER))
    compare = window.compare
    compare.set_lanes((LaneConfig("custom", fake_server.base_url, "m"),) * 2)
    window.tabs.setCurrentWidget(compare)
    compare.run_all()
    qtbot.waitUntil(lambda: not compare.running, timeout=20000)
    for lane in compare.lanes:
        assert "Observation: 18 °C, clear" in lane.trace.plain_text()


def test_stop_ends_a_run_whose_plugin_tool_blocks_in_an_ordinary_function(
    qtbot: QtBot, plugin_on_path: None, window: MainWindow, fake_server: ModelServer
) -> None:
    """tests/plugin_hostile's sleeps blocks in a plain ``def run`` (time.sleep): on the
    window's loop it froze the window for the whole sleep, and Stop could not act until the
    observation was in. On its own thread, Stop ends the run while it sleeps: the run ends
    within a wait far shorter than the sleep (60 s; its daemon thread is left to finish it),
    however busy the machine, and never with the observation."""
    window.tool_panel.checkboxes["sleeps"].setChecked(True)
    on_server(window, fake_server, ["Action: sleeps[60]", "Answer: done"])
    window.start_run()
    qtbot.waitUntil(lambda: "Action: sleeps[60]" in window.run_pane.trace.plain_text())
    window.stop_run()

    def stopped() -> None:
        assert not window.run_pane.running, window.run_pane.trace.plain_text()[-300:]

    qtbot.waitUntil(stopped, timeout=20_000)
    trace = window.run_pane.trace.plain_text()
    assert "Stopped by the user." in trace
    assert "slept" not in trace
