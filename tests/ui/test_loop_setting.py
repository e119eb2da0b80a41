"""Stop on loops in the window: the model panel's check box (a yes/no lane setting's row,
ui/lane/lane_settings_form.py) reaches the run, the record and the file; the loop notice shows
in the trace and the run ends with status "loop" in the answer header."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from PySide6.QtWidgets import QCheckBox
from pytestqt.qtbot import QtBot

from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.core.scenarios.lane_settings import LaneSettings
from sandbox_app.core.scenarios.scenario_file import load_scenario, scenarios_dir
from sandbox_app.ui.lane.backend_panel import BackendPanel
from sandbox_app.ui.window.main_window import MainWindow
from tests.ui.form_rows import setting_row


def _box(panel: BackendPanel) -> QCheckBox:
    return setting_row(panel, "stop_on_loops", "Stop on loops", QCheckBox)


def test_the_check_box_stops_a_looping_run_and_the_file_keeps_it(
    qtbot: QtBot, make_window: Callable[..., MainWindow], tmp_path: Path
) -> None:
    window = make_window()
    example = load_scenario(scenarios_dir() / "loops.json")
    window.set_scenario(example.with_changes(script=replace(example.script, tokens_per_second=0)))
    box = _box(window.backend_panel)
    assert not box.isChecked()  # the example's file says false
    box.click()  # as a click on its box does
    assert window.workspace.model.scenario.model.stop_on_loops is True
    window.start_run()
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=15000)
    record = window.run_pane.shown_record()
    assert record is not None
    assert record.finished is not None
    assert record.finished.status == "loop"
    assert record.settings.settings.stop_on_loops is True
    trace = window.run_pane.trace.plain_text()
    assert "loop: search[Brightgrid Pro Price] for the 3rd time" in trace
    assert window.run_pane.header.status.text().startswith("■ Stopped on a loop at step 3")
    assert window.files.save_to(tmp_path / "s.json")
    assert json.loads((tmp_path / "s.json").read_text())["model"]["stop_on_loops"] is True


def test_a_compare_lane_has_its_own_box(make_window: Callable[..., MainWindow]) -> None:
    window = make_window()
    lane = window.compare.lanes[0]
    _box(lane.backend_panel).setChecked(True)
    assert window.workspace.model.scenario.lanes[0].settings.stop_on_loops is True
    assert window.workspace.model.scenario.model.stop_on_loops is False  # the lane's own


def test_the_box_shows_what_it_was_given(qtbot: QtBot) -> None:
    panel = BackendPanel(KeyStore())
    qtbot.addWidget(panel)
    for shown in (LaneSettings(stop_on_loops=True), LaneSettings(stop_on_loops=False)):
        panel.set_sampling(shown)
        assert _box(panel).isChecked() is shown.stop_on_loops
        assert panel.choice().settings == shown
