"""Unsaved edits survive what closes a window: two windows closing one after the other, a
SIGTERM at logout (the app closes its window as the close button does), a crash (SIGKILL).
Each window keeps its own edits on disk half a second after a change, and at least every
second while the user types without a pause; the next windows take them back, one set each."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from sandbox_app.ui.window.kept_edits import kept_edits_folder
from sandbox_app.ui.window.main_window import MainWindow

# Another process with a window on the same settings: it types, then waits to be killed.
CHILD = """
import sys
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtTest import QTest
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


def test_a_killed_window_loses_no_edits(
    qtbot: QtBot, make_window: Callable[..., MainWindow], settings: QSettings
) -> None:
    text = "Typed just before SIGKILL"
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
            child.send_signal(signal.SIGKILL)
            assert child.wait(timeout=30) != 0
        finally:
            if child.poll() is None:
                child.kill()
    restored = make_window()
    assert restored.prompt_panel.question() == text


def test_steady_typing_is_kept_without_waiting_for_a_pause(
    qtbot: QtBot, window: MainWindow, settings: QSettings
) -> None:
    """A key every 50 ms, for 6 s: the half-second pause never comes, yet what is typed is
    on disk within about a second of the first key (before, nothing until the typing
    stopped: a crash then lost all of it)."""
    edit = window.prompt_panel.question_edit
    edit.setFocus()
    typed: list[str] = []
    typist = QTimer(window)
    typist.setInterval(50)

    def key() -> None:
        letter = "abcdefghijklmnopqrstuvwxyz"[len(typed) % 26]
        QTest.keyClick(edit, letter)
        typed.append(letter)
        if len(typed) == 120:
            typist.stop()

    typist.timeout.connect(key)
    typist.start()
    qtbot.waitUntil(lambda: '"question": "abcd' in kept_texts(settings), timeout=4000)
    assert typist.isActive()  # still typing: kept without a pause
    typist.stop()


# The app as `react-sandbox` starts it; given a text, it types it into the question once the
# window shows and says so (the test then sends SIGTERM); without, it prints the question
# the window shows (restored from the kept edits) and closes.
APP = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from sandbox_app.ui.window.app import run_app
from sandbox_app.ui.window.main_window import MainWindow

app = QApplication(sys.argv[:1])

def act():
    shown = [w for w in app.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
    if not shown:
        QTimer.singleShot(20, act)
        return
    if sys.argv[1:]:
        shown[0].prompt_panel.question_edit.setPlainText(sys.argv[1])
        print("typed", flush=True)
    else:
        print("question:", shown[0].prompt_panel.question(), flush=True)
        shown[0].close()

QTimer.singleShot(0, act)
sys.exit(run_app(None))
"""


def test_sigterm_closes_the_app_as_its_close_button_does_and_keeps_the_edits(
    tmp_path: Path,
) -> None:
    """SIGTERM the moment after typing, before the half second: the app keeps the edits,
    exits 0, and the next start shows them (before, SIGTERM ended it on the spot)."""
    text = "Typed just before SIGTERM"
    env = {**os.environ, "HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen"}
    env |= {"XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data")}
    child = subprocess.Popen(
        [sys.executable, "-c", APP, text],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    with child:
        try:
            assert child.stdout is not None
            ready, _, _ = select.select([child.stdout], [], [], 60)
            assert ready, "the app never said it typed"
            assert child.stdout.readline() == "typed\n"
            child.send_signal(signal.SIGTERM)
            assert child.wait(timeout=60) == 0
        finally:
            if child.poll() is None:
                child.kill()
    again = subprocess.run(
        [sys.executable, "-c", APP], env=env, capture_output=True, text=True, timeout=120
    )
    assert again.returncode == 0, again.stderr
    assert f"question: {text}" in again.stdout.splitlines(), again.stdout + again.stderr
