"""The offline model is honest about its replies (issue 34, item 7): comparing prompt
versions on it, each lane's header and each trace say whether the replies were written for
the version run or are the same for every prompt."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from sandbox_app.core.scenarios.scenario import LaneConfig, LaneSettings
from sandbox_app.core.scenarios.scenario_file import load_scenario, scenarios_dir
from sandbox_app.ui.trace.trace_view import TraceView
from sandbox_app.ui.window.main_window import MainWindow

SAME_REPLIES = "offline: the same replies for every prompt (none written for this version)"
IMPROVED = "You are exact. Look every price up with search.\n{tools}\n{format}"


def open_variants(window: MainWindow) -> None:
    scenario = load_scenario(scenarios_dir() / "prompt_variants.json")
    window.set_scenario(replace(scenario, script=replace(scenario.script, tokens_per_second=0)))


def lines(trace: TraceView) -> list[str]:
    trace.flush_all()
    return trace.toPlainText().splitlines()


def test_each_lane_says_whether_its_replies_were_written_for_its_version(
    qtbot: QtBot, window: MainWindow
) -> None:
    open_variants(window)
    window.prompt_panel.template_edit.setPlainText(IMPROVED)  # an edit no reply was written for
    compare = window.compare
    compare.set_lanes(
        (
            LaneConfig("scripted", settings=LaneSettings(prompt="brief")),
            LaneConfig("scripted", settings=LaneSettings(prompt="grounded")),
            LaneConfig("scripted"),  # the editor's improved prompt
        )
    )
    window.tabs.setCurrentWidget(compare)
    qtbot.mouseClick(compare.run_button, Qt.MouseButton.LeftButton)
    lanes = compare.lanes
    qtbot.waitUntil(lambda: all(len(lane.record.runs) == 1 for lane in lanes), timeout=15000)
    qtbot.waitUntil(lambda: not compare.running, timeout=15000)
    headers = [lane.prompt_label.text() for lane in compare.lanes]
    # The version first, then the offline model's word on its replies.
    assert headers[0].startswith("ran prompt brief (")
    assert headers[0].endswith(" · offline replies written for brief")
    assert headers[1].endswith(" · offline replies written for grounded")
    assert headers[2].startswith("ran prompt ")
    assert headers[2].endswith(" · " + SAME_REPLIES)
    # The improved prompt "guessed $2,160" with replies not written for it: its trace says so
    # before its first step.
    assert lines(compare.lanes[2].trace)[0] == SAME_REPLIES


def test_the_run_tab_trace_says_the_replies_were_written_or_the_default(
    qtbot: QtBot, window: MainWindow
) -> None:
    open_variants(window)  # the editor holds "grounded"
    qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.controller.running, timeout=2000)
    qtbot.waitUntil(lambda: not window.controller.running, timeout=15000)
    assert "offline replies written for grounded" in lines(window.trace)
    window.prompt_panel.template_edit.setPlainText(IMPROVED)
    qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.controller.running, timeout=2000)
    qtbot.waitUntil(lambda: not window.controller.running, timeout=15000)
    shown = lines(window.trace)
    assert SAME_REPLIES in shown
    assert "offline replies written for grounded" not in shown  # the new run's trace only
