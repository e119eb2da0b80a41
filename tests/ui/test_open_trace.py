"""File → Open trace…: a trace written by real instrumentation (OpenInference's OpenAI
instrumentation around an openai-SDK tool-calling loop against the test server) plays in the
Run tab like a recording, its scenario (the tools it only names as mock tools) is the one
being edited, and Fork from step 1 goes on live against the test server; a bad file is one
status line and changes nothing."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from sandbox_app.ui.window.main_window import MainWindow
from sandbox_app.ui.window.recordings import SPEEDS
from tests import otel_traces
from tests.model_server import ModelServer


def _trace(server: ModelServer, folder: Path) -> Path:
    spans = otel_traces.run_agent(server, "native", "openinference")
    server.reset()
    return otel_traces.write_json(spans, folder / "agent.json")


def test_an_opened_trace_replays_and_forks_live(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer, tmp_path: Path
) -> None:
    path = _trace(fake_server, tmp_path)
    window.recordings.set_speed(dict(SPEEDS)["At once"])
    assert window.traces.open(path)
    pane = window.run_pane

    def played() -> bool:
        record = pane.shown_record()
        return record is not None and record.done

    qtbot.waitUntil(played)
    trace = pane.trace.plain_text()
    assert 'Action: lookup({"query": "Brightgrid Pro price"})' in trace
    assert "Observation: 1680" in trace
    assert "lookup: the trace holds no implementation" in trace  # a notice per gap
    assert window.answer_label.text() == "$1,680 per year"
    scenario = window.workspace.model.scenario
    assert scenario.question == otel_traces.QUESTION
    assert [t.name for t in scenario.custom_tools] == ["lookup"]  # the user can fill it in
    assert "agent.json" in window.statusBar().currentMessage()
    assert fake_server.requests == []  # replayed: no model asked

    otel_traces.serve(fake_server)
    window.backend_panel.select("custom", fake_server.base_url, otel_traces.MODEL)
    assert pane.fork(1)
    qtbot.waitUntil(lambda: pane.running, timeout=2000)
    qtbot.waitUntil(lambda: not pane.running, timeout=20000)
    assert len(fake_server.requests) == 2  # steps 2 and 3, live
    assert fake_server.requests[0]["messages"][3]["role"] == "tool"  # the trace's history
    forked = pane.trace.plain_text()
    assert "── forked from Run 1 at step 1 ──" in forked
    assert window.answer_label.text() == "$1,680 per year"


def test_a_bad_trace_file_is_one_status_line_and_changes_nothing(
    window: MainWindow, tmp_path: Path
) -> None:
    before = window.workspace.model.scenario
    path = tmp_path / "broken.json"
    path.write_bytes(b'{"resourceSpans": [{"scopeSpans": [' + b"[" * 10_000)
    assert not window.traces.open(path)
    message = window.statusBar().currentMessage()
    assert message.startswith("⚠ ")
    assert "broken.json" in message
    assert "\n" not in message
    assert window.workspace.model.scenario is before
    assert window.run_pane.shown_record() is None
