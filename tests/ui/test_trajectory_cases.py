"""Trajectory checks in the window: a case's checks edited in the test-set editor and imported
from a CSV's columns; Add to test set… from a finished run (the Run tab's and a compare
lane's) makes exactly the case the run suggests, an edit Save writes."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QDialogButtonBox
from pytestqt.qtbot import QtBot

from sandbox_app.core.scenarios.scenario import EvalCase, Expected
from sandbox_app.core.scenarios.scenario_file import load_scenario
from sandbox_app.core.scenarios.trajectory_spec import TrajectorySpec
from sandbox_app.ui.compare.test_set_editor import MATCH, NEVER, ORDER, STEPS, TOOLS
from sandbox_app.ui.lane import step_menu
from sandbox_app.ui.lane.add_to_test_set import AddToTestSet
from sandbox_app.ui.lane.run_pane import RunPane
from sandbox_app.ui.window.main_window import MainWindow
from tests.ui.test_run_labels import WRONG, answering, run
from tests.ui.test_test_set_editor import open_editor, set_cell
from tests.ui.test_trace_diff import compare_on_brightgrid, run_lane
from tests.ui.test_window import fast

QUESTION = "How much does Brightgrid Pro cost per year for a team of 7 developers?"


def cells(editor_row: int, editor: object) -> list[str]:
    table = editor.table  # type: ignore[attr-defined]
    return [table.item(editor_row, c).text() for c in (TOOLS, ORDER, NEVER, STEPS)]


def test_a_cases_checks_are_edited_in_the_table_and_kept(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    editor = open_editor(qtbot, window)
    before = window.current_scenario().test_set
    assert cells(0, editor) == ["", "", "", ""]  # the scenario's defaults hold
    assert cells(5, editor) == ["search", "", "", ""]  # its own: search only
    assert cells(10, editor) == ["calculator", "", "search", ""]
    set_cell(editor, 0, TOOLS, "search,  calculator")
    set_cell(editor, 0, ORDER, "exact")
    set_cell(editor, 0, NEVER, "delete_file")
    set_cell(editor, 0, STEPS, "four")
    editor.accept()
    assert editor.isVisible()  # refused, in one line naming the row
    assert editor.message.text() == (
        '⚠ Row 1: "checks.max_steps" must be a whole number, at least 0 (got "four").'
    )
    assert window.current_scenario().test_set == before  # nothing changed
    set_cell(editor, 0, STEPS, "3")
    set_cell(editor, 5, TOOLS, "")  # back to the scenario's default
    editor.accept()
    assert not editor.isVisible()
    cases = window.current_scenario().test_set
    assert cases[0].checks == TrajectorySpec(
        tools_called=("search", "calculator"), order="exact", never=("delete_file",), max_steps=3
    )
    assert cases[5].checks.tools_called is None
    assert cases[5].checks.inputs == before[5].checks.inputs  # what the table does not show
    assert cases[1:5] == before[1:5]
    assert window.files.save_to(tmp_path / "s.json")
    assert load_scenario(tmp_path / "s.json").test_set == cases


def test_checks_are_imported_from_a_csvs_columns(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    editor = open_editor(qtbot, window)
    file = tmp_path / "paths.csv"
    file.write_text(
        "question,answer,match,tools_called,order,never,max_steps\n"
        "Rows?,5000,number,search,any,calculator,2\n",
        encoding="utf-8",
    )
    assert editor.import_file(file)
    assert editor.table.item(12, MATCH).text() == "number"  # type: ignore[union-attr]
    assert cells(12, editor) == ["search", "any", "calculator", "2"]
    editor.accept()
    case = window.current_scenario().test_set[12]
    assert case.checks == TrajectorySpec(
        tools_called=("search",), order="any", never=("calculator",), max_steps=2
    )


def test_a_csvs_space_separated_tools_are_tools_and_an_unknown_one_is_said(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    editor = open_editor(qtbot, window)
    file = tmp_path / "paths.csv"
    file.write_text("question,answer,tools_called\nRows?,5000,search calculator\n")
    assert editor.import_file(file)
    assert editor.message.text() == "Imported 1 cases from paths.csv."  # no warning
    assert cells(12, editor)[0] == "search, calculator"
    typo = tmp_path / "typo.csv"
    typo.write_text("question,answer,tools_called,never\nRows?,5000,serch calculator,delete\n")
    assert editor.import_file(typo)
    assert editor.message.text() == (
        'Imported 1 cases from typo.csv. ⚠ No tool is named "serch", "delete".'
    )
    set_cell(editor, 13, TOOLS, "search calculator")  # typed in the table alike
    editor.accept()
    case = window.current_scenario().test_set[13]
    assert case.checks.tools_called == ("search", "calculator")


def add_dialog(qtbot: QtBot, pane: RunPane) -> AddToTestSet:
    """Add to test set… from the trace's right-click menu: the dialog it opens."""
    menu = step_menu.menu_at(pane, QPoint(5, 5))
    assert menu is not None
    (action,) = [a for a in menu.actions() if a.text() == "Add to test set…"]
    assert action.isEnabled()
    action.trigger()
    qtbot.waitUntil(lambda: any(d.isVisible() for d in pane.findChildren(AddToTestSet)))
    (dialog,) = [d for d in pane.findChildren(AddToTestSet) if d.isVisible()]
    return dialog


def press_ok(dialog: AddToTestSet) -> None:
    ok = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)  # type: ignore[union-attr]
    ok.click()


def test_add_to_test_set_makes_the_case_of_a_finished_run(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    window.set_scenario(fast("brightgrid", 0))
    assert window.current_scenario().test_set == ()
    run(qtbot, window)
    dialog = add_dialog(qtbot, window.run_pane)
    # Filled from the run: its question, its answer, its path.
    assert dialog.question.text() == QUESTION
    assert dialog.answer.text() == "$1,680 per year"
    assert dialog.match.currentText() == "contains"
    assert dialog.tools.text() == "search, calculator"
    assert dialog.order.currentText() == "in_order"
    # A bad edit is one line, and adds nothing.
    dialog.answer.setText("  ")
    press_ok(dialog)
    assert dialog.isVisible()
    assert dialog.message.text() == '⚠ "expected.answer" is empty.'
    assert window.current_scenario().test_set == ()
    dialog.answer.setText("1680")
    dialog.match.setCurrentText("number")
    dialog.never.setText("delete_file")
    press_ok(dialog)
    assert not dialog.isVisible()
    expected = EvalCase(
        QUESTION,
        Expected("1680", "number"),
        checks=TrajectorySpec(
            tools_called=("search", "calculator"), order="in_order", never=("delete_file",)
        ),
    )
    assert window.current_scenario().test_set == (expected,)
    assert window.modified  # an edit: Save writes it
    assert window.files.save_to(tmp_path / "s.json")
    assert load_scenario(tmp_path / "s.json").test_set == (expected,)


def test_add_to_test_set_on_a_wrong_run_expects_the_scenarios_answer_and_says_it_added(
    qtbot: QtBot, window: MainWindow
) -> None:
    window.set_scenario(answering(WRONG, 0))
    run(qtbot, window)
    assert window.answer_status.text().startswith("✘ Wrong (expected $1,680)")
    dialog = add_dialog(qtbot, window.run_pane)
    assert dialog.answer.text() == "$1,680"  # the scenario's, never the wrong $1,260
    assert dialog.match.currentText() == window.current_scenario().expected.match  # type: ignore[union-attr]
    press_ok(dialog)
    (case,) = window.current_scenario().test_set
    assert case.expected.answer == "$1,680"
    status = window.statusBar().currentMessage()
    assert status == "Added case 1 to the test set."


def test_add_to_test_set_from_a_compare_lane_appends_to_the_test_set(
    qtbot: QtBot, window: MainWindow
) -> None:
    compare = compare_on_brightgrid(window)
    window.set_scenario(
        window.current_scenario().with_changes(test_set=(EvalCase("Q", Expected("A")),))
    )
    lane = compare.lanes[1]
    run_lane(qtbot, lane)
    dialog = add_dialog(qtbot, lane.pane)
    press_ok(dialog)
    cases = window.current_scenario().test_set
    assert [c.question for c in cases] == ["Q", QUESTION]
    assert cases[1].expected == Expected("$1,680 per year", "contains")
    assert window.statusBar().currentMessage() == "Added case 2 to the test set."
    assert cases[1].checks.tools_called == ("search", "calculator")
    qtbot.mouseClick(compare.eval_panel.edit_button, Qt.MouseButton.LeftButton)  # in the editor
    assert compare.eval_panel.editor is not None
    assert compare.eval_panel.editor.table.rowCount() == 2
