"""Pacing for the test servers' streams: a piece every ``1/rate`` seconds, for benchmarks that
need a model's speed (tests/perf/kinds_bench.py streams four lanes at 2,000 tokens/s)."""

from __future__ import annotations

import asyncio


class Pace:
    """Awaited before each piece a stream sends: paced against the first piece's time, so sleep
    overshoot never accumulates (as tests/model_server/chat_stream.py paces its chunks).
    ``rate`` None: no waiting at all, the servers' behaviour before they had this knob."""

    def __init__(self, rate: float | None) -> None:
        self.interval = 1.0 / rate if rate else 0.0
        self.sent = 0
        self.start: float | None = None

    async def __call__(self) -> None:
        if not self.interval:
            return
        now = asyncio.get_running_loop().time()
        if self.start is None:
            self.start = now
        delay = self.start + self.sent * self.interval - now
        self.sent += 1
        if delay > 0:
            await asyncio.sleep(delay)
