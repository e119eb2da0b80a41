"""The Test set panel holds no run's record: each run's result and trace are read back from
the history database when a cell is clicked, a tooltip shows or an export is written; Open in
grid reads a past evaluation's summary rows, no trace until a cell is clicked; with history
off, the runs are kept in memory and a click still shows the trace."""

from __future__ import annotations

import gc
import json
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from pytestqt.qtbot import QtBot

from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.running.records import RunRecord
from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.ui.history.history_actions import database_path
from sandbox_app.ui.window.main_window import MainWindow
from tests.ui.test_eval_panel import cells, open_test_set
from tests.ui.test_history_view import run_test_set


def records_alive() -> int:
    """Run records anywhere in the process (a record held by the panel is one of them)."""
    gc.collect()
    return sum(isinstance(thing, RunRecord) for thing in gc.get_objects())


def click(qtbot: QtBot, window: MainWindow, row: int, column: int) -> None:
    grid = window.compare.eval_panel.grid
    rect = grid.visualItemRect(grid.item(row, column))  # type: ignore[arg-type]
    qtbot.mouseClick(grid.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_a_finished_test_set_holds_no_record_yet_shows_and_exports_every_trace(
    qtbot: QtBot, window: MainWindow, settings: QSettings, tmp_path: Path
) -> None:
    open_test_set(window)
    panel = window.compare.eval_panel
    before = records_alive()
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(panel.results) == 24 and not panel.running, timeout=20000)
    assert records_alive() == before  # 24 runs ended, none of their records kept
    assert panel.results.kept == 0
    assert cells(window) == [["pass", "pass"]] * 11 + [["fail", "fail"]]
    # A click reads that run's trace from the database and shows it in its lane.
    click(qtbot, window, 11, 2)
    lane_two = window.compare.lanes[1].trace
    qtbot.waitUntil(lambda: "calculator[20 * 12 * 9]" in lane_two.plain_text())
    assert "Answer: $2,160 per year" in lane_two.plain_text()
    # Shown as the run ended: its case's expected answer judges it, its model named.
    pane = window.compare.lanes[1].pane
    assert pane.header.status.text().startswith("✔ Correct")
    shown = pane.shown_record()
    assert shown is not None
    assert shown.settings.backend
    assert shown.settings.prompt_version
    assert "✗ tool used: search" in panel.grid.item(11, 2).toolTip()  # type: ignore[union-attr]
    # The JSON export carries each run's events exactly as they were stored.
    assert window.compare.exports.export_to(tmp_path / "runs.json", "json", test_set=True)
    runs = json.loads((tmp_path / "runs.json").read_text(encoding="utf-8"))
    assert len(runs) == 24
    store = HistoryStore(database_path(settings))  # type: ignore[arg-type]
    (evaluation,) = store.evaluations()
    stored = {(r.lane, r.case, r.repeat): r.events for r in store.results(1, events=True)}
    assert evaluation.runs == 24
    for run in runs:
        assert run["events"] == list(stored[run["lane"], run["case"], run["repeat"]] or ())
        assert {"ActionParsed", "RunFinished"} <= {event["type"] for event in run["events"]}


def test_open_in_grid_reads_no_trace_until_a_cell_is_clicked(
    qtbot: QtBot, make_window: Callable[[], MainWindow]
) -> None:
    first = make_window()
    run_test_set(qtbot, first, "brief")
    run_test_set(qtbot, first, "grounded")
    # Another window on the same settings (a restart): its panel has shown nothing yet.
    window = make_window()
    window.set_scenario(first.workspace.model.scenario)
    window.compare.set_lanes((LaneConfig(), LaneConfig()))
    view = window.history.open_view()
    view.select(1)
    before = records_alive()
    qtbot.mouseClick(view.open_button, Qt.MouseButton.LeftButton)
    panel = window.compare.eval_panel
    qtbot.waitUntil(lambda: panel.status.text().startswith("#1 · "))
    assert cells(window) == [["fail", "fail"], ["pass", "pass"], ["pass", "pass"], ["fail", "fail"]]
    assert records_alive() == before  # eight runs on screen, not one trace read
    assert "About $2,160 per year" in panel.grid.item(0, 1).toolTip()  # type: ignore[union-attr]
    view.close()
    # A click reads that one run's trace: evaluation 1's, though evaluation 2 is newer.
    click(qtbot, window, 0, 1)
    lane_one = window.compare.lanes[0].trace
    qtbot.waitUntil(lambda: "About $2,160 per year" in lane_one.plain_text())
    # Re-run failed from here (the scenario is at grounded now: case 1 passes): the re-runs
    # are a new evaluation, shown over the past one, each replacing the run it repeats.
    qtbot.mouseClick(panel.rerun_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not panel.running and panel.progress.value() == 4, timeout=20000)
    assert cells(window) == [["pass", "pass"], ["pass", "pass"], ["pass", "pass"], ["fail", "fail"]]
    assert "Lane 1 · scripted: 75% (3/4," in panel.summary.text()  # still four runs a lane
    assert len(json.loads(panel.export_text("json"))) == 8


def test_with_history_off_the_runs_are_kept_and_a_click_still_shows_the_trace(
    qtbot: QtBot, window_without_history: MainWindow, tmp_path: Path
) -> None:
    window = window_without_history
    open_test_set(window)
    panel = window.compare.eval_panel
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(panel.results) == 24 and not panel.running, timeout=20000)
    assert window.statusBar().currentMessage().startswith("history off (")
    assert panel.results.kept == 24  # no database to read them back from: kept here
    click(qtbot, window, 11, 2)
    lane_two = window.compare.lanes[1].trace
    qtbot.waitUntil(lambda: "calculator[20 * 12 * 9]" in lane_two.plain_text())
    runs = json.loads(panel.export_text("json"))
    assert len(runs) == 24
    assert all(run["events"] for run in runs)
    assert (tmp_path / "damaged.sqlite3").read_bytes() == b"\x00not a database" * 300  # untouched
