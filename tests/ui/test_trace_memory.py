"""A pane keeps a bounded trace on screen; the run record keeps the whole run."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from sandbox_app.ui.common.theme import styles_for
from sandbox_app.ui.trace import trace_view
from sandbox_app.ui.trace.highlighter import Role
from sandbox_app.ui.trace.trace_view import TraceView
from sandbox_app.ui.window.main_window import MainWindow


@pytest.fixture
def small_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_view, "MAX_TRACE_CHARS", 5_000)
    monkeypatch.setattr(trace_view, "TRIM_TO_CHARS", 3_000)


@pytest.mark.usefixtures("small_limit")
def test_a_long_trace_drops_whole_blocks_from_the_top_and_keeps_its_colours(
    qtbot: QtBot, window: MainWindow
) -> None:
    view: TraceView = window.trace
    for step in range(1, 41):
        view.add_step(step)
        view.append_text(Role.MODEL, f"Thought: step {step} " + "x" * 150 + "\n")
        view.append_line(Role.OBSERVATION, f"Observation: {step}")
        view.flush_all()
    assert view.document().characterCount() <= 5_000
    assert view.trimmed_chars > 0
    text = view.plain_text()
    assert text.endswith("Observation: 40")
    assert "── Step 1 ──" not in text
    # The bookkeeping moved with the blocks: the last step is found and keeps its colours.
    assert view.step_block(1) is None
    last = view.document().findBlockByNumber(view.step_block(40) or -1)
    assert last.text() == "── Step 40 ──"
    assert view.role_of(last.blockNumber() + 2) is Role.OBSERVATION
    formats = last.next().next().layout().formats()
    colour = formats[0].format.foreground().color().name()
    assert colour == styles_for(view.palette())["observation"].color


@pytest.mark.usefixtures("small_limit")
def test_copy_trace_still_has_the_whole_run(qtbot: QtBot, window: MainWindow) -> None:
    from dataclasses import replace

    from PySide6.QtWidgets import QApplication

    scenario = window.scenario
    long_reply = "Thought: " + "y" * 8_000 + "\nAnswer: done"
    window.set_scenario(
        scenario.with_changes(
            script=replace(scenario.script, replies=(long_reply,), tokens_per_second=0)
        )
    )
    window.start_run()
    qtbot.waitUntil(lambda: window.answer_label.text() == "done", timeout=10000)
    assert window.trace.trimmed_chars > 0
    window.copy_trace()
    assert "y" * 8_000 in QApplication.clipboard().text()
