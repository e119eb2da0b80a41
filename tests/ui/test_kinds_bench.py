"""The per-kind benchmark (tests/perf/kinds_bench.py) runs, for every kind, on a tiny reply:
each kind's test server in its own process, the Run tab and four compare lanes against it, the
arrivals stamped in that kind's backend. No timings are judged here (the benchmark's job)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import pytest
import qasync
from pytestqt.qtbot import QtBot

from sandbox_app.ui.window.main_window import MainWindow
from tests.perf.kinds_bench import RATE, kind_lanes_lag, kind_server, kind_tps, reply
from tests.perf.serve_kind import KINDS


def finished(qtbot: QtBot, coroutine: Coroutine[Any, Any, dict[str, float]]) -> dict[str, float]:
    task = asyncio.ensure_future(coroutine)
    qtbot.waitUntil(task.done, timeout=60_000)
    return task.result()


@pytest.mark.parametrize("kind", KINDS)
def test_the_per_kind_figures_are_measured_on_a_tiny_reply(
    qtbot: QtBot, qloop: qasync.QEventLoop, window: MainWindow, kind: str
) -> None:
    tiny = reply(40, long_line=False)
    spec = {
        "unthrottled": {**tiny, "rate": None, "turns": 1},
        **{f"lane{i}": {**tiny, "rate": RATE, "turns": 1} for i in range(4)},
    }
    with kind_server(kind, spec) as base_url:
        tps = finished(qtbot, kind_tps(window, kind, base_url, "unthrottled"))
        assert tps["answered"] == 1.0, tps
        assert tps["tokens"] > 20, tps  # the thinking and the text, as the server counted them
        assert "Final Answer: done" in window.run_pane.trace.plain_text()
        lanes = finished(qtbot, kind_lanes_lag(window, kind, base_url))
    assert lanes["answered"] == 1.0, lanes  # all four lanes ran to their answer
    assert lanes["tokens"] >= 4 * tps["tokens"], lanes
    # The arrivals were stamped in this kind's backend and paired with the panes' writes.
    assert lanes["behind_samples"] > 0, lanes
    for lane in window.compare.lanes:
        lane.trace.flush_all()
        assert lane.trace.thinking.regions, kind  # the thinking shown, in every lane
