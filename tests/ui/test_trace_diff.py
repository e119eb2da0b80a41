"""Trace diff in the window: two lanes of the offline model, one script each, side by side with
the first step where they part marked (Diff lanes…); two repeats of one script in one lane,
through the trace's right-click Compare with, are "no difference"."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QMenu, QWidget
from pytestqt.qtbot import QtBot

from sandbox_app.core.results.presentation import Role
from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.ui.compare.compare_view import CompareView
from sandbox_app.ui.lane import step_menu
from sandbox_app.ui.lane.lane_widget import LaneWidget
from sandbox_app.ui.trace.highlighter import formats_for
from sandbox_app.ui.trace.trace_diff_dialog import MARK, SAME, TraceDiffDialog
from sandbox_app.ui.window.main_window import MainWindow
from tests.ui.test_window import fast

GUESS = "Thought: six of them, I think.\nAction: calculator[20 * 12 * 6]"


def compare_on_brightgrid(window: MainWindow) -> CompareView:
    window.set_scenario(fast("brightgrid", 0))
    compare = window.compare
    compare.set_lanes((LaneConfig(), LaneConfig()))
    window.tabs.setCurrentWidget(compare)
    return compare


def run_lane(qtbot: QtBot, lane: LaneWidget, repeats: int = 1) -> None:
    lane.runner.run(repeats)
    qtbot.waitUntil(
        lambda: not lane.pane.running and len(lane.record.runs) == repeats, timeout=15000
    )


def open_dialog(qtbot: QtBot, parent: QWidget) -> TraceDiffDialog:
    def shown() -> list[TraceDiffDialog]:
        return [d for d in parent.findChildren(TraceDiffDialog) if d.isVisible()]

    qtbot.waitUntil(lambda: bool(shown()), timeout=3000)
    return shown()[0]


def line_number(dialog: TraceDiffDialog, side: int, text: str) -> int:
    return dialog.side_text(side).split("\n").index(text)


def test_compare_with_lists_a_wrong_run_as_wrong(qtbot: QtBot, window: MainWindow) -> None:
    from tests.ui.test_run_labels import WRONG, answering

    window.set_scenario(answering(WRONG.replace("$1,260", "$1,260 & more"), 0))
    window.lane.run(2)
    qtbot.waitUntil(lambda: not window.run_pane.running and len(window.run_pane.history) == 2)
    shown = step_menu.menu_at(window.run_pane, QPoint(5, 5))
    assert shown is not None
    menu = next(m for m in shown.findChildren(QMenu) if m.title() == "Compare with")
    assert [a.text() for a in menu.actions()] == ["Run 1 · ✘ $1,260 && more per year"]


def test_diff_lanes_marks_the_first_step_where_two_scripts_part(
    qtbot: QtBot, window: MainWindow
) -> None:
    compare = compare_on_brightgrid(window)
    first, second = compare.lanes
    assert compare.diff_button.isVisible()
    qtbot.mouseClick(compare.diff_button, Qt.MouseButton.LeftButton)
    assert compare.message.text() == "Diff lanes needs two lanes that have run."
    assert not compare.findChildren(TraceDiffDialog)
    run_lane(qtbot, first)
    script = window.workspace.model.scenario.script  # the second lane guesses at step 2
    replies = (script.replies[0], GUESS, script.replies[2])
    window.workspace.update(script=replace(script, replies=replies))
    run_lane(qtbot, second)

    qtbot.mouseClick(compare.diff_button, Qt.MouseButton.LeftButton)
    dialog = open_dialog(qtbot, compare)
    assert compare.message.text() == ""
    assert dialog.summary.text() == (
        "First difference at step 2: action input (20 * 12 * 7 · 20 * 12 * 6)"
    )
    left, right = dialog.side_text(0), dialog.side_text(1)
    assert "Action: calculator[20 * 12 * 7]" in left
    assert "Observation: 1680" in left
    assert "Action: calculator[20 * 12 * 6]" in right
    assert "Observation: 1440" in right
    assert "Thought: six of them, I think." in right
    # The mark stands over step 2 on both sides, and each step is level with the other's.
    for side in (0, 1):
        lines = dialog.side_text(side).split("\n")
        assert lines.index(MARK + "action input") + 1 == lines.index("── Step 2 ──")
        assert lines.count(MARK + "action input") == 1
    for step in (1, 2, 3):
        separator = f"── Step {step} ──"
        assert line_number(dialog, 0, separator) == line_number(dialog, 1, separator)
    # Step 2 is tinted across the line; step 1 is not.
    for side in dialog.sides:
        document = side.document()
        marked = document.findBlockByNumber(line_number(dialog, 0, "── Step 2 ──"))
        plain = document.findBlockByNumber(line_number(dialog, 0, "── Step 1 ──"))
        assert marked.blockFormat().background().style() != Qt.BrushStyle.NoBrush
        assert plain.blockFormat().background().style() == Qt.BrushStyle.NoBrush
    # Drawn in the trace's colours: an Action line in the theme's action format.
    action = (
        dialog.sides[1]
        .document()
        .findBlockByNumber(line_number(dialog, 1, "Action: calculator[20 * 12 * 6]"))
    )
    colour = action.begin().fragment().charFormat().foreground().color()
    assert colour == formats_for(dialog.palette())[Role.ACTION].foreground().color()

    # The same lane on both sides: no difference, no mark.
    dialog.pickers[1].setCurrentIndex(0)
    assert dialog.summary.text() == SAME
    assert MARK not in dialog.side_text(1)
    assert dialog.marked_block is None
    dialog.close()


def test_compare_with_in_the_trace_menu_finds_two_repeats_alike(
    qtbot: QtBot, window: MainWindow
) -> None:
    compare = compare_on_brightgrid(window)
    lane = compare.lanes[0]
    run_lane(qtbot, lane, repeats=2)
    assert [lane.pane.run_picker.itemText(i) for i in range(2)] == ["Run 1", "Run 2"]
    trace = lane.pane.trace
    shown = step_menu.menu_at(lane.pane, QPoint(5, 5))  # what a right-click there pops up
    assert shown is not None
    menu = next(m for m in shown.findChildren(QMenu) if m.title() == "Compare with")
    # The run on screen is Run 2; Run 1 with its verdict and answer.
    assert [a.text() for a in menu.actions()] == ["Run 1 · ✔ $1,680 per year"]
    menu.actions()[0].trigger()
    dialog = open_dialog(qtbot, trace)
    assert [p.currentText() for p in dialog.pickers] == ["Run 2", "Run 1"]
    assert dialog.summary.text() == SAME
    assert MARK not in dialog.side_text(0) + dialog.side_text(1)
    assert "Answer: $1,680 per year" in dialog.side_text(0)
    assert "Answer: $1,680 per year" in dialog.side_text(1)
    dialog.close()
