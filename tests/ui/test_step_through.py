"""Step-through: pause before a tool runs and before the model reads an observation, edit
either, and the tool and the next request (checked at the test server) get the edit."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from sandbox_app.ui.trace.highlighter import Role
from sandbox_app.ui.trace.trace_view import TraceView
from sandbox_app.ui.window.main_window import MainWindow
from tests.helpers import replies_of
from tests.model_server import ModelScript, ModelServer


def role_lines(trace: TraceView) -> list[tuple[str, Role]]:
    """Each line of the trace with the role it is drawn in."""
    trace.flush_all()
    document = trace.document()
    return [
        (document.findBlockByNumber(n).text(), trace.role_of(n))
        for n in range(document.blockCount())
    ]


def start_stepping(qtbot: QtBot, window: MainWindow, server: ModelServer) -> None:
    server.set_model("m", ModelScript(replies=replies_of("brightgrid")))
    window.backend_panel.select("custom", server.base_url, "m")
    window.run_pane.stepper.step()  # Step with no run going: a run, step by step
    assert window.run_pane.running


def wait_for_pause(qtbot: QtBot, window: MainWindow, says: str) -> str:
    stepper = window.run_pane.stepper
    qtbot.waitUntil(lambda: stepper.paused and says in stepper.label.text(), timeout=10000)
    return stepper.edit.toPlainText()


def test_edit_the_action_then_the_observation(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    start_stepping(qtbot, window, fake_server)
    stepper = window.run_pane.stepper
    turn = wait_for_pause(qtbot, window, "Step 1: the model's turn")
    assert turn.endswith("Action: search[Brightgrid Pro price per developer]")
    window.trace.flush_all()
    assert "Observation:" not in window.trace.plain_text()  # the tool has not run
    stepper.edit.setPlainText(turn.replace("Brightgrid Pro price per developer", "refunds"))
    stepper.step()
    observation = wait_for_pause(qtbot, window, "Step 1: the observation")
    assert observation.startswith("Refunds take 5 working days.")  # the edited input ran
    stepper.edit.setPlainText("Brightgrid Pro costs $30 per month per developer.")
    stepper.step()
    qtbot.waitUntil(lambda: len(fake_server.requests) == 2, timeout=10000)
    sent = fake_server.requests[1]["messages"]
    assert sent[-2]["content"].endswith("Action: search[refunds]")
    assert sent[-1]["content"] == "Observation: Brightgrid Pro costs $30 per month per developer."
    wait_for_pause(qtbot, window, "Step 2: the model's turn")
    stepper.run_to_end()
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=10000)
    # What ran stands in its role's colour; the original is struck through above it.
    lines = role_lines(window.trace)
    original = ("Action: search[Brightgrid Pro price per developer]", Role.DROPPED)
    heading = ("✎ You edited the model's turn; this ran instead:", Role.NOTICE)
    ran = ("Action: search[refunds]", Role.MODEL)
    assert lines.index(original) < lines.index(heading) < lines.index(ran)
    assert lines.count(ran) == 1
    old = [(text, role) for text, role in lines if text.startswith("Observation: Refunds")]
    assert old
    assert {role for _, role in old} == {Role.DROPPED}
    edit = ("Observation: Brightgrid Pro costs $30 per month per developer.", Role.OBSERVATION)
    assert lines.index(old[-1]) < lines.index(edit)
    struck = window.trace.highlighter.format_for("dropped")
    assert struck.fontStrikeOut()
    assert window.answer_label.text() == "$1,680 per year"
    assert not stepper.panel.isVisible()


def test_stop_at_a_pause_ends_the_run(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    start_stepping(qtbot, window, fake_server)
    wait_for_pause(qtbot, window, "Step 1: the model's turn")
    window.stop_run()
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=10000)
    assert window.answer_status.text().startswith("■ Stopped")
    assert not window.run_pane.stepper.panel.isVisible()
    window.start_run()  # the next run is not stepped
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=10000)
    assert window.answer_label.text() == "$1,680 per year"
