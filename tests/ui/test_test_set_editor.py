"""Editing a test set in the window: change, add and remove cases, import CSV or JSONL; a bad
row is one line naming it and loses nothing."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from sandbox_app.core.scenarios.scenario_file import load_scenario
from sandbox_app.ui.compare.test_set_editor import ANSWER, QUESTION, TestSetEditor
from sandbox_app.ui.window.main_window import MainWindow
from tests.ui.test_eval_panel import open_test_set


def open_editor(qtbot: QtBot, window: MainWindow) -> TestSetEditor:
    open_test_set(window)
    panel = window.compare.eval_panel
    qtbot.mouseClick(panel.edit_button, Qt.MouseButton.LeftButton)
    editor = panel.editor
    assert editor is not None
    qtbot.waitUntil(editor.isVisible, timeout=2000)
    return editor


def set_cell(editor: TestSetEditor, row: int, column: int, text: str) -> None:
    item = editor.table.item(row, column)
    assert item is not None
    item.setText(text)


def test_edit_cases_and_save_them_in_the_scenario(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    editor = open_editor(qtbot, window)
    grid = window.compare.eval_panel.grid
    assert grid.rowCount() == 12  # the cases show before anything runs
    before = window.current_scenario().test_set
    assert editor.table.rowCount() == len(before) == 12
    set_cell(editor, 0, ANSWER, "$1,680 a year")
    qtbot.mouseClick(editor.add_button, Qt.MouseButton.LeftButton)
    assert editor.table.rowCount() == 13
    editor.accept()  # the new case has no question yet
    assert editor.isVisible()
    assert editor.message.text() == '⚠ Row 13: "question" is empty.'
    set_cell(editor, 12, QUESTION, "What does the free plan export?")
    set_cell(editor, 12, ANSWER, "5,000 rows")
    editor.table.selectRow(1)
    qtbot.mouseClick(editor.remove_button, Qt.MouseButton.LeftButton)
    editor.accept()
    assert not editor.isVisible()
    cases = window.current_scenario().test_set
    assert len(cases) == 12
    assert cases[0].expected.answer == "$1,680 a year"
    assert cases[0].replies == before[0].replies  # what the table does not show is kept
    assert cases[1] == before[2]
    assert cases[-1].question == "What does the free plan export?"
    assert window.compare.eval_panel.status.text() == "12 cases"
    last = grid.item(11, 0)
    assert last is not None
    assert last.text() == "What does the free plan export?"
    assert window.files.save_to(tmp_path / "s.json")
    assert load_scenario(tmp_path / "s.json").test_set == cases


def test_import_csv_and_jsonl_or_say_which_row_is_wrong(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    editor = open_editor(qtbot, window)
    good = tmp_path / "more.csv"
    good.write_text("question,answer,match\nHow many rows?,5000,number\nRefunds?,5 days,contains\n")
    assert editor.import_file(good)
    assert editor.table.rowCount() == 14
    assert editor.message.text() == "Imported 2 cases from more.csv."
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "Fine?", "answer": "yes"}\n{"question": "", "answer": "x"}\n')
    assert not editor.import_file(bad)
    assert editor.message.text() == '⚠ bad.jsonl, row 2: "question" is empty.'
    assert editor.table.rowCount() == 14  # nothing of a bad file is added
    editor.reject()
    assert len(window.current_scenario().test_set) == 12  # Cancel changes nothing
