"""What an audience reads off a run: right or wrong at a glance, the answer in view when a run
ends, the status bar's figures belonging to the run on screen, and no label left over from
another run, scenario or backend."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.core.scenarios.scenario import LaneConfig, Scenario
from sandbox_app.ui.common.theme import styles_for
from sandbox_app.ui.window.main_window import MainWindow
from tests.model_server import ModelServer
from tests.ui.test_eval_panel import open_test_set
from tests.ui.test_fork_and_inspect import run_on, wait_for_run
from tests.ui.test_window import fast

WRONG = "Thought: The calculator gave the total.\nAnswer: $1,260 per year"


def answering(answer_reply: str, tokens_per_second: float = 400) -> Scenario:
    """Brightgrid, its last reply replaced."""
    scenario = fast("brightgrid", tokens_per_second)
    replies = (*scenario.script.replies[:-1], answer_reply)
    return scenario.with_changes(script=replace(scenario.script, replies=replies))


def colour_of(label: QLabel) -> str:
    return label.palette().color(QPalette.ColorRole.WindowText).name()


def theme_colour(label: QLabel, style: str) -> str:
    return QColor(styles_for(label.palette())[style].color).name()


def run(qtbot: QtBot, window: MainWindow) -> None:
    window.start_run()
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=20000)


def test_a_wrong_answer_says_so_in_the_error_colour_and_a_right_one_says_correct(
    qtbot: QtBot, window: MainWindow
) -> None:
    window.set_scenario(answering(WRONG))
    run(qtbot, window)
    status = window.answer_status
    assert status.text() == "✘ Wrong (expected $1,680) · answered in 3 steps"
    assert colour_of(status) == theme_colour(status, "error")
    assert colour_of(window.answer_label) == theme_colour(status, "error")
    window.set_scenario(fast("brightgrid"))
    run(qtbot, window)
    assert status.text() == "✔ Correct · answered in 3 steps"
    assert colour_of(status) == theme_colour(status, "answer")
    # A lane says the same: the right lane and the wrong one no longer look alike.
    window.set_scenario(answering(WRONG))
    compare = window.compare
    compare.set_lanes((LaneConfig(), LaneConfig()))
    window.tabs.setCurrentWidget(compare)
    compare.run_all()
    qtbot.waitUntil(lambda: not compare.running and bool(compare.lanes[0].status.text()))
    lane_status = compare.lanes[0].status
    assert lane_status.text() == "✘ Wrong (expected $1,680) · answered in 3 steps"
    assert colour_of(lane_status) == theme_colour(lane_status, "error")


def test_the_end_of_the_trace_stays_in_view_when_the_answer_appears(
    qtbot: QtBot, window: MainWindow
) -> None:
    scenario = fast("brightgrid")
    long_thought = "".join(f"I weigh point {n}.\n" for n in range(60))  # more than fits
    replies = (long_thought + scenario.script.replies[0], *scenario.script.replies[1:])
    window.set_scenario(scenario.with_changes(script=replace(scenario.script, replies=replies)))
    run(qtbot, window)
    window.trace.flush_all()
    bar = window.trace.verticalScrollBar()
    qtbot.waitUntil(lambda: window.answer_label.isVisible())
    assert bar.maximum() > 0
    assert bar.value() == bar.maximum()  # the last line, and the answer above, in view


def test_the_status_bar_shows_the_figures_of_the_run_on_screen(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    shown: list[str] = []
    window.run_pane.metricsChanged.connect(shown.append)
    run_on(qtbot, window, fake_server)
    pane, metrics = window.run_pane, window.metrics_label
    first = pane.history[0].finished
    assert first is not None
    # While it ran, its tool calls were counted: step 1 called one.
    assert next(line for line in shown if line.startswith("1 step ·")).startswith(
        "1 step · 1 tool call ·"
    )
    window.backend_panel.select("custom", fake_server.base_url, "other")
    assert pane.fork(1)
    assert metrics.text() == ""  # the last run's figures are not the new run's
    wait_for_run(qtbot, window)
    second = pane.history[1].finished
    assert second is not None
    assert metrics.text() == second.metrics.summary() != first.metrics.summary()
    pane.run_picker.setCurrentIndex(0)
    pane.run_picker.activated.emit(0)  # the user picks Run 1 again
    assert metrics.text() == first.metrics.summary()
    window.tabs.setCurrentWidget(window.compare)  # the lanes' figures are in their table
    assert metrics.text() == ""
    window.tabs.setCurrentIndex(0)
    assert metrics.text() == first.metrics.summary()


def test_opening_another_scenario_clears_the_last_ones_run(
    qtbot: QtBot, window: MainWindow
) -> None:
    window.set_scenario(fast("brightgrid"))
    run(qtbot, window)
    assert window.answer_label.isVisible()
    window.set_scenario(fast("calculator_chain"))
    assert window.trace.plain_text() == ""
    assert not window.answer_label.isVisible()
    assert window.run_pane.history.latest is None
    assert window.metrics_label.text() == ""


def test_a_test_set_cell_is_shown_through_its_lane(qtbot: QtBot, window: MainWindow) -> None:
    open_test_set(window)
    panel = window.compare.eval_panel
    panel.start("all")
    qtbot.waitUntil(lambda: len(panel.results) == 24 and not panel.running, timeout=20000)
    panel.grid.cellClicked.emit(11, 2)  # the failed case, lane 2
    pane = window.compare.lanes[1].pane
    assert pane.run_picker.currentText() == "Test set: case 12, repeat 1"
    assert pane.answer_label.text() == "$2,160 per year"
    # The answer is right (the cell failed on its path: the grid's tooltip says so).
    assert pane.answer_status.text().startswith("✔ Correct")
    record = pane.shown_record()
    assert record is not None
    assert record.finished is not None
    assert record.finished.answer == "$2,160 per year"  # Inspect, Fork, Copy act on it


def test_a_replayed_recording_shows_its_own_model(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer, tmp_path: Path
) -> None:
    run_on(qtbot, window, fake_server)  # model "first" on the test server
    path = tmp_path / "one.json"
    assert window.recordings.save_to(path)
    window.backend_panel.select("scripted")
    window.recordings.set_speed(0.0)
    window.presenter.set_on(True)
    assert window.recordings.play(path)
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=20000)
    assert window.backend_panel.choice().model == "first"
    assert " · first · " in window.presenter.summary.text()
    window.presenter.set_on(False)
    window.start_run()  # a run of its own: the user's choice again
    assert window.backend_panel.backend_id() == "scripted"
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=20000)


def test_a_backend_keeps_its_url_and_model_when_switched_away_and_back(
    qtbot: QtBot, window: MainWindow, settings: QSettings
) -> None:
    panel = window.backend_panel
    panel.select("custom", "http://127.0.0.1:9/v1", "my-model")
    panel.select("scripted")
    panel.select("custom")
    assert (panel.base_url_edit.text(), panel.choice().model) == (
        "http://127.0.0.1:9/v1",
        "my-model",
    )
    panel.select("scripted")
    window.save_settings()
    again = MainWindow(settings, KeyStore())  # the next start remembers it too
    qtbot.addWidget(again)
    again.backend_panel.select("custom")
    assert (again.backend_panel.base_url_edit.text(), again.backend_panel.choice().model) == (
        "http://127.0.0.1:9/v1",
        "my-model",
    )
