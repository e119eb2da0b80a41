"""Every dialog fits the screen it opens on (issue 36, item 4; ui/common/screen_fit.py): on a
1280×720 screen each of the window's dialogs is wholly on it, its buttons in view; one taller
than the screen scrolls inside."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QAbstractButton,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QMessageBox,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)
from pytestqt.qtbot import QtBot

from sandbox_app.ui.common import plain, screen_fit
from sandbox_app.ui.lane import step_menu
from sandbox_app.ui.window.main_window import MainWindow
from tests.ui.test_screenshot import fully_shown
from tests.ui.test_wheel_rule import each_dialog, menu_action, openers
from tests.ui.test_window import fast

SCREEN = QRect(0, 0, 1280, 720)


@pytest.fixture
def screen_of_720(monkeypatch: pytest.MonkeyPatch) -> QRect:
    """Every dialog opens on a 1280×720 screen (the offscreen platform's is 800×800)."""
    monkeypatch.setattr(screen_fit, "available", lambda _widget: SCREEN)
    return SCREEN


def inspect_step(window: MainWindow) -> None:
    """The Run tab trace's right-click menu on step 1's Thought (above it, the offline
    model's note belongs to no step): Inspect…"""
    trace = window.run_pane.trace
    block = trace.document().firstBlock()
    while block.isValid() and not block.text().startswith("Thought:"):
        block = block.next()
    cursor = QTextCursor(block)
    menu = step_menu.menu_at(window.run_pane, trace.cursorRect(cursor).center())
    assert menu is not None
    next(a for a in menu.actions() if a.text().startswith("Inspect")).trigger()


def every_opener(window: MainWindow) -> Iterator[tuple[str, Callable[[], object]]]:
    yield from openers(window)
    yield "Help → Keyboard shortcuts", menu_action(window, "&Help", "&Keyboard shortcuts").trigger
    yield "Inspect…", lambda: inspect_step(window)
    versions = window.prompt_panel.versions

    def name_version() -> None:
        window.prompt_panel.show_versions()
        versions.select(window.current_scenario().prompt_history[0].id)
        versions.name_button.click()

    yield "Versions → Name…", name_version


def on_screen(dialog: QWidget) -> list[str]:
    """What of ``dialog`` is off the screen or out of view: empty if nothing."""
    problems = []
    if not SCREEN.contains(dialog.frameGeometry()):
        problems.append(f"{dialog.frameGeometry()} is not within {SCREEN}")
    for box in dialog.findChildren(QDialogButtonBox):
        buttons = [b for b in box.findChildren(QAbstractButton) if b.isVisible()]
        problems += [f"{b.text()!r} out of view" for b in buttons if not fully_shown(b)]
    return problems


def test_every_dialog_fits_a_1280_by_720_screen(
    qtbot: QtBot, window: MainWindow, screen_of_720: QRect
) -> None:
    window.resize(1280, 720)
    window.set_scenario(fast("brightgrid", 0))
    window.run_button.click()
    compare = window.compare
    compare.run_all()
    qtbot.waitUntil(lambda: not window.run_pane.running and not compare.running, timeout=15000)
    seen, misfits = [], {}
    for name, dialog in each_dialog(qtbot, every_opener(window)):
        seen.append(name)
        if problems := on_screen(dialog):
            misfits[name] = problems
    assert misfits == {}
    assert len(seen) >= 13, seen


def test_a_dialog_taller_than_the_screen_scrolls_inside(
    qtbot: QtBot, window: MainWindow, screen_of_720: QRect
) -> None:
    dialog = QDialog(window)
    layout = QVBoxLayout(dialog)
    labels = [QLabel(f"Row {i}") for i in range(60)]  # ~1,200 px of rows that cannot shrink
    for label in labels:
        label.setMinimumHeight(20)
        layout.addWidget(label)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok)
    layout.addWidget(buttons)
    assert dialog.minimumSizeHint().height() > SCREEN.height()
    dialog.open()
    qtbot.waitUntil(dialog.isVisible, timeout=2000)
    assert on_screen(dialog) == []
    area = dialog.findChild(QScrollArea)
    assert area is not None
    assert area.verticalScrollBar().maximum() > 0
    area.ensureWidgetVisible(labels[-1])
    qtbot.waitUntil(lambda: fully_shown(labels[-1]), timeout=2000)
    assert fully_shown(buttons.button(QDialogButtonBox.StandardButton.Ok))
    dialog.close()


def test_a_message_box_with_a_long_text_fits_and_keeps_it_all(
    qtbot: QtBot, window: MainWindow, screen_of_720: QRect
) -> None:
    """A message box lays its text out whole (a QGridLayout: nothing to scroll), so a long one,
    a server's 400-line error say, stood taller than the screen with its OK button below it.
    Its first lines show; all of it is under Show Details…, nothing lost."""
    text = "\n".join(f"line {i}: the server said something long" for i in range(400))
    box = plain.message_box(
        QMessageBox.Icon.Warning, "Run failed", text, QMessageBox.StandardButton.Ok, window
    )
    box.open()
    qtbot.waitUntil(box.isVisible, timeout=2000)
    assert on_screen(box) == []
    assert box.text().startswith("line 0:")
    assert box.detailedText() == text
    box.close()
    informed = plain.message_box(
        QMessageBox.Icon.Warning, "Run failed", "Short.", parent=window, informative=text
    )
    informed.open()
    qtbot.waitUntil(informed.isVisible, timeout=2000)
    assert on_screen(informed) == []
    assert informed.detailedText() == text
    informed.close()


def test_the_window_starts_within_a_1280_by_720_screen(
    make_window: Callable[..., MainWindow], screen_of_720: QRect
) -> None:
    """Its first size (1200x800) stood 80 px below a 720-px screen's edge: Max steps and the
    dialect out of reach, under an X server with no window manager to move it."""
    window = make_window()
    window.show()
    assert SCREEN.contains(window.frameGeometry()), window.frameGeometry()
    assert window.width() == 1200
