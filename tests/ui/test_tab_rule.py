"""Tab leaves every multi-line text box (ui/common/tab_rule.py): each QPlainTextEdit and
QTextEdit in the window and in every dialog it opens gives the focus to the next field on Tab
and to the previous one on Shift+Tab, typing nothing; the Judge dialog's Rubric and Prompt
kept the focus and typed a tab, as the MCP dialog's Environment box once did. The one box
where Tab is text is the prompt template (it indents examples)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget
from pytestqt.qtbot import QtBot

from sandbox_app.ui.common.tab_rule import TYPES_TAB
from sandbox_app.ui.tools.drafts_dialog import DraftsDialog
from sandbox_app.ui.window.main_window import MainWindow
from tests.ui.test_dialogs_fit import every_opener
from tests.ui.test_wheel_rule import each_dialog
from tests.ui.test_window import fast

TextBox = QPlainTextEdit | QTextEdit


def text_boxes(root: QWidget) -> list[TextBox]:
    """The multi-line text boxes under ``root`` a keyboard user can reach now."""
    found = root.findChildren(QPlainTextEdit) + root.findChildren(QTextEdit)
    return [
        box
        for box in found
        if box.isVisible() and box.isEnabled() and box.focusPolicy() != Qt.FocusPolicy.NoFocus
    ]


def text(box: TextBox) -> str:
    return box.toPlainText()


def trapped(qtbot: QtBot, box: TextBox) -> list[str]:
    """Tab, then Shift+Tab, from ``box``: what went wrong (empty when both left it, typing
    nothing)."""
    problems = []
    for key, modifier in (
        (Qt.Key.Key_Tab, Qt.KeyboardModifier.NoModifier),
        (Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier),
    ):
        box.window().activateWindow()
        box.setFocus(Qt.FocusReason.OtherFocusReason)
        qtbot.waitUntil(box.hasFocus, timeout=2000)
        before = text(box)
        qtbot.keyClick(box, key, modifier)
        if box.hasFocus() or text(box) != before:
            problems.append(f"{box.objectName() or type(box).__name__} kept {key.name}")
    return problems


def test_tab_leaves_every_text_box_of_the_window_and_its_dialogs(
    qtbot: QtBot, window: MainWindow
) -> None:
    window.set_scenario(fast("brightgrid", 0))
    window.run_button.click()  # a run, for the dialogs that need one (Inspect…, Diff lanes…)
    compare = window.compare
    compare.run_all()
    qtbot.waitUntil(lambda: not window.run_pane.running and not compare.running, timeout=15000)
    template = window.prompt_panel.template_edit
    in_window = [box for box in text_boxes(window) if box is not template]
    assert len(in_window) >= 3  # the question, the variables, the documents at least
    problems = [p for box in in_window for p in trapped(qtbot, box)]
    counted: dict[str, int] = {}
    for name, dialog in each_dialog(qtbot, every_opener(window)):
        if isinstance(dialog, DraftsDialog) and not dialog.drafts:
            dialog.add_button.click()  # a draft: its form (and its text boxes) enabled
        boxes = text_boxes(dialog)
        counted[name] = len(boxes)
        assert not [box for box in boxes if box.property(TYPES_TAB)], name
        problems += [f"{name}: {p}" for box in boxes for p in trapped(qtbot, box)]
    assert problems == []
    # The walk reached the boxes it is about.
    assert counted["Edit cases… JudgeDialog"] >= 2, counted  # the Rubric and the Prompt
    assert counted["MCP servers… McpServersDialog"] >= 1, counted  # the Environment
    assert counted["Your tools… MockToolsEditor"] >= 1, counted  # a tool's description


def test_the_prompt_template_alone_keeps_tab_as_text(qtbot: QtBot, window: MainWindow) -> None:
    template = window.prompt_panel.template_edit
    marked = [box for box in text_boxes(window) if box.property(TYPES_TAB)]
    assert marked == [template]
    window.activateWindow()
    template.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(template.hasFocus, timeout=2000)
    before = template.toPlainText()
    qtbot.keyClick(template, Qt.Key.Key_Tab)
    assert template.hasFocus()
    assert len(template.toPlainText()) == len(before) + 1  # a tab, typed
    assert "\t" in template.toPlainText()
