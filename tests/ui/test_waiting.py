"""A server that accepts the connection and never answers (issue 10, item 11): the window says
it is waiting, with the seconds, and Refresh can be cancelled."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from sandbox_app.ui.window.main_window import MainWindow


@pytest.fixture
def silent_url() -> Iterator[str]:
    """A listening socket nobody accepts from: connections succeed, no byte ever comes back."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"


def test_a_run_shows_it_is_waiting_for_a_silent_server(
    qtbot: QtBot, window: MainWindow, silent_url: str
) -> None:
    window.backend_panel.select("Custom URL", silent_url, "m")
    qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)
    host = silent_url.split("/")[2]
    waiting = rf"Step 1 of 5 · waiting for {host}… [1-9]\d* s"
    qtbot.waitUntil(
        lambda: re.fullmatch(waiting, window.step_label.text()) is not None, timeout=5000
    )
    qtbot.mouseClick(window.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.controller.running, timeout=5000)
    assert window.step_label.text() == "Stopped at step 1 of 5"


def test_refresh_against_a_silent_server_counts_seconds_and_can_be_cancelled(
    qtbot: QtBot, window: MainWindow, silent_url: str
) -> None:
    panel = window.backend_panel
    panel.select("Custom URL", silent_url)
    qtbot.mouseClick(panel.refresh_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.refresh_button.text() == "Cancel", timeout=2000)
    assert panel.refresh_button.isEnabled()
    host = silent_url.split("/")[2]
    seen: list[str] = []

    def counting() -> bool:
        seen.append(panel.models_status.text())
        return re.fullmatch(rf"Asking {host} for its models… [1-9]\d* s", seen[-1]) is not None

    try:
        qtbot.waitUntil(counting, timeout=5000)
    except qtbot.TimeoutError:
        raise AssertionError(f"the status showed {sorted(set(seen))}") from None

    qtbot.mouseClick(panel.refresh_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.refresh_button.text() == "Refresh", timeout=5000)
    assert panel.models_status.text() == "Cancelled: the server had not answered."
    assert panel.refresh_button.isEnabled()


def test_removing_a_lane_while_its_refresh_waits_leaves_nothing_behind(
    qtbot: QtBot, window: MainWindow, silent_url: str
) -> None:
    compare = window.compare
    lane = compare.add_lane()
    assert lane is not None
    panel = lane.backend_panel
    panel.select("custom", silent_url)
    qtbot.mouseClick(panel.refresh_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.refresh_button.text() == "Cancel", timeout=2000)
    task = panel._refresh_task
    assert task is not None
    qtbot.mouseClick(lane.remove_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(task.done, timeout=5000)
    # A task that touched its deleted widgets would end in an exception (and the qloop
    # fixture fails the test on any exception left in the event loop).
    assert task.exception() is None
    assert len(compare.lanes) == 2
