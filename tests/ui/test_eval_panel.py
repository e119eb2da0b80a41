"""The compare view's Test set tab: every lane × case, a grid, a summary, Stop / Resume,
Re-run failed, a failure's recorded trace on a click, exports."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.core.scenarios.scenario_file import load_scenario, scenarios_dir
from sandbox_app.ui.window.main_window import MainWindow


def open_test_set(window: MainWindow, tokens_per_second: float = 0) -> None:
    scenario = load_scenario(scenarios_dir() / "test_set.json")
    window.set_scenario(
        replace(scenario, script=replace(scenario.script, tokens_per_second=tokens_per_second))
    )
    compare = window.compare
    compare.set_lanes((LaneConfig(), LaneConfig()))  # two offline lanes
    window.tabs.setCurrentWidget(compare)
    compare.results_tabs.setCurrentIndex(1)  # Test set


def cells(window: MainWindow) -> list[list[str]]:
    table = window.compare.eval_panel.grid
    return [
        [table.item(r, c).text() for c in range(1, table.columnCount())]  # type: ignore[union-attr]
        for r in range(table.rowCount())
    ]


def test_run_the_test_set_then_look_at_a_failure(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    open_test_set(window)
    panel = window.compare.eval_panel
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(panel.results) == 24 and not panel.running, timeout=20000)
    assert cells(window) == [["pass", "pass"]] * 11 + [["fail", "fail"]]
    assert "Lane 1 · scripted: 92% (11/12, 95% CI 65%–99%)" in panel.summary.text()
    panel.failures_only.setChecked(True)
    hidden = [panel.grid.isRowHidden(r) for r in range(12)]
    assert hidden == [True] * 11 + [False]
    # A click on the failed cell shows that recorded run in the lane's own trace.
    rect = panel.grid.visualItemRect(panel.grid.item(11, 2))
    qtbot.mouseClick(panel.grid.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    lane_two = window.compare.lanes[1].trace
    qtbot.waitUntil(lambda: "calculator[20 * 12 * 9]" in lane_two.plain_text())
    assert "Answer: $2,160 per year" in lane_two.plain_text()  # right, by a guess:
    # the cell says which checks of its path failed.
    tooltip = panel.grid.item(11, 2).toolTip()
    assert "$2,160 per year · ✗ tool used: search — search never called" in tooltip
    # Re-run failed runs only the two failures again.
    qtbot.mouseClick(panel.rerun_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not panel.running and panel.progress.maximum() == 2, timeout=10000)
    assert panel.progress.value() == 2
    # The re-runs replace the runs they repeat: still 12 runs a lane in the summary.
    assert "Lane 1 · scripted: 92% (11/12, 95% CI 65%–99%)" in panel.summary.text()
    markdown = panel.export_text("md")
    assert "| 12 | How much does Brightgrid Pro cost per year for a team of 9" in markdown
    assert (
        panel.export_text("csv").splitlines()[0] == "#,Question,Lane 1 · scripted,Lane 2 · scripted"
    )
    assert "<h2>Cases</h2>" in panel.export_text("html")
    assert window.compare.exports.export_to(tmp_path / "runs.json", "json", test_set=True)
    runs = json.loads((tmp_path / "runs.json").read_text(encoding="utf-8"))
    assert len(runs) == 24  # every run's latest result, traces included
    assert {"ActionParsed", "RunFinished"} <= {e["type"] for e in runs[0]["events"]}


def test_resume_after_a_complete_run_is_disabled_and_the_count_stays(
    qtbot: QtBot, window: MainWindow
) -> None:
    open_test_set(window)
    panel = window.compare.eval_panel
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(panel.results) == 24 and not panel.running, timeout=20000)
    assert panel.progress.text() == "24/24 runs"
    assert not panel.resume_button.isEnabled()  # nothing is left to resume
    panel.start("missing")  # asked for all the same: nothing starts, nothing blanks
    assert not panel.running
    assert panel.progress.text() == "24/24 runs"
    assert panel.status.text() == "Nothing left to run: every run has its verdict."


def test_stop_then_resume_runs_only_what_is_missing(qtbot: QtBot, window: MainWindow) -> None:
    open_test_set(window, tokens_per_second=400)
    panel = window.compare.eval_panel
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(panel.results) >= 2, timeout=20000)
    qtbot.mouseClick(panel.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not panel.running, timeout=5000)
    kept = panel.results.lookup(list(panel.grid_model.verdicts()))  # read back as stored
    assert 2 <= len(kept) < 24
    assert panel.status.text().startswith("stopped")
    assert panel.resume_button.isEnabled()
    qtbot.mouseClick(panel.resume_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not panel.running and len(panel.results) == 24, timeout=30000)
    assert panel.progress.maximum() == 24 - len(kept)
    assert panel.results.lookup(list(kept)) == kept  # kept as they were


def test_raising_repeat_after_a_complete_run_offers_resume_of_the_new_repeats(
    qtbot: QtBot, window: MainWindow
) -> None:
    """Resume follows the Repeat box: after 24/24 runs at Repeat 1, Repeat 2 leaves 24 to run
    (Resume on, and it runs just those), and back at 1 there is nothing left again."""
    open_test_set(window)
    panel, repeat = window.compare.eval_panel, window.compare.repeat_spin
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(panel.results) == 24 and not panel.running, timeout=20000)
    assert not panel.resume_button.isEnabled()
    repeat.setValue(2)
    assert panel.resume_button.isEnabled()
    repeat.setValue(1)
    assert not panel.resume_button.isEnabled()
    repeat.setValue(2)
    qtbot.mouseClick(panel.resume_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not panel.running and panel.grid_model.runs() == 48, timeout=30000)
    assert panel.progress.maximum() == 24
    assert not panel.resume_button.isEnabled()
