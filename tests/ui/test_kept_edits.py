"""Unsaved edits survive what closes a window: two windows closing one after the other, a
SIGTERM at logout, a crash (SIGKILL). Each window keeps its own edits on disk half a second
after a change; the next windows take them back, one set each."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from sandbox_app.ui.window.kept_edits import kept_edits_folder
from sandbox_app.ui.window.main_window import MainWindow

# Another process with a window on the same settings: it types, then waits to be killed.
CHILD = """
import sys
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.ui.window.main_window import MainWindow

app = QApplication([])
window = MainWindow(QSettings(sys.argv[1], QSettings.Format.IniFormat), KeyStore())
window.show()
window.prompt_panel.question_edit.setPlainText(sys.argv[2])
app.exec()
"""


def kept_texts(settings: QSettings) -> str:
    folder = kept_edits_folder(settings)
    return "".join(p.read_text(encoding="utf-8") for p in folder.glob("*.json"))


def test_two_windows_closing_keep_both_sets_of_edits(
    qtbot: QtBot, make_window: Callable[..., MainWindow]
) -> None:
    first, second = make_window(), make_window()
    first.prompt_panel.question_edit.setPlainText("Edits in the first window")
    second.prompt_panel.question_edit.setPlainText("Edits in the second window")
    first.close()
    second.close()
    third, fourth = make_window(), make_window()
    questions = {third.prompt_panel.question(), fourth.prompt_panel.question()}
    assert questions == {"Edits in the first window", "Edits in the second window"}


def test_a_window_that_opens_while_another_has_edits_says_more_are_waiting(
    qtbot: QtBot, make_window: Callable[..., MainWindow]
) -> None:
    first, second = make_window(), make_window()
    first.prompt_panel.question_edit.setPlainText("One")
    second.prompt_panel.question_edit.setPlainText("Two")
    first.close()
    second.close()
    third = make_window()
    assert "1 more set of unsaved edits" in third.statusBar().currentMessage()


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_a_killed_window_loses_no_edits(
    qtbot: QtBot,
    make_window: Callable[..., MainWindow],
    settings: QSettings,
    how: signal.Signals,
) -> None:
    text = f"Typed just before {how.name}"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, settings.fileName(), text],
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    with child:  # on leaving: its pipe closed
        try:
            # Kept without any close: that is what a signal or a crash leaves behind.
            qtbot.waitUntil(
                lambda: text in kept_texts(settings) or child.poll() is not None, timeout=30000
            )
            assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
            child.send_signal(how)
            assert child.wait(timeout=30) != 0
        finally:
            if child.poll() is None:
                child.kill()
    restored = make_window()
    assert restored.prompt_panel.question() == text
