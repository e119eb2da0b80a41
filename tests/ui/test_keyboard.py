"""The keyboard: Tab leaves single-purpose fields, Ctrl+Tab leaves the template (issue 10, 9)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QPlainTextEdit, QWidget
from pytestqt.qtbot import QtBot

from sandbox_app.ui.window.main_window import MainWindow


def focus(qtbot: QtBot, window: MainWindow, widget: QWidget) -> None:
    window.activateWindow()
    widget.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(widget.hasFocus, timeout=2000)


def editors(window: MainWindow) -> dict[str, QPlainTextEdit]:
    return {
        "question": window.prompt_panel.question_edit,
        "documents": window.tool_panel.documents_edit,
        "template": window.prompt_panel.template_edit,
    }


@pytest.mark.parametrize("name", ["question", "documents"])
@pytest.mark.parametrize("shift", [False, True])
def test_tab_moves_focus_out_of_single_purpose_fields(
    qtbot: QtBot, window: MainWindow, name: str, shift: bool
) -> None:
    edit = editors(window)[name]
    focus(qtbot, window, edit)
    before = edit.toPlainText()
    key, modifier = (
        (Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
        if shift
        else (Qt.Key.Key_Tab, Qt.KeyboardModifier.NoModifier)
    )
    qtbot.keyClick(edit, key, modifier)
    qtbot.waitUntil(lambda: not edit.hasFocus(), timeout=2000)
    assert edit.toPlainText() == before
    assert not window.modified


@pytest.mark.parametrize("shift", [False, True])
def test_ctrl_tab_leaves_the_template_which_keeps_tab_for_indenting(
    qtbot: QtBot, window: MainWindow, shift: bool
) -> None:
    edit = editors(window)["template"]
    focus(qtbot, window, edit)
    before = edit.toPlainText()
    ctrl = Qt.KeyboardModifier.ControlModifier
    if shift:
        qtbot.keyClick(edit, Qt.Key.Key_Backtab, ctrl | Qt.KeyboardModifier.ShiftModifier)
    else:
        qtbot.keyClick(edit, Qt.Key.Key_Tab, ctrl)
    qtbot.waitUntil(lambda: not edit.hasFocus(), timeout=2000)
    assert edit.toPlainText() == before
    assert not window.modified
    # Focus moved to a neighbouring field; the template's tab page did not just flip away.
    assert window.prompt_panel.tabs.currentWidget() is edit
    landed = QApplication.focusWidget()
    assert landed is not None
    assert landed.isVisible()


@pytest.mark.parametrize("ctrl", [False, True])
@pytest.mark.parametrize("shift", [False, True])
def test_tab_leaves_the_mcp_dialogs_environment_box(
    qtbot: QtBot, window: MainWindow, ctrl: bool, shift: bool
) -> None:
    dialog = window.tool_panel.edit_servers()
    dialog.add_server()
    dialog.show()
    qtbot.waitExposed(dialog)
    edit = dialog.env_edit
    edit.setPlainText("DEBUG=1")
    dialog.activateWindow()
    edit.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(edit.hasFocus, timeout=2000)
    modifiers = Qt.KeyboardModifier.ControlModifier if ctrl else Qt.KeyboardModifier.NoModifier
    if shift:
        qtbot.keyClick(edit, Qt.Key.Key_Backtab, modifiers | Qt.KeyboardModifier.ShiftModifier)
    else:
        qtbot.keyClick(edit, Qt.Key.Key_Tab, modifiers)
    qtbot.waitUntil(lambda: not edit.hasFocus(), timeout=2000)
    assert edit.toPlainText() == "DEBUG=1"  # no tab character typed into it
    landed = QApplication.focusWidget()
    assert landed is not None
    assert landed.window() is dialog  # on to the dialog's next field, still in the dialog
    dialog.reject()
