"""Each server's pace (backends/transport/throttle.py): a 429 with ``Retry-After`` pauses the
server's every request and halves how many it is sent at once; the wait is the run's queue
time, kept apart from its working time, in the results and in eval's summary."""

from __future__ import annotations

import asyncio
import io
import time
from pathlib import Path

from sandbox_app.backends.transport.throttle import ServerThrottle
from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.core.results.evaluation import read_results
from sandbox_app.core.scenarios.scenario_file import load_scenario, scenarios_dir
from tests.model_server import ModelScript, ModelServer

EXAMPLE = scenarios_dir() / "test_set.json"
WAIT = 0.4  # the server's Retry-After, seconds


def test_a_429_with_retry_after_is_queue_time_not_working_time(
    tmp_path: Path, fake_server: ModelServer
) -> None:
    cases = load_scenario(EXAMPLE).test_set
    by_question = {c.question: list(c.replies) for c in cases}
    fake_server.set_model(
        "m", ModelScript(by_question=by_question, fail_status=429, fail_times=3, retry_after=WAIT)
    )
    out, results = io.StringIO(), tmp_path / "results.jsonl"
    lane = f"{fake_server.base_url}:m"
    argv = [str(EXAMPLE), "--out", str(results), "--lane", lane, "--concurrency", "4"]
    assert eval_command(argv, out) == 0
    runs = read_results(results)
    assert len(runs) == len(cases)
    assert not [r.reason for r in runs if "429" in r.reason]  # every 429 was waited out
    refused = [r for r in runs if any("Rate limited (429)" in str(e) for e in r.events or ())]
    assert 1 <= len(refused) <= 3  # the three 429s fell on one to three runs
    for run in refused:  # each waited at least the server's word, as queue time
        assert run.metrics.queued_s >= WAIT * 0.95, run.metrics
        assert run.metrics.working_s <= run.metrics.wall_s - WAIT * 0.95
    assert sum(r.metrics.queued_s for r in runs) >= 3 * WAIT * 0.95
    # The summary: latencies as working time, and the queue time said apart.
    assert "s queued" in out.getvalue()


def test_a_429_halves_the_requests_at_once_and_pauses_them_all() -> None:
    async def scenario() -> None:
        throttle = ServerThrottle(ceiling=4)
        for _ in range(4):
            assert await throttle.acquire() == 0.0  # four places, no wait
        throttle.refused(0.3)  # 429 with four in flight: two at once from now, none for 0.3 s
        for _ in range(4):
            throttle.release(answered=False)
        assert throttle.allowed == 2
        started = time.monotonic()
        waited = await throttle.acquire()
        assert waited >= 0.29
        assert time.monotonic() - started >= 0.29
        assert await throttle.acquire() == 0.0  # the pause is over, a second place is free
        third = asyncio.ensure_future(throttle.acquire())  # over the limit: it waits
        await asyncio.sleep(0.05)
        assert not third.done()
        throttle.release(answered=True)
        assert await asyncio.wait_for(third, 1.0) >= 0.04
        for _ in range(2):
            throttle.release(answered=True)
        # Answers grow the limit back by about one a round, up to the ceiling.
        for _ in range(40):
            await throttle.acquire()
            throttle.release(answered=True)
        assert throttle.allowed == 4

    asyncio.run(scenario())
