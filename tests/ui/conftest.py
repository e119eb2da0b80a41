"""Window fixtures: a qasync loop on pytest-qt's QApplication, and windows with own settings."""

from __future__ import annotations

import asyncio
import gc
import inspect
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import qasync
from PySide6.QtCore import QCoreApplication, QEvent, QSettings
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox, QPlainTextEdit, QPushButton
from pytestqt.qtbot import QtBot

from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.core.tools import Tool
from sandbox_app.ui.window.app import app_wide_rules, prepare_loop
from sandbox_app.ui.window.main_window import MainWindow
from tests.ui.desktop_fonts import apply_chosen


def _condition(callback: Callable[[], object]) -> str:
    try:
        return " ".join(inspect.getsource(callback).split())  # type: ignore[arg-type]
    except (OSError, TypeError):
        return repr(callback)


def _screen() -> str:
    """What the user would see: each open window's and dialog's labels, buttons and text."""
    parts: list[str] = []
    for top in QApplication.topLevelWidgets():
        if not top.isVisible():
            continue
        seen = [f"{type(top).__name__} {top.windowTitle()!r}"]
        if isinstance(top, QMessageBox):
            seen.append(f"text={top.text()!r}")
        for label in top.findChildren(QLabel):
            if label.isVisible() and label.text():
                seen.append(f"label={label.text()!r}")
        for button in top.findChildren(QPushButton):
            if button.isVisible():
                seen.append(f"button={button.text()!r}{'' if button.isEnabled() else ' (off)'}")
        for edit in top.findChildren(QPlainTextEdit):
            if edit.isVisible() and edit.isReadOnly() and edit.toPlainText():
                seen.append(f"text ending {edit.toPlainText()[-160:]!r}")
        parts.append("; ".join(seen))
    return "\n  ".join(parts)[:4000] or "no window open"


@pytest.fixture(autouse=True)
def desktop_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    """The window and its dialogs fit a desktop's screen (ui/common/screen_fit.py), not the
    offscreen platform's 800x800: a window starts at the size it asks for (1200x800), as on a
    desktop; a test of a smaller screen sets its own."""
    from PySide6.QtCore import QRect

    from sandbox_app.ui.common import screen_fit

    monkeypatch.setattr(screen_fit, "available", lambda _widget: QRect(0, 0, 1920, 1080))


@pytest.fixture(scope="session", autouse=True)
def app_rules(qapp: QApplication) -> None:
    """pytest-qt's application gets what the app's own gets (the wheel rule, …), the same way;
    and the desktop font asked for (desktop_fonts.py)."""
    app_wide_rules(qapp)
    apply_chosen(qapp)


@pytest.fixture(autouse=True)
def waits_say_what_they_saw(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    """A qtbot.waitUntil that times out names its condition and what was on screen then."""
    wait_until = qtbot.waitUntil

    def reporting(callback: Callable[[], object], *, timeout: int = 5000) -> None:
        __tracebackhide__ = True
        try:
            wait_until(callback, timeout=timeout)
        except qtbot.TimeoutError as err:
            raise qtbot.TimeoutError(
                f"{err}, waiting for: {_condition(callback)}\n  on screen: {_screen()}"
            ) from err.__cause__

    monkeypatch.setattr(qtbot, "waitUntil", reporting)
    monkeypatch.setattr(qtbot, "wait_until", reporting)


@pytest.fixture
def qloop(qapp: QApplication, qtbot: QtBot) -> Iterator[qasync.QEventLoop]:
    """An asyncio loop that runs whenever Qt processes events (as in the app, via qasync).

    Exceptions raised in loop callbacks fail the test instead of being logged and forgotten.
    """
    # The test server runs in a thread; if Python's cyclic GC fired there it would delete a
    # previous test's Qt objects off the GUI thread and crash. Collect only here, on the GUI
    # thread, at teardown.
    gc.disable()
    hooks = sys.get_asyncgen_hooks()
    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(loop)
    prepare_loop(loop)
    errors: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    yield loop
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in pending:
        task.cancel()
    qtbot.waitUntil(lambda: all(t.done() for t in pending), timeout=5000)
    # Finalise abandoned async generators (HTTP streams) while the loop can still run them.
    gc.collect()
    shutdown = loop.create_task(loop.shutdown_asyncgens())
    qtbot.waitUntil(shutdown.done, timeout=5000)
    # qasync's stop() also calls QApplication.exit(), which leaves pytest-qt's QApplication
    # unable to run the next test's tasks; clear the running flag it set instead, then close
    # the loop so its thread pool is shut down.
    loop._QEventLoop__is_running = False  # type: ignore[attr-defined]
    asyncio.events._set_running_loop(None)
    loop.close()
    asyncio.set_event_loop(None)
    sys.set_asyncgen_hooks(*hooks)
    gc.collect()
    gc.enable()
    assert errors == [], f"unhandled exceptions in event-loop callbacks: {errors}"


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def make_window(
    qtbot: QtBot, qloop: qasync.QEventLoop, settings: QSettings
) -> Iterator[Callable[..., MainWindow]]:
    """Build shown windows; afterwards stop their runs and delete them on the GUI thread."""
    windows: list[MainWindow] = []

    def make(extra_tools: list[Tool] | None = None) -> MainWindow:
        win = MainWindow(settings, KeyStore(), tools=extra_tools)
        win.show()
        windows.append(win)
        return win

    yield make
    for win in windows:
        win.controller.stop()
        qtbot.waitUntil(lambda w=win: not w.controller.running, timeout=5000)
        win.close()
        win.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture
def window(make_window: Callable[..., MainWindow]) -> MainWindow:
    return make_window()


@pytest.fixture
def window_without_history(
    settings: QSettings, tmp_path: Path, make_window: Callable[..., MainWindow]
) -> MainWindow:
    """A window whose history file is damaged: history is off (said in one line), and
    everything else must work as before."""
    from sandbox_app.ui.history.history_actions import SETTING

    damaged = tmp_path / "damaged.sqlite3"
    damaged.write_bytes(b"\x00not a database" * 300)
    settings.setValue(SETTING, str(damaged))
    return make_window()
