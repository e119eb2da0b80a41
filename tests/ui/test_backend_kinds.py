"""The model panel lists a backend kind registered from a test module and shows the fields it
declares; a run on it, in the Run tab or a compare lane, answers. No other module is edited."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from sandbox_app.backends.registry import backend_ids
from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.ui.window.main_window import MainWindow
from tests.echo_kind import answer, registered


@pytest.fixture
def echo_window(make_window: Callable[..., MainWindow]) -> Iterator[MainWindow]:
    for _ in registered():  # before the window: its panels list the kinds when they are made
        yield make_window()


def test_the_panel_lists_a_registered_kind_with_the_fields_it_declares(
    qtbot: QtBot, echo_window: MainWindow
) -> None:
    panel = echo_window.backend_panel
    combo = panel.preset_combo
    assert combo.itemText(combo.count() - 1) == "Echo"  # listed by name, after the others
    combo.setCurrentIndex(combo.findData("echo"))
    # Echo declares a model and a temperature: no URL, no key, no model list, no timeout.
    assert panel.model_combo.isEnabled()
    assert panel.settings_form.widgets["temperature"].isEnabled()
    for off in (panel.base_url_edit, panel.key_edit, panel.remember_button, panel.refresh_button):
        assert not off.isEnabled()
    assert not panel.timeout_spin.isEnabled()
    assert panel.base_url_edit.text() == ""
    panel.model_combo.setCurrentText("m")
    qtbot.mouseClick(echo_window.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: echo_window.answer_label.text() == "echo from m", timeout=10000)
    assert answer("m") in echo_window.run_pane.trace.plain_text()
    # Back to a server: its fields come back.
    combo.setCurrentIndex(combo.findData("ollama"))
    assert panel.base_url_edit.isEnabled()
    assert panel.key_edit.isEnabled()
    assert panel.base_url_edit.text() == "http://localhost:11434/v1"


def test_a_compare_lane_of_a_registered_kind_from_a_file_runs_on_it(
    qtbot: QtBot, echo_window: MainWindow
) -> None:
    compare = echo_window.compare
    compare.set_lanes((LaneConfig("echo", model="a"), LaneConfig("echo", model="b")))
    echo_window.tabs.setCurrentWidget(compare)
    assert [lane.backend_panel.backend_id() for lane in compare.lanes] == ["echo", "echo"]
    assert [lane.config().model for lane in compare.lanes] == ["a", "b"]
    qtbot.mouseClick(compare.run_button, Qt.MouseButton.LeftButton)
    answers = ["echo from a", "echo from b"]
    qtbot.waitUntil(lambda: [lane.pane.answer_label.text() for lane in compare.lanes] == answers)


def test_a_kind_removed_is_no_longer_listed(make_window: Callable[..., MainWindow]) -> None:
    for _ in registered():  # registered, then removed: as the other tests' fixture does
        pass
    combo = make_window().backend_panel.preset_combo
    assert combo.findData("echo") == -1
    assert combo.itemData(combo.count() - 1) == backend_ids()[-1]  # the last kind still there
