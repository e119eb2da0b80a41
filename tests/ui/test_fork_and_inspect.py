"""Inspect a step's exact request, fork a kept run from a step with another model, rerun one
step: through the same engine, checked at the test server."""

from __future__ import annotations

import json

from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from sandbox_app.core.running.fork import exchanges_of
from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.ui.window.main_window import MainWindow
from tests.helpers import replies_of
from tests.model_server import ModelScript, ModelServer

REPLIES = replies_of("brightgrid")  # search, calculator, answer
OTHER = [
    "unused: a fork never asks for step 1",
    "Thought: I will check with the calculator.\nAction: calculator[20 * 12 * 7]",
    "Thought: Done.\nAnswer: $1,680 a year",
]


def run_on(qtbot: QtBot, window: MainWindow, server: ModelServer) -> None:
    server.set_model("first", ModelScript(replies=REPLIES))
    server.set_model("other", ModelScript(replies=OTHER))
    window.backend_panel.select("custom", server.base_url, "first")
    window.backend_panel.key_edit.setText("sk-test-secret")
    window.start_run()
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=20000)


def wait_for_run(qtbot: QtBot, window: MainWindow) -> None:
    qtbot.waitUntil(lambda: window.run_pane.running, timeout=2000)
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=20000)


def test_the_inspector_shows_exactly_what_the_server_received(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    run_on(qtbot, window, fake_server)
    pane = window.run_pane
    dialog = pane.inspect(2)
    assert dialog is not None
    record = pane.shown_record()
    assert record is not None
    (exchange,) = exchanges_of(record.events, 2)
    assert exchange.request["messages"] == fake_server.requests[1]["messages"]
    assert exchange.request["model"] == "first"
    assert exchange.reply.startswith("Thought: Pro costs $20")
    assert exchange.finish_reason == "stop"
    assert exchange.first_token_s is not None
    shown = dialog.text.toPlainText()
    assert json.loads(shown)["request"]["messages"] == fake_server.requests[1]["messages"]
    dialog.copy_curl()
    curl = QApplication.clipboard().text()
    assert curl.startswith(f"curl {fake_server.base_url}/chat/completions")
    assert "$REACT_SANDBOX_API_KEY" in curl  # the variable the key rule reads for this URL
    assert "sk-test-secret" not in curl + shown  # never the key


def test_fork_from_step_1_with_another_model(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    run_on(qtbot, window, fake_server)
    pane = window.run_pane
    original = pane.trace.plain_text()
    step_2_request = fake_server.requests[1]
    window.backend_panel.select("custom", fake_server.base_url, "other")
    assert pane.fork(1)
    wait_for_run(qtbot, window)
    forked = fake_server.requests[3]
    assert forked["model"] == "other"
    assert forked["messages"] == step_2_request["messages"]  # exactly step 1's history
    assert len(fake_server.requests) == 5  # the fork asked for steps 2 and 3 only
    assert [pane.run_picker.itemText(i) for i in range(pane.run_picker.count())] == [
        "Run 1",
        "Run 2 (fork of Run 1 at step 1)",
    ]
    trace = pane.trace.plain_text()
    assert trace.startswith("── Step 1 · prompt ")  # step 1 as it was, metered
    assert trace.split("\n")[1] == "Thought: I need the price of Brightgrid Pro per developer."
    # Where the fork's own steps begin is marked.
    assert trace.index("── forked from Run 1 at step 1 ──") < trace.index("── Step 2 · prompt")
    assert "Answer: $1,680 a year" in trace
    assert window.answer_label.text() == "$1,680 a year"
    pane.show_run(0)  # the original run is kept as it was
    assert pane.trace.plain_text() == original


def test_rerun_step_2_sends_only_step_2_again(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    run_on(qtbot, window, fake_server)
    pane = window.run_pane
    assert pane.fork(2, rerun=True)
    wait_for_run(qtbot, window)
    assert len(fake_server.requests) == 4  # one request more: step 2's
    assert fake_server.requests[3]["messages"] == fake_server.requests[1]["messages"]
    # Said as what it is: one step asked again, its turn beside the original's.
    assert pane.run_picker.itemText(1) == "Run 2 (rerun of step 2 of Run 1)"
    assert window.answer_label.isEnabled()
    assert window.answer_label.text().endswith("Action: calculator[20 * 12 * 7]")
    assert window.answer_status.text().startswith("↻ Rerun of step 2 (its action was not run)")
    assert "Run 1's step 2 was: Thought: Pro costs $20" in window.answer_status.text()
    trace = pane.trace.plain_text()
    assert trace.index("── rerun of step 2 of Run 1 ──") < trace.index("── Step 2 · prompt")


def test_a_fork_in_a_lane_stays_in_that_lane(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    fake_server.set_model("first", ModelScript(replies=REPLIES))
    compare = window.compare
    compare.set_lanes((LaneConfig("custom", fake_server.base_url, "first"),) * 2)
    window.tabs.setCurrentWidget(compare)
    compare.run_all()
    qtbot.waitUntil(lambda: not compare.running, timeout=20000)
    left, right = compare.lanes
    assert left.pane.fork(1)
    qtbot.waitUntil(lambda: len(left.pane.history) == 2 and not compare.running, timeout=20000)
    assert len(right.pane.history) == 1
    assert left.pane.run_picker.count() == 2


def test_nothing_to_fork_past_the_last_step(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    run_on(qtbot, window, fake_server)
    pane = window.run_pane
    assert not pane.fork(3)  # the run ended there
    assert pane.step_at(0) == 1  # the first line is step 1's separator
    last = pane.trace.document().blockCount() - 1
    assert pane.step_at(last) == 3
