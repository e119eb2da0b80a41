"""Improve prompt… and Generate cases… on the offline example, rendered to PNGs (with
REACT_SANDBOX_SCREENSHOTS=docs under Xvfb and QT_QPA_PLATFORM=xcb: the docs' pictures, as
tests/ui/test_screenshot.py does for the window). The first is also taken in the middle of
the loop, beside the test's own files, to be looked at."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QPushButton, QWidget
from pytestqt.qtbot import QtBot

from sandbox_app.core.scenarios.scenario_file import load_scenario, scenarios_dir
from sandbox_app.ui.window.main_window import MainWindow
from tests.ui.test_screenshot import shots

__all__ = ["shots"]  # a fixture, for pytest


def open_example(window: MainWindow, folder: Path, tokens_per_second: float = 0) -> None:
    path = folder / "improve_offline.json"
    shutil.copy(scenarios_dir() / "improve_offline.json", path)
    scenario = load_scenario(path)
    script = replace(scenario.script, tokens_per_second=tokens_per_second)
    window.set_scenario(scenario.with_changes(script=script), path)


def saved(widget: QWidget, path: Path) -> QImage:
    assert widget.grab().save(str(path))
    image = QImage(str(path))
    colours = {
        image.pixelColor(x, y).name()
        for x in range(0, image.width(), 9)
        for y in range(0, image.height(), 9)
    }
    assert len(colours) > 10  # not a blank picture: the diff's colours are in it
    return image


def test_screenshot_of_improve_prompt(
    qtbot: QtBot, window: MainWindow, shots: Path, tmp_path: Path
) -> None:
    window.resize(1280, 800)
    open_example(window, tmp_path, tokens_per_second=2000)  # slow enough to be seen running
    window.prompt_panel.show_versions()
    window.prompt_panel.versions.improve_button.click()
    dialog = window.improving.dialog
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.progress.value() >= 14, timeout=60_000)
    saved(dialog, tmp_path / "improve-prompt-running.png")
    qtbot.waitUntil(lambda: dialog.outcome is not None, timeout=120_000)
    assert "better" in dialog.verdict.text()
    verdict = dialog.verdict  # its wrapped lines laid out before the picture
    qtbot.waitUntil(lambda: verdict.height() >= verdict.heightForWidth(verdict.width()))
    image = saved(dialog, shots / "improve-prompt.png")
    assert image.width() >= 900


def test_screenshot_of_generate_cases(
    qtbot: QtBot, window: MainWindow, shots: Path, tmp_path: Path
) -> None:
    window.resize(1280, 800)
    open_example(window, tmp_path)
    panel = window.compare.eval_panel
    panel.edit_button.click()
    editor = panel.editor
    assert editor is not None
    generate = next(b for b in editor.findChildren(QPushButton) if b.text() == "Generate cases…")
    generate.click()
    dialog = window.improving.cases_dialog
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    dialog.count_spin.setValue(4)
    dialog.generate_button.click()
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 4, timeout=10_000)
    dialog.table.resizeRowsToContents()
    saved(dialog, shots / "generate-cases.png")
