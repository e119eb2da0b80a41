"""Long traces in the window (issue 40): File → Open trace… of a generated 30,000-step OTLP
trace (tests/long_trace.py: the collector's file exporter's JSON lines, 100 steps a line),
the same run as a recording, and a run with a 10 MB tool observation.

    uv run python -m tests.perf.trace_bench            # 30,000 steps
    uv run python -m tests.perf.trace_bench --quick    # 3,000 steps

Figures: the first screen's time (from the open to the first rows drawn), the event loop's
lag p99 (a 5 ms heartbeat, tests/heartbeat.py) while the rest streams in, while scrolling a
page a frame, while Find in trace counts every match, and going to 100 steps; the resident
memory the open trace added against the file's size; for the 10 MB observation, the time it
takes to open (folded) and the lag while Show more adds ten pages. Each lag also as the
window thread's own CPU time between ticks (``_cpu_lag_``): on a shared machine the wall
clock's lag is mostly other processes' turns.
"""

from __future__ import annotations

import asyncio
import gc
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.heartbeat import Heartbeat
from tests.perf.bench import make_window, percentile, rss_mb, wait_for

TARGETS: list[tuple[str, float, bool]] = [
    ("trace_first_screen_ms", 1000, True),  # 30,000 steps, OTLP JSON lines
    ("trace_stream_lag_p99_ms", 16, True),  # … while the rest is read and drawn
    ("trace_scroll_lag_p99_ms", 16, True),  # … scrolled a page a frame
    ("trace_find_lag_p99_ms", 16, True),  # … Find in trace counting every match
    ("trace_jump_lag_p99_ms", 16, True),  # … Go to step, 100 steps
    ("trace_rss_ratio", 2, True),  # memory the open trace added / the file's size
    ("recording_first_screen_ms", 1000, True),  # the same 30,000 steps as a recording
    ("recording_stream_lag_p99_ms", 16, True),
    ("recording_rss_ratio", 2, True),
    ("huge_observation_lag_p99_ms", 16, True),  # a 10 MB observation folded, paged ten times
]


class CpuBeat(Heartbeat):
    """A heartbeat that also counts the window thread's CPU time between ticks: on a shared
    machine the wall-clock lag is mostly other processes' turns, the CPU gap is this one's
    work alone (what the lag would be on a quiet machine)."""

    def __init__(self, interval_ms: int) -> None:
        self.cpu_gaps: list[float] = []
        self._cpu = time.thread_time()
        super().__init__(interval_ms)
        self._timer.timeout.connect(self._cpu_tick)

    def _cpu_tick(self) -> None:
        now = time.thread_time()
        self.cpu_gaps.append(now - self._cpu)
        self._cpu = now

    @property
    def cpu_lags(self) -> list[float]:
        return [max(0.0, gap - self.interval_s) for gap in self.cpu_gaps] or [0.0]


def lag_figures(name: str, beat: CpuBeat) -> dict[str, float]:
    """``name_lag_p99_ms`` (wall clock, the target's), ``name_lag_max_ms`` and
    ``name_cpu_lag_p99_ms`` (this process's own work between ticks)."""
    return {
        f"{name}_lag_p99_ms": percentile(beat.lags, 99) * 1000,
        f"{name}_lag_max_ms": max(beat.lags, default=0.0) * 1000,
        f"{name}_cpu_lag_p99_ms": percentile(beat.cpu_lags, 99) * 1000,
    }


def _settled_rss() -> float:
    gc.collect()
    return rss_mb()


async def _beat_while(work: Any, done: Any, seconds: float = 600) -> CpuBeat:

    beat = CpuBeat(interval_ms=5)
    work()
    await wait_for(done, seconds)
    beat.stop()
    return beat


async def _first_screen(window: Any, open_it: Any) -> float:
    """From the open to the first rows drawn (the view repainted with them)."""
    pane = window.run_pane
    started = time.perf_counter()
    open_it()
    await wait_for(lambda: pane.traces.long and pane.traces.rows.row_count() > 0, 60)
    pane.traces.rows.viewport().repaint()
    return (time.perf_counter() - started) * 1000


def _finished(window: Any) -> bool:
    record = window.run_pane.shown_record()
    return record is not None and record.done


async def long_trace(window: Any, folder: Path, steps: int) -> dict[str, float]:
    from tests.long_trace import write_trace

    path = write_trace(folder / "long.jsonl", steps)
    size_mb = path.stat().st_size / 1e6
    before = _settled_rss()
    beat = CpuBeat(interval_ms=5)
    first = await _first_screen(window, lambda: window.traces.open(path))
    started = time.perf_counter()
    await wait_for(lambda: _finished(window), 600)
    streamed = time.perf_counter() - started
    beat.stop()
    grown = _settled_rss() - before
    figures = {
        "trace_steps": float(steps),
        "trace_file_mb": size_mb,
        "trace_first_screen_ms": first,
        **lag_figures("trace_stream", beat),
        "trace_read_all_s": streamed + first / 1000,
        "trace_rss_growth_mb": grown,
        "trace_rss_ratio": grown / size_mb,
    }
    figures.update(await _browse(window, steps))
    return figures


async def _browse(window: Any, steps: int) -> dict[str, float]:

    traces = window.run_pane.traces
    view, finder = traces.rows, traces.finder
    bar = view.verticalScrollBar()
    bar.setValue(0)
    beat = CpuBeat(interval_ms=5)
    for _ in range(300):  # a page a frame, as a held Page Down key
        bar.setValue(bar.value() + bar.pageStep())
        await asyncio.sleep(1 / 60)
    beat.stop()
    scroll = beat
    window.run_tabs.find_in_trace()
    started = time.perf_counter()
    finding = await _beat_while(lambda: finder.field.setText("fetched"), lambda: finder.done)
    find_s = time.perf_counter() - started
    found = len(finder.matches)
    beat = CpuBeat(interval_ms=5)
    picks = random.Random(40).sample(range(1, steps + 1), 100)
    right = 0
    for step in picks:
        finder.go_to_step(step)
        right += (
            view.rows.text(view.indexAt(view.rect().topLeft()).row()).startswith(f"── Step {step} ")
            or view.rows.step_row(step) == view.currentIndex().row()
        )
        await asyncio.sleep(1 / 60)
    beat.stop()
    return {
        **lag_figures("trace_scroll", scroll),
        **lag_figures("trace_find", finding),
        "trace_find_s": find_s,
        "trace_find_matches": float(found),
        **lag_figures("trace_jump", beat),
        "trace_jumps_right": float(right),
    }


async def recording(window: Any, folder: Path, steps: int) -> dict[str, float]:
    """The same run saved as a recording (File → Save recording's format), played at once:
    15,000 steps at most (36 MB), since 30,000 (76 MB) pass a recording's 50 MiB limit."""
    steps = min(steps, 15_000)
    from sandbox_app.core.otel.otel_import import open_trace
    from sandbox_app.core.running.recording import recording_text
    from tests.long_trace import write_trace

    trace = open_trace(write_trace(folder / "for-recording.jsonl", steps))
    path = folder / "long-recording.json"
    path.write_text(recording_text(trace.recording), encoding="utf-8")
    del trace
    size_mb = path.stat().st_size / 1e6
    window.recordings.set_speed(0.0)
    window.run_pane.reset()
    before = _settled_rss()

    beat = CpuBeat(interval_ms=5)
    first = await _first_screen(window, lambda: window.recordings.play(path))
    await wait_for(lambda: _finished(window), 600)
    beat.stop()
    grown = _settled_rss() - before
    return {
        "recording_steps": float(steps),
        "recording_file_mb": size_mb,
        "recording_first_screen_ms": first,
        **lag_figures("recording_stream", beat),
        "recording_rss_ratio": grown / size_mb,
    }


async def huge_observation(window: Any, folder: Path) -> dict[str, float]:
    """A run whose step 2 observed 10 MB: opened (its first read is the whole file, the 10 MB
    line parsed on the reading thread while the window waits), then shown folded, scrolled
    and paged: Show more ten times, a frame apart."""
    from tests.long_trace import write_trace

    path = write_trace(folder / "huge.jsonl", 3, huge_step=2, huge_bytes=10_000_000)
    window.recordings.set_speed(0.0)
    started = time.perf_counter()
    window.traces.open(path)
    await wait_for(lambda: _finished(window), 120)
    opened = time.perf_counter() - started
    view = window.run_pane.traces.rows
    beat = CpuBeat(interval_ms=5)
    for _ in range(10):  # Show more, ten pages
        fold = next(iter(view.rows.folds))
        view.model_.show_more(fold)
        view.scroll_to_row(fold)
        await asyncio.sleep(1 / 60)
    beat.stop()
    return {
        "huge_observation_open_s": opened,
        **lag_figures("huge_observation", beat),
        "huge_observation_rows": float(view.rows.count),
    }


def run(quick: bool) -> dict[str, float]:
    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv)
    app.setQuitOnLastWindowClosed(False)
    steps = 3_000 if quick else 30_000

    async def measure() -> dict[str, float]:
        from sandbox_app.ui.window.app import prepare_loop

        prepare_loop(asyncio.get_running_loop())
        figures: dict[str, float] = {}
        with tempfile.TemporaryDirectory() as folder:
            for step in (long_trace, recording):
                window = await make_window(folder)  # a window each: one's memory not the next's
                try:
                    figures.update(await step(window, Path(folder), steps))
                except TimeoutError:
                    figures[f"{step.__name__}_timed_out"] = 1.0
                    print(window.statusBar().currentMessage(), file=sys.stderr)
                print(json.dumps(figures), file=sys.stderr)
                await window.shutdown()
                window.close()
            window = await make_window(folder)
            figures.update(await huge_observation(window, Path(folder)))
            await window.shutdown()
            window.close()
        return figures

    return dict(qasync.run(measure()))


if __name__ == "__main__":
    print(json.dumps(run("--quick" in sys.argv), indent=1))
