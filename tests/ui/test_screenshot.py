"""Render the window after a finished run to a PNG, as users will first see it.

Set REACT_SANDBOX_SCREENSHOT to a path to refresh the README's picture (run it under Xvfb
with QT_QPA_PLATFORM=xcb for a real window); otherwise the PNG goes to a temporary folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from pytestqt.qtbot import QtBot

from sandbox_app.ui.main_window import MainWindow
from tests.ui.test_window import fast


def test_screenshot_of_a_finished_run(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    window.resize(1280, 800)
    window.set_scenario(fast("failure_modes", tokens_per_second=0))
    qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.answer_label.isVisible(), timeout=15000)
    window.trace.flush()
    target = Path(os.environ.get("REACT_SANDBOX_SCREENSHOT") or tmp_path / "window.png")
    assert window.grab().save(str(target))
    image = QImage(str(target))
    assert (image.width(), image.height()) == (1280, 800)
    # Not a blank picture: the trace's colours are in it.
    colours = {
        image.pixelColor(x, y).name() for x in range(640, 1280, 7) for y in range(80, 800, 7)
    }
    assert len(colours) > 10
