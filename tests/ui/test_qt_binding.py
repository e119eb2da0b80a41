"""Guards against Qt binding bugs the app has met, so an upgrade that brings one back fails here."""

from __future__ import annotations

import sys

from PySide6.QtGui import QSyntaxHighlighter
from PySide6.QtWidgets import QPlainTextEdit
from pytestqt.qtbot import QtBot


class _Counting(QSyntaxHighlighter):
    calls = 0

    def highlightBlock(self, text: str) -> None:
        _Counting.calls += 1


def test_python_highlighter_overrides_do_not_leak_none_references(qtbot: QtBot) -> None:
    # PySide6 6.12.0 dropped one reference to None per highlightBlock call; on Python 3.11,
    # where None is not immortal, the process aborts after a few hundred lines of trace.
    editor = QPlainTextEdit()
    qtbot.addWidget(editor)
    _Counting(editor.document())
    before = sys.getrefcount(None)
    for i in range(200):
        editor.appendPlainText(f"Thought: line {i}")
    assert _Counting.calls >= 200
    assert sys.getrefcount(None) - before > -50
