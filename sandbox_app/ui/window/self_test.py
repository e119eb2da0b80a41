"""``react-sandbox --self-test``: the real window, offscreen, runs the built-in default scenario
on the offline model and checks the answer. What an installed wheel and a frozen bundle are
checked with: it needs Qt's plugins, the package's resources and the engine all in place.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from sandbox_app.core.results.verdict import matches
from sandbox_app.core.scenarios.scenario_file import default_scenario

TIMEOUT_S = 60.0


def self_test() -> int:
    """0 when the window answered the default question right; 1 with one line saying why not."""
    try:
        problem = _run()
    except Exception as err:  # a missing plugin or resource: one line, never a traceback
        problem = f"{type(err).__name__}: {err}"
    if problem:
        sys.stderr.write(f"react-sandbox self-test failed: {problem}\n")
        return 1
    sys.stdout.write(
        "react-sandbox self-test passed: the window answered $1,680 per year offline.\n"
    )
    return 0


def _run() -> str:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt starts: no display needed
    import qasync
    from PySide6.QtCore import QSettings, qInstallMessageHandler
    from PySide6.QtWidgets import QApplication

    from sandbox_app.ui.window.app import app_wide_rules, use_a_utf8_locale
    from sandbox_app.ui.window.main_window import MainWindow

    # The offscreen platform says it cannot size native windows; nothing a user must read.
    qInstallMessageHandler(
        lambda _kind, _context, text: (
            None if "propagateSizeHints" in text else sys.stderr.write(f"{text}\n")
        )
    )
    existing = QApplication.instance()
    use_a_utf8_locale()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app_wide_rules(app)
    app.setQuitOnLastWindowClosed(False)
    with tempfile.TemporaryDirectory() as home:  # never the user's settings or kept edits
        settings = QSettings(str(Path(home) / "settings.ini"), QSettings.Format.IniFormat)
        window = MainWindow(settings)
        scenario = default_scenario()
        window.set_scenario(replace(scenario, script=replace(scenario.script, tokens_per_second=0)))
        try:
            answer = qasync.run(_answer(window))
        finally:
            window.close()
    if answer is None:
        return f"no answer within {TIMEOUT_S:g} s"
    if not matches(answer, scenario.expected):
        return f"answered {answer!r}, expected {scenario.expected.answer!r}"  # type: ignore[union-attr]
    return ""


async def _answer(window: object) -> str | None:
    from sandbox_app.ui.window.app import prepare_loop
    from sandbox_app.ui.window.main_window import MainWindow

    assert isinstance(window, MainWindow)
    prepare_loop(asyncio.get_running_loop())
    window.show()
    window.start_run()
    deadline = time.monotonic() + TIMEOUT_S
    while window.run_pane.running or window.run_pane.history.latest is None:
        if time.monotonic() > deadline:
            await window.shutdown()
            return None
        await asyncio.sleep(0.02)
    await window.shutdown()
    record = window.run_pane.history.latest
    finished = record.finished if record is not None else None
    if finished is None or finished.status != "answered":
        reason = finished.reason if finished is not None else "the run did not finish"
        raise RuntimeError(f"the run ended without an answer: {reason}")
    return finished.answer
