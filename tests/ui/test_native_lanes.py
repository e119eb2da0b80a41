"""A text-ReAct lane and a native-tools lane of one model, side by side in the window."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox
from pytestqt.qtbot import QtBot

from sandbox_app.core.scenarios.scenario import LaneConfig, LaneSettings
from sandbox_app.core.scenarios.scenario_file import load_scenario
from sandbox_app.ui.trace.highlighter import Role
from sandbox_app.ui.trace.trace_view import TraceView
from sandbox_app.ui.window.main_window import MainWindow
from tests.core.test_native_tools import NATIVE_REPLIES
from tests.helpers import replies_of
from tests.model_server import ModelScript, ModelServer


def roles_of_lines(trace: TraceView, start: str) -> list[Role]:
    found = []
    block = trace.document().firstBlock()
    while block.isValid():
        if block.text().startswith(start):
            found.append(trace.role_of(block.blockNumber()))
        block = block.next()
    return found


def test_text_and_native_lanes_of_one_model_line_up(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer, tmp_path: Path
) -> None:
    # One model: ReAct text when asked in text, tool calls when given tools.
    script = ModelScript(replies=replies_of("brightgrid"), native_replies=NATIVE_REPLIES)
    fake_server.set_model("qwen", script)
    compare = window.compare
    url = fake_server.base_url
    compare.set_lanes(
        (
            LaneConfig("custom", url, "qwen"),
            LaneConfig("custom", url, "qwen", settings=LaneSettings(tool_calling="native")),
        )
    )
    window.tabs.setCurrentWidget(compare)
    text_lane, native_lane = compare.lanes
    tool_calls = native_lane.backend_panel.settings_form.widgets["tool_calling"]
    assert isinstance(tool_calls, QComboBox)
    assert tool_calls.currentText() == "Native tool calls"
    assert native_lane.model_label.text().endswith("qwen · native tool calls")
    assert text_lane.model_label.text().endswith("qwen")
    qtbot.mouseClick(compare.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: compare.running, timeout=2000)
    qtbot.waitUntil(lambda: not compare.running, timeout=20000)

    rows = compare.rows()
    assert [r["Status"] for r in rows] == ["answered", "answered"], rows
    assert [r["Final answer"] for r in rows] == ["$1,680 per year"] * 2
    assert [r["Steps"] for r in rows] == ["3", "3"]
    assert [r["Tool calls"] for r in rows] == ["2", "2"]
    text, native = text_lane.trace.plain_text(), native_lane.trace.plain_text()
    assert "Action: search[Brightgrid Pro price per developer]" in text
    assert 'Action: search({"query": "Brightgrid Pro price per developer"})' in native
    assert "Thought: I need the price per developer first." in native
    # The last reply had no call: shown as the answer (the model's line), not as a thought.
    assert "Thought: $1,680" not in native
    assert roles_of_lines(native_lane.trace, "Answer: $1,680 per year") == [Role.MODEL]
    assert not roles_of_lines(native_lane.trace, "▸ Thought for")
    for lane in (text_lane, native_lane):  # the same steps, one separator each
        assert [lane.trace.step_block(k) is not None for k in (1, 2, 3)] == [True] * 3
    requests = fake_server.requests
    assert sum("tools" in r for r in requests) == 3  # only the native lane sent tools

    assert window.files.save_to(tmp_path / "s.json")
    saved = load_scenario(tmp_path / "s.json")
    assert [lane.settings.tool_calling for lane in saved.lanes] == ["react", "native"]


def test_the_model_panel_sets_native_tool_calls_for_the_run(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    combo = window.backend_panel.settings_form.widgets["tool_calling"]
    combo.setCurrentIndex(combo.findData("native"))
    assert window.current_scenario().model.tool_calling == "native"
    assert window.files.save_to(tmp_path / "s.json")
    assert load_scenario(tmp_path / "s.json").model.tool_calling == "native"
    window.start_run()  # the offline model plays its replies as tool calls
    assert window.run_pane.running
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=20000)
    trace = window.run_pane.trace.plain_text()
    assert "Action: search({" in trace, trace[-400:]
    assert roles_of_lines(window.run_pane.trace, "Answer: $1,680") == [Role.MODEL], trace[-400:]
