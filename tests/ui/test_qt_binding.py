"""Guards against Qt binding bugs the app has met, so an upgrade that brings one back fails here."""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable

import pytest
from PySide6.QtGui import QSyntaxHighlighter
from PySide6.QtWidgets import QPlainTextEdit
from pytestqt.qtbot import QtBot

LINES = 200

# PEP 683 (Python 3.12): None is immortal. Py_INCREF and Py_DECREF leave an immortal object's
# count as it is, so sys.getrefcount(None) is the same constant before and after any code: no
# probe can see a dropped reference to None there, and for the same reason a dropped one can
# never free None and abort the process. The bug below only bites, and is only visible, on
# Python 3.11 (the oldest Python the project supports, and the one CI and this box run).
NONE_IS_IMMORTAL = sys.version_info >= (3, 12)
immortal_none = pytest.mark.skipif(
    NONE_IS_IMMORTAL,
    reason="None is immortal from Python 3.12 (PEP 683): its reference count never moves, so "
    "a leak of None references can neither be measured nor crash; guarded on 3.11",
)


class _Counting(QSyntaxHighlighter):
    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.calls = 0

    def highlightBlock(self, text: str) -> None:
        self.calls += 1


def none_references_lost(work: Callable[[], None]) -> int:
    """How many references to None ``work()`` dropped (negative: it kept some)."""
    before = sys.getrefcount(None)
    work()
    return before - sys.getrefcount(None)


def append_lines(editor: QPlainTextEdit) -> None:
    for i in range(LINES):
        editor.appendPlainText(f"Thought: line {i}")


@immortal_none
def test_python_highlighter_overrides_do_not_leak_none_references(qtbot: QtBot) -> None:
    # PySide6 6.12.0 dropped one reference to None per highlightBlock call; on Python 3.11,
    # where None is not immortal, the process aborts after a few hundred lines of trace.
    plain = QPlainTextEdit()
    qtbot.addWidget(plain)
    baseline = none_references_lost(lambda: append_lines(plain))  # the same work, unhighlighted
    editor = QPlainTextEdit()
    qtbot.addWidget(editor)
    highlighter = _Counting(editor.document())
    lost = none_references_lost(lambda: append_lines(editor))
    assert highlighter.calls >= LINES
    # The bug loses one per call, LINES in all; Python's own churn is the same in both runs.
    assert lost - baseline < LINES // 4, f"{lost} references to None lost ({baseline} without)"


@immortal_none
def test_the_none_reference_probe_sees_a_leak_of_that_size() -> None:
    # The probe above is only worth something if it can see the bug: drop LINES references to
    # None by hand, as the binding did, measure, and give them back.
    api = ctypes.PyDLL(None, handle=ctypes.pythonapi._handle)
    api.Py_DecRef.argtypes = api.Py_IncRef.argtypes = [ctypes.py_object]
    api.Py_DecRef.restype = api.Py_IncRef.restype = None

    def leak() -> None:
        for _ in range(LINES):
            api.Py_DecRef(None)

    try:
        lost = none_references_lost(leak)
    finally:
        for _ in range(LINES):
            api.Py_IncRef(None)
    assert lost >= LINES * 3 // 4, f"the probe saw only {lost} of {LINES} references lost"
