"""Human grades in the window: a 👍/👎 and a note on the Run tab's answer, a compare lane's and
a test-set cell's, by keyboard and by mouse, kept in the history with the run and shown again
by a new window on the same file; the keys listed in Help → Keyboard shortcuts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from sandbox_app.core.history.history_grades import (
    Grade,
    RunRef,
    choices,
    evaluation_grades,
    grade_of,
)
from sandbox_app.core.scenarios.judge_spec import JudgeSpec
from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.ui.grading.pairwise_review import PairwiseReview, side_of
from sandbox_app.ui.window.main_window import MainWindow
from sandbox_app.ui.window.menus import shortcut_rows
from tests.ui.test_history_view import run_test_set, versions_scenario

CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


def stored_run(window: MainWindow) -> RunRef:
    record = window.run_pane.shown_record()
    assert record is not None
    assert record.stored_as is not None
    return RunRef("run", record.stored_as[1])


def test_grading_the_run_tabs_answer_by_keyboard_and_mouse_survives_a_new_window(
    qtbot: QtBot, make_window: Callable[..., MainWindow]
) -> None:
    window = make_window()
    bar = window.lane.grades
    assert not bar.isVisible()  # nothing run yet: nothing to grade
    qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.controller.running and bar.isVisible(), timeout=10000)
    store = window.history.current().store
    assert store is not None
    ref = stored_run(window)
    trace = window.run_pane.trace
    trace.setFocus()
    qtbot.keyClick(trace, Qt.Key.Key_B, CTRL_SHIFT)  # 👎
    assert grade_of(store, ref) == Grade(False)
    assert bar.bad.isChecked()
    assert not bar.good.isChecked()
    qtbot.keyClick(trace, Qt.Key.Key_N, CTRL_SHIFT)  # to the note
    qtbot.waitUntil(bar.note.hasFocus)
    qtbot.keyClicks(bar.note, "right, but slow")
    qtbot.keyClick(bar.note, Qt.Key.Key_Return)
    assert grade_of(store, ref) == Grade(False, "right, but slow")
    assert bar.said.text() == "note kept"
    qtbot.mouseClick(bar.good, Qt.MouseButton.LeftButton)  # changed its mind: 👍
    assert grade_of(store, ref) == Grade(True, "right, but slow")
    qtbot.mouseClick(bar.good, Qt.MouseButton.LeftButton)  # again: taken back
    assert grade_of(store, ref) is None
    qtbot.keyClick(trace, Qt.Key.Key_G, CTRL_SHIFT)  # 👍 by keyboard
    assert grade_of(store, ref) == Grade(True, "right, but slow")

    again = make_window()  # a new window on the same history file
    fresh = again.history.current().store
    assert fresh is not None
    assert fresh is not store
    assert grade_of(fresh, ref) == Grade(True, "right, but slow")
    keys = dict((what, key) for key, what in shortcut_rows(window))
    assert keys["Grade the run shown 👍 (in a trace)"] == "Ctrl+Shift+G"
    assert keys["Grade the run shown 👎 (in a trace)"] == "Ctrl+Shift+B"
    assert keys["Write a note on the run shown (in a trace)"] == "Ctrl+Shift+N"


def test_a_test_set_cell_shown_in_its_lane_is_graded_as_the_test_sets_run(
    qtbot: QtBot, window: MainWindow
) -> None:
    run_test_set(qtbot, window, "brief")
    panel = window.compare.eval_panel
    lane = window.compare.lanes[0]
    item = panel.grid.item(0, 1)
    assert item is not None
    rect = panel.grid.visualItemRect(item)
    qtbot.mouseClick(panel.grid.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    bar = lane.runner.grades
    qtbot.waitUntil(bar.isVisible, timeout=5000)
    qtbot.mouseClick(bar.bad, Qt.MouseButton.LeftButton)
    store = window.history.current().store
    assert store is not None
    ((evaluation,),) = store.read("SELECT MAX(id) FROM evaluations")
    grades = evaluation_grades(store, evaluation)
    assert list(grades.values()) == [Grade(False)]
    ((lane_label, case, _repeat),) = grades
    assert case == 0
    assert lane_label.startswith(lane.name)


def test_the_blind_pairwise_review_by_keyboard_is_kept_and_summarised(
    qtbot: QtBot, make_window: Callable[..., MainWindow]
) -> None:
    window = make_window()
    run_test_set(qtbot, window, "brief")  # two lanes, four cases
    view = window.history.open_view()
    qtbot.waitUntil(view.isVisible, timeout=2000)
    view.select(1)
    qtbot.mouseClick(view.pairwise_button, Qt.MouseButton.LeftButton)
    dialog = next(w for w in view.findChildren(PairwiseReview) if w.isVisible())
    assert len(dialog.cases) == 4
    assert dialog.progress.text().startswith("Case 1 · 1 of 4 · 0 chosen")
    # The sides: a coin per case from the dialog's seed, never shown by lane name.
    sides = [side_of(dialog.seed, case.case) for case in dialog.cases]
    for key in (Qt.Key.Key_Left, Qt.Key.Key_2, Qt.Key.Key_Down, Qt.Key.Key_1):
        qtbot.keyClick(dialog, key)
    assert dialog.progress.text() == "All 4 cases chosen"
    wanted = [
        "first" if sides[0] else "second",  # ← : the left answer
        "second" if sides[1] else "first",  # 2 : the right answer
        "tie",  # ↓
        "first" if sides[3] else "second",  # 1 : the left answer
    ]
    first_wins = wanted.count("first")
    assert dialog.summary.text().startswith(
        f"{dialog.first} over {dialog.second}: {first_wins / 3:.0%} ({first_wins}/3, 95% CI "
    )
    assert dialog.summary.text().endswith(" · 1 tie")

    again = make_window()  # a new window, a new store on the same file
    store = again.history.current().store
    assert store is not None
    picks = choices(store, 1)
    assert [p.choice for p in picks] == wanted
    assert {p.seed for p in picks} == {dialog.seed}
    assert [p.first_left for p in picks] == sides
    reopened = PairwiseReview(store, 1, dialog.first, dialog.second)
    qtbot.addWidget(reopened)
    assert reopened.progress.text() == "All 4 cases chosen"  # goes on where it was left


def test_sides_are_a_fair_coin_per_case_and_the_same_for_the_same_seed() -> None:
    lefts = [side_of(35, case) for case in range(400)]
    assert 160 <= sum(lefts) <= 240  # a fair coin's 400 throws: 200 ± 2 standard deviations
    assert lefts == [side_of(35, case) for case in range(400)]
    assert lefts != [side_of(36, case) for case in range(400)]


def test_the_judges_agreement_with_grades_shows_under_the_test_set_and_after_a_restart(
    qtbot: QtBot, make_window: Callable[..., MainWindow]
) -> None:
    verdict = '{"verdict": "pass", "score": 5, "reason": "fine"}'
    scenario = replace(
        versions_scenario("brief"), rubric="Names a price.", judge=JudgeSpec(replies=(verdict,))
    )
    window = make_window()
    window.set_scenario(scenario)
    compare = window.compare
    compare.set_lanes((LaneConfig(), LaneConfig()))
    window.tabs.setCurrentWidget(compare)
    compare.results_tabs.setCurrentIndex(1)
    panel = compare.eval_panel
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(panel.results) == 8 and not panel.running, timeout=20000)
    said = panel.verdicts.label
    assert "Judge: uncalibrated (no human grades of its runs yet" in said.text()
    item = panel.grid.item(0, 1)
    assert item is not None
    qtbot.mouseClick(
        panel.grid.viewport(),
        Qt.MouseButton.LeftButton,
        pos=panel.grid.visualItemRect(item).center(),
    )
    bar = compare.lanes[0].runner.grades
    qtbot.waitUntil(bar.isVisible, timeout=5000)
    qtbot.mouseClick(bar.bad, Qt.MouseButton.LeftButton)  # the judge passed it; people fail it
    panel.verdicts.draw()
    assert said.text().endswith(
        "Judge: κ 0.00 · true pass — · true fail 0% · 1 label — uncalibrated "
        "(fewer than 50 human grades of judged runs)"
    )
    editor = panel.edit_cases()  # Edit cases… → Judge… says it beside the judge too
    qtbot.mouseClick(editor.judge_button, Qt.MouseButton.LeftButton)
    assert editor.judge_dialog is not None
    assert editor.judge_dialog.agreement.text() == said.text().splitlines()[-1]
    editor.judge_dialog.reject()
    editor.reject()

    again = make_window()  # a new window on the same history: the grade is still counted
    again.set_scenario(scenario)
    view = again.history.open_view()
    qtbot.waitUntil(view.isVisible, timeout=2000)
    assert view.open_in_grid(1)
    assert "true fail 0% · 1 label" in again.compare.eval_panel.verdicts.label.text()
