"""A mock tool whose regex rule runs away leaves the window drawing: the match runs off the
GUI thread and is stopped at its time limit, and the model gets one error line (on 28
characters ``re`` froze the window for 6.6 s)."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QTimer
from pytestqt.qtbot import QtBot

from sandbox_app.core.scenarios.scenario import Script
from sandbox_app.core.tools.mock import CannedRule, MockTool, MockToolSpec
from sandbox_app.ui.window.main_window import MainWindow
from tests.helpers import builtin

LOOKUP = MockToolSpec(
    "lookup",
    "Looks a code up.",
    rules=(CannedRule(r"^(a|aa)+$", "all a", "regex"),),
    default="unknown code",
)


def test_the_window_keeps_processing_events_while_a_runaway_regex_rule_is_matched(
    qtbot: QtBot, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Watch the real rule scan: while it runs, does the window's timer still fire?
    matching = threading.Event()
    canned = MockTool._canned

    def watched(tool: MockTool, input: str) -> str:
        matching.set()
        try:
            return canned(tool, input)
        finally:
            matching.clear()

    monkeypatch.setattr(MockTool, "_canned", watched)
    ticks_while_matching = 0

    def tick() -> None:
        nonlocal ticks_while_matching
        ticks_while_matching += matching.is_set()

    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(tick)
    timer.start()

    scenario = builtin("brightgrid").with_changes(
        custom_tools=(LOOKUP,),
        enabled_tools=("lookup",),
        script=Script((f"Action: lookup[{'a' * 40}!]", "Answer: done"), tokens_per_second=0),
    )
    window.set_scenario(scenario)
    window.start_run()
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=20000)
    timer.stop()

    trace = window.run_pane.trace.plain_text()
    assert (
        "Observation: Error: lookup's rule '^(a|aa)+$' could not be matched: the pattern took "
        "longer than 0.1 s on this text and was stopped." in trace
    )
    assert "Answer: done" in trace
    assert ticks_while_matching > 0
