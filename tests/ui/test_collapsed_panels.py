"""A panel dragged shut by its splitter comes back from View → Restore collapsed panels
(ui/common/splitters.py)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QSplitter
from pytestqt.qtbot import QtBot

from sandbox_app.ui.window.main_window import MainWindow
from tests.ui.test_wheel_rule import menu_action


def drag(splitter: QSplitter, by: QPoint) -> None:
    """The mouse drags ``splitter``'s handle ``by`` so far."""
    handle, left, plain = splitter.handle(1), Qt.MouseButton.LeftButton, Qt.KeyboardModifier(0)
    start = handle.rect().center()
    QTest.mousePress(handle, left, plain, start)
    QTest.mouseMove(handle, start + by)
    QTest.mouseRelease(handle, left, plain, start + by)


def test_the_comparison_table_dragged_shut_comes_back(qtbot: QtBot, window: MainWindow) -> None:
    compare = window.compare
    window.tabs.setCurrentWidget(compare)
    qtbot.waitExposed(window)
    results = compare.results_tabs  # the table's tabs, under the lanes
    lanes_and_table = results.parentWidget()
    assert isinstance(lanes_and_table, QSplitter)
    qtbot.waitUntil(lambda: compare.table.height() > 0, timeout=2000)
    # The handle dragged down as far as it goes: the table shut, a 2-px line under the lanes.
    drag(lanes_and_table, QPoint(0, lanes_and_table.height()))
    assert results.height() == 0

    menu_action(window, "&View", "&Restore collapsed panels").trigger()
    qtbot.waitUntil(lambda: results.height() >= lanes_and_table.height() // 4, timeout=2000)
    assert compare.table.isVisible()
    assert compare.table.height() > 0
    assert compare.strip.height() > results.height()  # the lanes keep the larger part
