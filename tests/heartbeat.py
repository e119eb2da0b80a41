"""A timer that should tick every few milliseconds: how late its ticks come is how long the
event loop (and so the window) was busy. Used by the fault suite and the benchmark."""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer


class Heartbeat:
    def __init__(self, interval_ms: int) -> None:
        self.interval_s = interval_ms / 1000
        self.gaps: list[float] = []  # seconds between consecutive ticks
        self._last = time.perf_counter()
        self._timer = QTimer()
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._tick)
        self._timer.start()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.gaps.append(now - self._last)
        self._last = now

    @property
    def longest(self) -> float:
        """The longest gap between ticks: how long the window froze at worst."""
        return max(self.gaps, default=0.0)

    @property
    def lags(self) -> list[float]:
        """How late each tick came."""
        return [max(0.0, gap - self.interval_s) for gap in self.gaps]

    def stop(self) -> None:
        self._timer.stop()
