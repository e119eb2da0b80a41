"""The mouse wheel changes a value only where the user means it (ui/common/wheel_rule.py): no
combo box, spin box or slider in the window or in any dialog it opens takes a wheel event it
has not got the focus for; one with the focus still does; and wheeling over one in the left
panel scrolls the panel."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QAction, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QMenu,
    QPushButton,
    QScrollBar,
    QSpinBox,
    QWidget,
)
from pytestqt.qtbot import QtBot

from sandbox_app.ui.compare.test_set_editor import TestSetEditor
from sandbox_app.ui.lane import step_menu
from sandbox_app.ui.window.main_window import MainWindow
from tests.ui.test_window import fast

NOTCH = 120  # one click of a mouse wheel, in eighths of a degree


def controls(root: QWidget) -> list[QWidget]:
    """Every control a wheel would change: combo boxes, spin boxes, sliders (not scroll bars)."""
    found = [root, *root.findChildren(QWidget)]
    wheeled = (QComboBox, QAbstractSpinBox, QAbstractSlider)
    return [w for w in found if isinstance(w, wheeled) and not isinstance(w, QScrollBar)]


def state(widget: QWidget) -> object:
    if isinstance(widget, QComboBox):
        return widget.currentIndex(), widget.currentText()
    if isinstance(widget, QSpinBox | QDoubleSpinBox | QAbstractSlider):
        return widget.value()
    assert isinstance(widget, QAbstractSpinBox)
    return widget.text()


def wheel(widget: QWidget, notches: int) -> None:
    """A wheel event sent to ``widget`` at its centre, as Qt delivers one to what is under
    the pointer."""
    centre = QPointF(widget.rect().center())
    QApplication.sendEvent(
        widget,
        QWheelEvent(
            centre,
            widget.mapToGlobal(centre),
            QPoint(),
            QPoint(0, notches * NOTCH),
            Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
            Qt.ScrollPhase.NoScrollPhase,
            False,
        ),
    )


def wheeled_unchanged(root: QWidget) -> list[str]:
    """Wheel every unfocused control under ``root`` up and down; the ones that changed."""
    changed = []
    for widget in controls(root):
        if widget.hasFocus():
            continue
        for notches in (1, -1):  # one of the two moves it, wherever it stands in its range
            before = state(widget)
            wheel(widget, notches)
            if state(widget) != before:
                changed.append(f"{type(widget).__name__} {widget.toolTip()[:50]!r}: {before}")
    return changed


def dialogs_opened_by(qtbot: QtBot, open_it: Callable[[], object]) -> list[QDialog]:
    """The dialogs that ``open_it`` opens, shown."""

    def shown() -> list[QDialog]:
        return [
            w for w in QApplication.topLevelWidgets() if isinstance(w, QDialog) and w.isVisible()
        ]

    before = {id(w) for w in shown()}

    def new() -> list[QDialog]:
        return [w for w in shown() if id(w) not in before]

    open_it()
    qtbot.waitUntil(lambda: bool(new()), timeout=5000)
    return new()


def each_dialog(
    qtbot: QtBot, openers: Iterable[tuple[str, Callable[[], object]]]
) -> Iterator[tuple[str, QDialog]]:
    """Each dialog the ``openers`` open, shown, as ("OPENER Type", dialog) — Edit cases…'s
    Judge… dialog over it too —, closed once the caller has looked at them."""
    for name, open_it in openers:
        dialogs = dialogs_opened_by(qtbot, open_it)
        if name == "Edit cases…":  # and the Judge… and Generate cases… dialogs over it
            (editor,) = dialogs
            assert isinstance(editor, TestSetEditor)
            dialogs += dialogs_opened_by(qtbot, editor.judge_button.click)
            generate = next(b for b in editor.findChildren(QPushButton) if "Generate" in b.text())
            dialogs += dialogs_opened_by(qtbot, generate.click)
        for dialog in dialogs:
            yield f"{name} {type(dialog).__name__}", dialog
        for dialog in reversed(dialogs):
            dialog.close()


def menu_titled(window: MainWindow, title: str) -> QMenu:
    """The menu of the menu bar titled ``title``, a submenu as well. Found as the menu bar's
    child, not by ``QAction.menu()``: on PySide6 6.8 and 6.9 the QMenu that call returns is
    a dead wrapper once the action's own wrapper is gone (a generator's, say)."""
    return next(m for m in window.menuBar().findChildren(QMenu) if m.title() == title)


def menu_action(window: MainWindow, *path: str) -> QAction:
    """The menu bar's entry at ``path`` (menu titles, then the entry's text)."""
    return next(a for a in menu_titled(window, path[-2]).actions() if a.text() == path[-1])


def add_to_test_set(window: MainWindow) -> None:
    """The Run tab trace's right-click menu: Add to test set…"""
    menu = step_menu.menu_at(window.run_pane, QPoint(5, 5))
    assert menu is not None
    next(a for a in menu.actions() if a.text() == "Add to test set…").trigger()


def openers(window: MainWindow) -> Iterator[tuple[str, Callable[[], object]]]:
    """What opens each of the window's dialogs, as a user opens it. A new dialog: a line here."""
    compare, tools = window.compare, window.tool_panel
    yield "Your tools…", tools.edit_button.click
    yield "MCP servers…", tools.mcp_button.click
    yield "Add to test set…", lambda: add_to_test_set(window)
    yield "Prices…", compare.prices_button.click
    yield "Matrix…", compare.matrix_button.click
    yield "Diff lanes…", compare.diff_button.click
    yield "Edit cases…", compare.eval_panel.edit_button.click
    yield "Improve prompt…", window.prompt_panel.versions.improve_button.click
    yield "View → History…", menu_action(window, "&View", "&History…").trigger
    otel = menu_action(window, "&File", "Export as Open&Telemetry", "&Run…")
    yield "File → Export as OpenTelemetry → Run…", otel.trigger


def test_no_unfocused_control_anywhere_takes_the_wheel(qtbot: QtBot, window: MainWindow) -> None:
    window.set_scenario(fast("brightgrid", 0))
    # Runs to open the dialogs that need one: the Run tab's, and every lane's for Diff lanes.
    window.run_button.click()
    compare = window.compare
    compare.run_all()
    qtbot.waitUntil(lambda: not window.run_pane.running and not compare.running, timeout=15000)
    for lane in compare.lanes:  # every lane's settings on screen, as Settings shows them
        if not lane.settings_button.isChecked():
            lane.settings_button.click()
    in_window = controls(window)
    assert len(in_window) >= 40  # the three panels, both lanes' forms, the toolbars
    assert wheeled_unchanged(window) == []

    seen: dict[str, int] = {}
    for name, dialog in each_dialog(qtbot, openers(window)):
        seen[name] = len(controls(dialog))
        assert wheeled_unchanged(dialog) == [], name
    # The walk reached the dialogs that hold such controls.
    holding = {name for name, count in seen.items() if count}
    assert holding >= {
        "Your tools… MockToolsEditor",
        "MCP servers… McpServersDialog",
        "Add to test set… AddToTestSet",
        "Diff lanes… TraceDiffDialog",
        "Edit cases… JudgeDialog",
        "Edit cases… CasesDialog",
        "Improve prompt… ImproveDialog",
    }, seen


def test_a_control_with_the_focus_still_takes_the_wheel(qtbot: QtBot, window: MainWindow) -> None:
    combo = window.tool_panel.dialect_combo
    window.editors.ensureWidgetVisible(combo)
    qtbot.waitExposed(window)
    window.activateWindow()
    combo.setFocus()
    qtbot.waitUntil(combo.hasFocus, timeout=2000)
    before = combo.currentIndex()
    notches = 1 if before == combo.count() - 1 else -1  # down the list, unless at its end
    centre = QPointF(combo.mapTo(window, combo.rect().center()))
    QTest.wheelEvent(window.windowHandle(), centre, QPoint(0, notches * NOTCH))
    qtbot.waitUntil(lambda: combo.currentIndex() != before, timeout=2000)
    assert window.current_scenario().prompt_dialect == combo.currentText()  # a new dialect


def test_the_wheel_over_the_left_panels_slider_scrolls_the_panel(
    qtbot: QtBot, window: MainWindow
) -> None:
    window.resize(1200, 800)
    slider = window.tool_panel.max_steps_slider
    bar = window.editors.verticalScrollBar()
    qtbot.waitExposed(window)
    window.column.bar.settings_button.click()  # the model's settings open above the editors
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=2000)  # the panel is taller than shown
    bar.setValue(0)
    window.editors.ensureWidgetVisible(slider)
    top, steps = bar.value(), slider.value()
    assert top > 0  # scrolled down to it: the wheel upwards scrolls the panel back
    # What a mouse wheel does: an event at the pointer, which Qt hands from widget to parent.
    centre = QPointF(slider.mapTo(window, slider.rect().center()))
    QTest.wheelEvent(window.windowHandle(), centre, QPoint(0, NOTCH))
    qtbot.waitUntil(lambda: bar.value() < top, timeout=2000)
    assert slider.value() == steps
    assert not slider.hasFocus()  # the wheel gave it no focus: the next notch scrolls too
