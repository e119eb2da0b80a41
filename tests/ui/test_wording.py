"""Status lines agree with each other and count in English (issue 10, item 12)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from sandbox_app.core.running.metrics import RunMetrics, StepMetrics, plural
from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.ui.window.main_window import MainWindow
from tests.model_server import ModelScript, ModelServer


def test_stopping_mid_step_names_the_step_in_both_status_lines(
    qtbot: QtBot, window: MainWindow
) -> None:
    qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)  # 40 tokens/s: slow enough
    qtbot.waitUntil(lambda: "Thought" in window.trace.plain_text(), timeout=10000)
    qtbot.mouseClick(window.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.controller.running, timeout=5000)
    assert window.answer_status.text().startswith("■ Stopped at step 1")
    assert window.step_label.text() == "Stopped at step 1 of 5"
    assert "0 steps" not in window.answer_status.text()


def test_a_one_step_lane_says_one_step(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    fake_server.set_model("m", ModelScript(replies=["Thought: easy.\nAnswer: 4"], cycle=True))
    window.set_scenario(window.scenario.with_changes(question="What is 2 + 2?", expected=None))
    compare = window.compare
    compare.set_lanes(tuple(LaneConfig("Custom URL", fake_server.base_url, "m") for _ in "ab"))
    qtbot.mouseClick(compare.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: compare.running, timeout=2000)
    qtbot.waitUntil(lambda: not compare.running, timeout=20000)
    assert [lane.status.text() for lane in compare.lanes] == ["✔ Answered in 1 step"] * 2
    assert [lane.pane.answer_label.text() for lane in compare.lanes] == ["4", "4"]


def test_metrics_summary_counts_in_english() -> None:
    one = StepMetrics(step=1, ttft_s=0.1, wall_s=0.2, tokens_in=5, tokens_out=3, estimated=False)
    assert RunMetrics((one,), 0.2, tool_calls=1).summary().startswith("1 step · 1 tool call · ")
    assert plural(0, "step") == "0 steps"


def test_pressing_run_again_clears_the_last_answer_and_trace_at_once(
    qtbot: QtBot, window: MainWindow
) -> None:
    from dataclasses import replace

    window.set_scenario(
        window.scenario.with_changes(script=replace(window.scenario.script, tokens_per_second=0))
    )
    window.start_run()
    qtbot.waitUntil(lambda: window.answer_label.text() == "$1,680 per year", timeout=10000)
    qtbot.waitUntil(lambda: not window.controller.running, timeout=5000)
    window.start_run()  # no event loop turn yet: what the user sees under "Starting…"
    assert window.trace.plain_text() == ""
    assert not window.answer_label.isVisible()
    qtbot.waitUntil(lambda: not window.controller.running, timeout=10000)
