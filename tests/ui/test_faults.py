"""Fault suite: every server failure, in one lane and in four, seen from the window.

For each case: one clear line in the trace, status failed (or answered, for a 429 that
recovers), the partial trace kept, and the next run succeeds. The count of cases is printed
at the end of the test run ("fault cases: N passed, M failed"). That the window never froze
for more than 300 ms is a wall-clock budget: the ``latency`` tests at the end check it.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.ui.lane.backend_panel import BackendPanel
from sandbox_app.ui.window.main_window import MainWindow
from tests.heartbeat import Heartbeat
from tests.model_server import ModelScript, ModelServer

GOOD = [
    "Thought: I need the price of Brightgrid Pro.\nAction: calculator[20 * 12 * 7]",
    "Thought: Done.\nAnswer: $1,680 per year",
]
HUGE = "Thought: " + "xxxxxxxxx " * 1_000_000  # 10 MB, one line


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class Fault:
    script: ModelScript | None  # None: the model does not exist on the server
    message: str  # what the one-line reason must say
    partial: bool = False  # the reply broke mid-way: what arrived must stay
    status: str = "failed"
    refused: bool = False  # nothing listens at the URL


# Bytes that are not UTF-8 are no fault: they arrive as "�" and the run goes on
# (tests/core/test_backend_errors.py).
FAULTS = {
    "401": Fault(ModelScript(GOOD, fail_status=401), "rejected the API key (401)"),
    "404 unknown model": Fault(None, "'m' was not found at"),
    "429 retried then ok": Fault(
        ModelScript(GOOD, fail_status=429, fail_times=2, retry_after=0.05),
        "",
        status="answered",
    ),
    "429 retried out": Fault(
        ModelScript(GOOD, fail_status=429, retry_after=0.01), "gave up after 3 retries"
    ),
    "500": Fault(ModelScript(GOOD, fail_status=500), "Server error 500"),
    "503": Fault(ModelScript(GOOD, fail_status=503), "Server error 503"),
    "connection refused": Fault(ModelScript(GOOD), "Cannot connect to", refused=True),
    "stalled stream": Fault(ModelScript(GOOD, stall_after=5), "no data for 0.5 s", partial=True),
    "cut after 5 chunks": Fault(ModelScript(GOOD, cut_after=5), "broke after 5 chunks", True),
    "malformed chunk": Fault(ModelScript(GOOD, malformed_after=5), "not valid JSON", True),
    "10 MB reply": Fault(
        ModelScript(
            [HUGE],
            honor_max_tokens=False,
            tokenizer=lambda text: [text[i : i + 10_000] for i in range(0, len(text), 10_000)],
        ),
        "ignored max_tokens",
        True,
    ),
}


@pytest.fixture
def heartbeat() -> Iterator[Heartbeat]:
    beat = Heartbeat(interval_ms=10)
    yield beat
    beat.stop()


def configure(server: ModelServer, fault: Fault) -> str:
    """Set the server up for ``fault``; returns the base URL the lanes must use."""
    if fault.script is not None:
        server.set_model("m", fault.script)
    return f"http://127.0.0.1:{closed_port()}/v1" if fault.refused else server.base_url


def set_lane(panel: BackendPanel, base_url: str, fault: Fault | None = None) -> None:
    panel.select("Custom URL", base_url, "m")
    # The stall needs a short read timeout to end; any other case gets a long one, so that a
    # loaded machine's pause cannot turn an HTTP error into a timeout.
    stalls = fault is not None and fault.script is not None and fault.script.stall_after is not None
    panel.timeout_spin.setValue(0.5 if stalls else 10.0)


def fault_in_one_lane(qtbot: QtBot, window: MainWindow, server: ModelServer, fault: Fault) -> None:
    set_lane(window.backend_panel, configure(server, fault), fault)
    qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.answer_status.isVisible(), timeout=20000)
    # The banner is drawn with the run's last events; Run comes back once its stream is closed.
    qtbot.waitUntil(lambda: window.run_button.isEnabled(), timeout=5000)
    trace = window.trace.plain_text()
    if fault.status == "failed":
        assert window.answer_status.text().startswith("✖ Failed at step 1: ")
        reason = window.answer_status.text().split(": ", 1)[1]
        assert fault.message in reason
        assert "\n" not in reason
        assert trace.endswith(f"failed: {reason}")
    else:
        assert window.answer_status.text().startswith("✔ Correct · answered")
        assert "Rate limited (429): retrying in 0.05 s (1 of 3)" in trace
    if fault.partial:
        assert "── Step 1 ──\nThought:" in trace


def fault_in_four_lanes(
    qtbot: QtBot, window: MainWindow, server: ModelServer, fault: Fault
) -> None:
    compare = window.compare
    compare.set_lanes(tuple(LaneConfig("Custom URL") for _ in range(4)))
    base_url = configure(server, fault)
    for lane in compare.lanes:
        set_lane(lane.backend_panel, base_url, fault)
    qtbot.mouseClick(compare.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: compare.running, timeout=5000)
    qtbot.waitUntil(lambda: not compare.running, timeout=30000)
    statuses = [row["Status"] for row in compare.rows()]
    assert statuses == [fault.status] * 4
    for lane in compare.lanes:
        assert fault.message in lane.status.text()
        if fault.partial:
            assert "Thought:" in lane.trace.plain_text()


@pytest.mark.fault
@pytest.mark.parametrize("case", list(FAULTS))
def test_fault_in_one_lane(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer, case: str
) -> None:
    fault_in_one_lane(qtbot, window, fake_server, FAULTS[case])
    # The window still works: the next run succeeds. (How long it froze, if at all, is a
    # latency budget: test_the_window_never_freezes_through_a_fault_in_one_lane.)
    fake_server.set_model("m", ModelScript(GOOD))
    set_lane(window.backend_panel, fake_server.base_url)
    qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.answer_label.text() == "$1,680 per year", timeout=10000)


@pytest.mark.fault
@pytest.mark.parametrize("case", list(FAULTS))
def test_fault_in_four_lanes(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer, case: str
) -> None:
    fault_in_four_lanes(qtbot, window, fake_server, FAULTS[case])
    compare = window.compare
    fake_server.set_model("m", ModelScript(GOOD))
    for lane in compare.lanes:
        set_lane(lane.backend_panel, fake_server.base_url)
    qtbot.mouseClick(compare.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: compare.running, timeout=5000)
    qtbot.waitUntil(lambda: not compare.running, timeout=10000)
    assert [row["Status"] for row in compare.rows()] == ["answered"] * 4


FROZEN_BUDGET_S = 0.3  # the longest the window may stop drawing during a fault


@pytest.mark.latency
@pytest.mark.parametrize("case", list(FAULTS))
def test_the_window_never_freezes_through_a_fault_in_one_lane(
    qtbot: QtBot,
    window: MainWindow,
    fake_server: ModelServer,
    heartbeat: Heartbeat,
    case: str,
) -> None:
    fault_in_one_lane(qtbot, window, fake_server, FAULTS[case])
    assert heartbeat.longest < FROZEN_BUDGET_S, (
        f"the window froze for {heartbeat.longest * 1000:.0f} ms"
    )


@pytest.mark.latency
@pytest.mark.parametrize("case", list(FAULTS))
def test_the_window_never_freezes_through_a_fault_in_four_lanes(
    qtbot: QtBot,
    window: MainWindow,
    fake_server: ModelServer,
    heartbeat: Heartbeat,
    case: str,
) -> None:
    fault_in_four_lanes(qtbot, window, fake_server, FAULTS[case])
    assert heartbeat.longest < FROZEN_BUDGET_S, (
        f"the window froze for {heartbeat.longest * 1000:.0f} ms"
    )
