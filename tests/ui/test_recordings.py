"""Recordings: a comparison (or one run) saved with its timing, played back in the window with
no network and no model; the same trace text, roles, metrics and table as the live run."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from sandbox_app.core.running.recording import load_recording, recordings_dir
from sandbox_app.core.scenarios.scenario import LaneConfig, LaneSettings
from sandbox_app.ui.compare.compare_view import CompareView
from sandbox_app.ui.trace.trace_view import TraceView
from sandbox_app.ui.window.main_window import MainWindow
from sandbox_app.ui.window.recordings import SPEEDS
from tests.helpers import replies_of
from tests.model_server import ModelScript, ModelServer
from tests.ui.test_screenshot import GUESSER

AT_ONCE = dict(SPEEDS)["At once"]


def run_comparison(qtbot: QtBot, window: MainWindow, server: ModelServer) -> CompareView:
    server.set_model("qwen2.5:1.5b", ModelScript(replies=replies_of("brightgrid"), rate=200))
    server.set_model("llama3.2:1b", ModelScript(replies=GUESSER, rate=200))
    server.set_model("phi4-mini", ModelScript(replies=replies_of("brightgrid"), rate=300))
    compare = window.compare
    models = ("qwen2.5:1.5b", "llama3.2:1b", "phi4-mini")
    compare.set_lanes(tuple(LaneConfig("custom", server.base_url, m) for m in models))
    window.tabs.setCurrentWidget(compare)
    compare.run_all()
    qtbot.waitUntil(lambda: not compare.running, timeout=20000)
    return compare


def blocks(trace: TraceView) -> list[tuple[str, Any]]:
    """Each line of the trace with its role: what colours it."""
    trace.flush_all()
    out = []
    block = trace.document().firstBlock()
    while block.isValid():
        out.append((block.text(), trace.role_of(block.blockNumber())))
        block = block.next()
    return out


def test_a_recorded_comparison_plays_back_the_same_with_no_network(
    qtbot: QtBot,
    make_window: Any,
    fake_server: ModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    live = make_window()
    compare = run_comparison(qtbot, live, fake_server)
    path = tmp_path / "two.json"
    assert live.recordings.save_to(path), live.statusBar().currentMessage()
    recording = load_recording(path)
    assert recording.models == ["qwen2.5:1.5b", "llama3.2:1b", "phi4-mini"]
    live_rows = compare.rows()
    live_blocks = [blocks(lane.trace) for lane in compare.lanes]

    # The live window goes (its lanes' clients, a model list it may still ask for): only the
    # replay's own connections are counted below, and it must make none.
    live.close()
    qtbot.waitUntil(lambda: not live.isVisible(), timeout=5000)
    fake_server.stop()  # no model anywhere now
    seen: list[Any] = []
    real = socket.socket.connect
    monkeypatch.setattr(socket.socket, "connect", lambda s, a: seen.append(a) or real(s, a))
    window = make_window()
    window.recordings.set_speed(AT_ONCE)
    assert window.recordings.play(path)
    replay = window.compare
    qtbot.waitUntil(lambda: not replay.running, timeout=20000)
    assert replay.rows() == live_rows  # the table: status, answers, verdicts, metrics
    assert [blocks(lane.trace) for lane in replay.lanes] == live_blocks
    assert [r["Correct"] for r in replay.rows()] == ["yes", "no", "yes"]  # three lanes
    assert (
        window.statusBar()
        .currentMessage()
        .startswith("▶ Recording of qwen2.5:1.5b · llama3.2:1b · phi4-mini, ")
    )
    assert [a for a in seen if isinstance(a, tuple)] == []  # no TCP connection at all
    # … nor one to come: the recorded local servers are not checked by themselves (a check
    # due a moment after the lanes were shown connected under load, once the test ran long).
    assert not any(lane.backend_panel.health_line.pending for lane in replay.lanes)


def test_one_run_records_and_plays_in_the_run_tab(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    from tests.ui.test_window import fast

    window.set_scenario(fast("brightgrid", tokens_per_second=400))
    window.start_run()
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=20000)
    live = blocks(window.trace)
    path = tmp_path / "one.json"
    assert window.recordings.save_to(path)
    window.recordings.set_speed(4.0)  # paced: the recorded offsets, four times as fast
    assert window.recordings.play(path)
    assert window.run_pane.running
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=20000)
    assert blocks(window.trace) == live
    assert window.answer_label.text() == "$1,680 per year"
    assert "· 4×" in window.statusBar().currentMessage()
    window.start_run()  # a live run: the recording's line goes
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=20000)
    assert window.statusBar().currentMessage() == ""


def test_a_live_comparison_clears_the_recordings_line(qtbot: QtBot, window: MainWindow) -> None:
    window.recordings.set_speed(AT_ONCE)
    assert window.recordings.play(SHIPPED)
    qtbot.waitUntil(lambda: not window.compare.running, timeout=20000)
    assert window.statusBar().currentMessage().startswith("▶ ")
    window.compare.run_all()
    assert window.statusBar().currentMessage() == ""
    qtbot.waitUntil(lambda: not window.compare.running, timeout=20000)


def test_a_recording_made_with_other_settings_says_so(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    from tests.ui.test_window import fast

    window.set_scenario(fast("brightgrid"))
    window.start_run()
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=20000)
    path = tmp_path / "one.json"
    assert window.recordings.save_to(path)
    window.set_scenario(fast("calculator_chain"))
    window.recordings.set_speed(AT_ONCE)
    assert window.recordings.play(path)
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=20000)
    message = window.statusBar().currentMessage()
    assert "recorded with another prompt, question, tools" in message
    assert window.answer_label.text() == "$1,680 per year"  # it plays what was recorded


def test_a_corrupt_recording_is_one_line_and_changes_nothing(
    window: MainWindow, tmp_path: Path
) -> None:
    before = window.current_scenario()
    for text, said in (
        ("{not json", "bad.json is not valid JSON"),
        ('{"recording": 1, "lanes": []}', 'bad.json: "lanes" must hold 1 to 4 lanes.'),
        (
            '{"recording": 1, "scenario": {"version": 1}, "lanes": [{"settings": {}, "events": '
            '[{"t": 0, "type": "Nonsense"}]}]}',
            'bad.json: "lanes[0].events[0].type" is not an event type (got "Nonsense")',
        ),
    ):
        (tmp_path / "bad.json").write_text(text)
        assert not window.recordings.play(tmp_path / "bad.json")
        assert window.statusBar().currentMessage().startswith(f"⚠ {said}")
    assert window.current_scenario() == before
    assert not window.run_pane.running


def test_the_pace_control_speeds_the_offline_model_too(window: MainWindow) -> None:
    scenario = window.current_scenario()
    window.recordings.set_speed(2.0)
    paced = window.recordings.paced(scenario)
    assert paced.script.tokens_per_second == 2 * scenario.script.tokens_per_second
    window.recordings.set_speed(AT_ONCE)
    assert window.recordings.paced(scenario).script.tokens_per_second == 0  # at once
    assert window.current_scenario() == scenario  # the scenario itself is not changed
    assert window.settings.value("replay_speed") in (0.0, "0.0")


def test_nothing_to_record_before_a_run(window: MainWindow, tmp_path: Path) -> None:
    assert not window.recordings.save_to(tmp_path / "none.json")
    assert window.statusBar().currentMessage().startswith("Nothing to record yet")
    assert not (tmp_path / "none.json").exists()


SHIPPED = recordings_dir() / "brightgrid_two_models.json"
VARIANTS = recordings_dir() / "prompt_variants_two_versions.json"


def test_the_shipped_recording_plays_offline(qtbot: QtBot, window: MainWindow) -> None:
    path = SHIPPED
    recording = load_recording(path)
    assert len(recording.lanes) == 2
    window.recordings.set_speed(AT_ONCE)
    assert window.recordings.play(path)
    qtbot.waitUntil(lambda: not window.compare.running, timeout=20000)
    assert [r["Correct"] for r in window.compare.rows()] == ["yes", "no"]


def test_the_prompt_variants_recording_plays_two_versions_one_right(
    qtbot: QtBot, window: MainWindow
) -> None:
    brief, grounded = load_recording(VARIANTS).scenario.prompt_history
    window.recordings.set_speed(AT_ONCE)
    assert window.recordings.play(VARIANTS)
    qtbot.waitUntil(lambda: not window.compare.running, timeout=20000)
    rows = window.compare.rows()
    assert [r["Prompt"] for r in rows] == [f"brief ({brief.short})", f"grounded ({grounded.short})"]
    assert [r["Correct"] for r in rows] == ["no", "yes"]
    answers = [lane.record.runs[-1].answer for lane in window.compare.lanes]
    assert answers == ["About $2,160 per year", "$2,592 per year"]
    traces = [blocks(lane.trace) for lane in window.compare.lanes]
    assert not any("search[" in text for text, _ in traces[0])  # the brief one guessed
    # Each says its offline replies were written for its version (issue 34, item 7).
    said = [lane.prompt_label.text() for lane in window.compare.lanes]
    assert said == [
        f"ran prompt brief ({brief.short}) · offline replies written for brief",
        f"ran prompt grounded ({grounded.short}) · offline replies written for grounded",
    ]
    assert any("calculator[18 * 12 * 12]" in text for text, _ in traces[1])


def test_playing_a_recording_never_changes_the_scenario(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    lanes = (
        LaneConfig("scripted", settings=LaneSettings(temperature=0.7, max_tokens=512)),
        LaneConfig("scripted", settings=LaneSettings(tool_calling="native")),
    )
    window.compare.set_lanes(lanes)
    assert window.files.save_to(tmp_path / "mine.json")
    assert not window.modified
    path = SHIPPED
    window.recordings.set_speed(AT_ONCE)
    assert window.recordings.play(path)
    qtbot.waitUntil(lambda: not window.compare.running, timeout=20000)
    assert window.compare.lanes[0].backend_panel.choice().base_url.startswith("http://127.0.0.1")
    assert not window.modified  # nothing of the recording was adopted
    assert window.scenario.lanes == lanes
    window.compare.run_all()  # a lane that runs is the scenario's lane again
    qtbot.waitUntil(lambda: not window.compare.running, timeout=20000)
    assert [lane.config() for lane in window.compare.lanes] == list(lanes)
    assert [lane.record.runs[-1].answer for lane in window.compare.lanes] == ["$1,680 per year"] * 2
    assert not window.modified
