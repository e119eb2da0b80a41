"""The one rule for Tab in a multi-line text box (every ``QPlainTextEdit`` and ``QTextEdit`` of
the app: the window's, every dialog's, those made later too): Tab and Shift+Tab move to the
next and the previous field, as in any form, and so do Ctrl+Tab and Ctrl+Shift+Tab; no tab
character is ever typed. A box left to itself keeps Tab as text, so a keyboard user who
entered the Judge dialog's Rubric, or the MCP dialog's Environment, could not leave it.

The one exception is a box marked with :func:`types_tab`, where a tab is text: the prompt
template (it indents examples); there only the Ctrl forms move on. Applied by
``app_rules`` on each key press (one filter for the app's rules);
``tests/ui/test_tab_rule.py`` walks every text box of the window and its dialogs.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

TYPES_TAB = "typesTab"  # a dynamic property: this box keeps Tab as text
_TABS = (Qt.Key.Key_Tab, Qt.Key.Key_Backtab)


def types_tab(edit: QPlainTextEdit | QTextEdit) -> None:
    """Tab is text in ``edit`` (Ctrl+Tab and Ctrl+Shift+Tab still move on)."""
    edit.setProperty(TYPES_TAB, True)


def moves_on(watched: QObject, event: QKeyEvent) -> bool:
    """Take a key press in a text box that the rule says moves on: the focus has moved to the
    next (or previous) field, and True; else False and the box has the key."""
    if event.key() not in _TABS or not isinstance(watched, QPlainTextEdit | QTextEdit):
        return False
    modifiers = event.modifiers()
    if watched.property(TYPES_TAB) and not modifiers & Qt.KeyboardModifier.ControlModifier:
        return False
    back = event.key() == Qt.Key.Key_Backtab or modifiers & Qt.KeyboardModifier.ShiftModifier
    # QWidget's own: a text box's override refuses to move while it takes Tab as text.
    QWidget.focusNextPrevChild(watched, not back)
    return True
