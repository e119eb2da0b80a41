"""Compare view: lanes stream concurrently against the test server, the table tells who won."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import bm25s  # noqa: F401  (imported up front: first imports cost ~1 s, not what is timed here)
import openai  # noqa: F401
import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from sandbox_app.core.results.compare import Price
from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.core.scenarios.scenario_file import load_scenario
from sandbox_app.ui.compare.compare_view import CompareView, LaneWidget
from sandbox_app.ui.tools.approval import ApprovalDialog
from sandbox_app.ui.window.main_window import MainWindow
from tests.helpers import SendEmail, replies_of
from tests.model_server import ModelScript, ModelServer

DIRECT = [
    "Thought: 7 developers at $20 a month for 12 months.\nAction: calculator[20 * 12 * 7]",
    "Thought: Done.\nAnswer: $1,680 per year",
]


def lanes_on_server(window: MainWindow, server: ModelServer, models: list[str]) -> CompareView:
    compare = window.compare
    compare.set_lanes(tuple(LaneConfig("Custom URL", server.base_url, m) for m in models))
    window.tabs.setCurrentWidget(compare)
    return compare


def run_all(qtbot: QtBot, compare: CompareView, timeout: int = 20000) -> float:
    """Run every lane; how long the comparison ran, from its start to its last lane's end."""
    span: list[float] = []

    def note(running: bool) -> None:
        span.append(time.perf_counter())

    compare.runningChanged.connect(note)
    try:
        qtbot.mouseClick(compare.run_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: compare.running, timeout=2000)
        qtbot.waitUntil(lambda: not compare.running, timeout=timeout)
    finally:
        compare.runningChanged.disconnect(note)
    return span[-1] - span[0]


def watch_lanes(compare: CompareView) -> dict[str, list[bool]]:
    """For each lane (by model): which lanes were still running when it finished, in order."""
    seen: dict[str, list[bool]] = {}
    for lane in compare.lanes:

        def finished(running: bool, lane: LaneWidget = lane) -> None:
            if not running:
                seen[lane.record.model] = [other.controller.running for other in compare.lanes]

        lane.controller.runningChanged.connect(finished)
    return seen


def column(compare: CompareView, name: str) -> list[str]:
    return [row[name] for row in compare.rows()]


def test_two_lanes_stream_at_once_and_the_table_compares_them(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    fake_server.set_model("fast", ModelScript(replies=replies_of("brightgrid"), rate=70))
    fake_server.set_model("slow", ModelScript(replies=DIRECT, rate=15))
    compare = lanes_on_server(window, fake_server, ["fast", "slow"])
    fast, slow = compare.lanes
    at_finish = watch_lanes(compare)
    elapsed = run_all(qtbot, compare)
    # The fast lane finished while the slow one still streamed; the slow one finished last.
    assert at_finish == {"fast": [False, True], "slow": [False, False]}
    assert "Action: search[" in fast.trace.plain_text()
    assert "search[" not in slow.trace.plain_text()  # traces never mix
    assert column(compare, "Model") == ["fast", "slow"]
    assert column(compare, "Status") == ["answered", "answered"]
    assert column(compare, "Final answer") == ["$1,680 per year", "$1,680 per year"]
    assert column(compare, "Correct") == ["yes", "yes"]
    assert column(compare, "Steps") == ["3", "2"]
    assert column(compare, "Tool calls") == ["2", "1"]
    times = [run.metrics.wall_s for lane in compare.lanes for run in lane.record.runs]
    assert min(times) > 0.8  # both lanes stream long enough for the sum to differ clearly
    # Concurrent: about the slowest lane (0.65 of the sum here), not the sum. Both sides are
    # measured in this run, so a loaded machine stretches them alike.
    assert elapsed < 0.8 * sum(times), f"{elapsed:.2f} s for lanes of {times} s"
    assert compare.table.rowCount() == 2
    assert compare.table.item(1, 1).text() == "slow"


def test_four_lanes_at_different_rates_all_finish_concurrently(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    rates = {"a": 80.0, "b": 45.0, "c": 30.0, "d": 20.0}  # far apart: clear finishing order
    for name, rate in rates.items():
        fake_server.set_model(name, ModelScript(replies=DIRECT, rate=rate))
    compare = lanes_on_server(window, fake_server, list(rates))
    assert len(compare.lanes) == 4
    assert not compare.add_button.isEnabled()  # four is the most
    at_finish = watch_lanes(compare)
    elapsed = run_all(qtbot, compare)
    assert column(compare, "Status") == ["answered"] * 4
    # All four ran at once: when the fastest finished, the other three were still streaming,
    # and each lane finished in rate order.
    assert at_finish == {
        "a": [False, True, True, True],
        "b": [False, False, True, True],
        "c": [False, False, False, True],
        "d": [False, False, False, False],
    }
    times = [lane.record.runs[0].metrics.wall_s for lane in compare.lanes]
    assert times == sorted(times)  # the faster the stream, the sooner the lane finished
    # About the slowest lane (0.42 of the sum here: ~0.4, 0.7, 1, 1.5 s), far from the sum;
    # both sides measured in this run.
    assert elapsed < 0.7 * sum(times), f"{elapsed:.2f} s for lanes of {times} s"


def test_a_failing_lane_does_not_disturb_the_others(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    fake_server.set_model("good", ModelScript(replies=DIRECT, rate=200))
    fake_server.set_model("broken", ModelScript(replies=DIRECT, fail_status=500))
    fake_server.set_model("cut", ModelScript(replies=DIRECT, cut_after=4, rate=200))
    compare = lanes_on_server(window, fake_server, ["good", "broken", "cut"])
    run_all(qtbot, compare)
    assert column(compare, "Status") == ["answered", "failed", "failed"]
    assert "Server error 500" in compare.lanes[1].status.text()
    assert "broke after 4 chunks" in compare.lanes[2].status.text()
    assert compare.lanes[2].trace.plain_text().startswith("── Step 1 ──\nThought: 7")


def test_repeat_five_times_reports_the_pass_rate(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    right, wrong = ["Answer: $1,680 per year"], ["Answer: about $1,600"]
    fake_server.set_model("flaky", ModelScript(runs=[right, wrong, right, right, wrong]))
    fake_server.set_model("steady", ModelScript(replies=right))
    compare = lanes_on_server(window, fake_server, ["flaky", "steady"])
    compare.repeat_spin.setValue(5)
    run_all(qtbot, compare)
    assert column(compare, "Pass rate") == ["60% (3/5)", "100% (5/5)"]
    flaky = compare.lanes[0]
    assert flaky.pane.run_picker.count() == 5
    flaky.pane.run_picker.setCurrentIndex(1)
    flaky.pane.run_picker.activated.emit(1)  # the user picks "Run 2" to see that trace
    assert "about $1,600" in flaky.trace.plain_text()


def test_correct_agrees_with_the_pass_rate_when_only_the_last_repeat_was_right(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    right, wrong = ["Answer: $1,680 per year"], ["Answer: about $1,600"]
    fake_server.set_model("flaky", ModelScript(runs=[wrong, wrong, wrong, wrong, right]))
    fake_server.set_model("steady", ModelScript(replies=right))
    compare = lanes_on_server(window, fake_server, ["flaky", "steady"])
    compare.repeat_spin.setValue(5)
    run_all(qtbot, compare)
    assert column(compare, "Final answer") == ["$1,680 per year"] * 2  # the latest runs'
    assert column(compare, "Correct") == ["1/5", "5/5"]  # not "yes": four of five failed
    assert column(compare, "Pass rate") == ["20% (1/5)", "100% (5/5)"]


def test_clicking_a_step_aligns_every_lane(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    long_thought = "Thought: " + "let me think about this carefully. " * 40
    script = [long_thought + "\nAction: calculator[1 + 1]"] * 3 + ["Answer: $1,680"]
    fake_server.set_model("a", ModelScript(replies=script))
    fake_server.set_model("b", ModelScript(replies=script))
    compare = lanes_on_server(window, fake_server, ["a", "b"])
    run_all(qtbot, compare)
    compare.lanes[0].trace.stepClicked.emit(3)
    for lane in compare.lanes:
        trace = lane.trace
        block = trace.document().findBlockByNumber(trace.step_block(3) or 0)
        bar = trace.verticalScrollBar()
        assert bar.value() == min(block.firstLineNumber(), bar.maximum()) > 0


def test_exports_and_lane_settings_saved_without_keys(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer, tmp_path: Path
) -> None:
    fake_server.set_model("m1", ModelScript(replies=DIRECT))
    fake_server.set_model("m2", ModelScript(replies=DIRECT))
    compare = lanes_on_server(window, fake_server, ["m1", "m2"])
    compare.lanes[0].backend_panel.key_edit.setText("sk-secret-lane-key")
    compare.set_prices({"m1": Price(1.0, 2.0)})
    run_all(qtbot, compare)
    assert column(compare, "Cost")[0].startswith("$")
    assert column(compare, "Cost")[1] == "—"
    assert compare.exports.export_to(tmp_path / "c.json", "json")
    document = json.loads((tmp_path / "c.json").read_text())
    assert [lane["model"] for lane in document["lanes"]] == ["m1", "m2"]
    events = document["lanes"][1]["runs"][0]["events"]
    assert events[-1]["type"] == "RunFinished"
    assert compare.exports.export_to(tmp_path / "c.md", "md")
    assert (tmp_path / "c.md").read_text().count("\n") == 4
    assert not compare.exports.export_to(tmp_path / "missing" / "c.csv", "csv")
    assert compare.message.text().startswith("⚠ Cannot write c.csv")
    assert window.files.save_to(tmp_path / "s.json")
    saved = load_scenario(tmp_path / "s.json")
    assert [(lane.backend, lane.model) for lane in saved.lanes] == [
        ("custom", "m1"),
        ("custom", "m2"),
    ]
    # Every file the window wrote, the edits it keeps (a folder beside the settings, written
    # on a timer) among them.
    for path in tmp_path.rglob("*"):
        assert path.is_dir() or b"sk-secret-lane-key" not in path.read_bytes(), path


def test_approval_dialog_names_the_lane(
    qtbot: QtBot, make_window: Callable[..., MainWindow], fake_server: ModelServer
) -> None:
    tool = SendEmail()
    window = make_window(extra_tools=[tool])
    fake_server.set_model("safe", ModelScript(replies=DIRECT))
    fake_server.set_model(
        "mailer", ModelScript(replies=["Action: send_email[boss@x.com]", "Answer: ok"])
    )
    compare = lanes_on_server(window, fake_server, ["safe", "mailer"])
    qtbot.mouseClick(compare.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(window.findChildren(ApprovalDialog)), timeout=5000)
    dialog = window.findChildren(ApprovalDialog)[0]
    assert "in Lane 2" in dialog.text()
    qtbot.waitUntil(lambda: not compare.lanes[0].controller.running, timeout=10000)
    assert compare.lanes[0].record.runs[0].status == "answered"  # lane 1 never waited
    qtbot.mouseClick(dialog.decline_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not compare.running, timeout=5000)
    assert tool.sent == []


@pytest.mark.parametrize("count", [2, 3])
def test_lanes_can_be_added_duplicated_and_removed(window: MainWindow, count: int) -> None:
    compare = window.compare
    for _ in range(count):  # a bounded loop: an add_lane that adds nothing must not hang
        if len(compare.lanes) >= count:
            break
        compare.add_lane()
    assert len(compare.lanes) == count
    first: LaneWidget = compare.lanes[0]
    first.backend_panel.select("Ollama", model="llama3.2")
    first.duplicate_button.click()
    assert compare.lanes[-1].config() == first.config()
    assert len(compare.lanes) == count + 1
    compare.lanes[-1].remove_button.click()
    assert len(compare.lanes) == count
