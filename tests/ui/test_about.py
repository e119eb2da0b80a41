"""Help → About names the version, the licence, Qt and Python, and the project's home."""

from __future__ import annotations

import platform

from PySide6.QtCore import QTimer, qVersion
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from sandbox_app import HOMEPAGE, __version__
from sandbox_app.ui.window.main_window import MainWindow
from tests.ui.test_wheel_rule import menu_titled


def test_help_about_shows_what_is_running(qtbot: QtBot, window: MainWindow) -> None:
    help_menu = menu_titled(window, "&Help")
    about = next(a for a in help_menu.actions() if "About" in a.text())
    seen: list[str] = []

    def read_and_close() -> None:
        box = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox))
        seen.append(box.text())
        box.accept()

    QTimer.singleShot(0, read_and_close)
    about.trigger()  # modal: returns once read_and_close has closed it
    qtbot.waitUntil(lambda: bool(seen))
    text = seen[0]
    for expected in (__version__, "MIT", qVersion(), platform.python_version(), HOMEPAGE):
        assert expected in text, (expected, text)
