"""The window keeps the prompt versions it runs: an edit then a Run adds one, a Run without an
edit adds none, a compare lane's run counts too, and the history is saved with the file."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from pytestqt.qtbot import QtBot

from sandbox_app.core.scenarios.lane_settings import LaneSettings
from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.core.scenarios.scenario_file import load_scenario, scenarios_dir
from sandbox_app.ui.window.main_window import MainWindow


def run_and_wait(qtbot: QtBot, window: MainWindow) -> None:
    qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.controller.running, timeout=2000)
    qtbot.waitUntil(lambda: not window.controller.running, timeout=15000)


def type_at_end(window: MainWindow, text: str) -> None:
    """An edit in the Template tab, as typing it at the end would make."""
    edit = window.prompt_panel.template_edit
    cursor = edit.textCursor()
    cursor.movePosition(QTextCursor.MoveOperation.End)
    cursor.insertText(text)
    edit.setTextCursor(cursor)


def history(window: MainWindow) -> list[tuple[str, int]]:
    """(the template's last line, runs) of each version, oldest first."""
    entries = window.workspace.model.scenario.prompt_history
    return [(e.version.template.splitlines()[-1], e.runs) for e in entries]


def test_two_edits_and_runs_make_two_versions_and_a_run_without_an_edit_none(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    scenario = load_scenario(scenarios_dir() / "brightgrid.json")
    window.set_scenario(replace(scenario, script=replace(scenario.script, tokens_per_second=0)))
    assert history(window) == []
    type_at_end(window, "\nBe brief.")
    run_and_wait(qtbot, window)
    assert history(window) == [("Be brief.", 1)]
    run_and_wait(qtbot, window)  # no edit: the same version, run twice
    assert history(window) == [("Be brief.", 2)]
    type_at_end(window, " Cite the search.")
    run_and_wait(qtbot, window)
    assert history(window) == [("Be brief.", 2), ("Be brief. Cite the search.", 1)]
    # The run's record names the version it used, the history's last.
    last = window.workspace.model.scenario.prompt_history[-1]
    assert window.run_pane.history[-1].settings.prompt_version == last.id
    # Saved with the file, and back when it is opened again.
    path = tmp_path / "mine.json"
    window.workspace.model.save(path)
    assert [e.id for e in load_scenario(path).prompt_history] == [
        e.id for e in window.workspace.model.scenario.prompt_history
    ]


def test_compare_lanes_record_their_versions_each_with_its_tool_calling(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    scenario = load_scenario(scenarios_dir() / "brightgrid.json")
    window.set_scenario(replace(scenario, script=replace(scenario.script, tokens_per_second=0)))
    compare = window.compare
    native = LaneSettings(tool_calling="native")
    compare.set_lanes((LaneConfig(), LaneConfig(settings=native)))
    window.tabs.setCurrentWidget(compare)
    assert window.files.save_to(tmp_path / "lanes.json")
    qtbot.mouseClick(compare.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: compare.running, timeout=2000)
    qtbot.waitUntil(lambda: not compare.running, timeout=15000)
    entries = {e.version.tool_calling: e for e in window.workspace.model.scenario.prompt_history}
    assert sorted((mode, e.runs) for mode, e in entries.items()) == [("native", 1), ("react", 1)]
    recorded = [lane.pane.history[-1].settings.prompt_version for lane in compare.lanes]
    assert recorded == [entries["react"].id, entries["native"].id]
    # Running is not editing: no Save prompt for having pressed Run; the next Save keeps it.
    assert not window.modified
    assert window.files.save_to(tmp_path / "lanes.json")
    assert len(load_scenario(tmp_path / "lanes.json").prompt_history) == 2
