"""The render and lag figures per backend kind (issue 26): each kind's own stream decoding,
from the socket through its SDK into the window, against its test server in its own process.

    uv run python -m tests.perf.bench --kinds      # only these figures
    uv run python -m tests.perf.kinds_bench        # the same, without the bench's flags

For each kind (the OpenAI-compatible one as the baseline, then ``anthropic``, ``responses``,
``gemini``, ``ollama-native``) the same reply, half thinking and half ReAct text, in the
kind's own stream shape (tests/perf/serve_kind.py):

- ``kind_tps_<kind>``: tokens/s one Run-tab pane takes in, unthrottled server (target ≥
  20,000, the figure ``render_tps_max`` holds the pane alone to);
- ``kind_lag_p99_ms_<kind>`` (≤ 16), ``kind_lag_max_ms_<kind>`` and
  ``kind_behind_ms_p99_<kind>``: four compare lanes of that kind, 2,000 tokens/s each.

A token is one streamed piece (one delta or chunk), as each server counts it in its usage.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.perf.bench import (
    ROOT,
    THINKING_TEXT,
    THOUGHT,
    Behind,
    make_window,
    model_reply,
    percentile,
    tokens_of,
    wait_for,
)
from tests.perf.serve_kind import KINDS

RATE = 2000.0  # tokens/s a lane streams at in the lag figure
# The kinds' backend classes, whose _stream decodes the stream: stamped for tokens-behind.
BACKENDS = {
    "custom": ("sandbox_app.backends.chat_completions.openai_compat", "OpenAICompatBackend"),
    "anthropic": ("sandbox_app.backends.messages_api.anthropic_kind", "AnthropicBackend"),
    "responses": ("sandbox_app.backends.responses_api.responses_kind", "ResponsesBackend"),
    "gemini": ("sandbox_app.backends.gemini_api.gemini_kind", "GeminiBackend"),
    "ollama-native": ("sandbox_app.backends.ollama_api.ollama_kind", "OllamaBackend"),
}


def reply(n_tokens: int, long_line: bool = True) -> dict[str, str]:
    """About ``n_tokens``: the first half thinking, the rest mixed Thought/Action text with one
    20,000-character line (bench.model_reply; without it with ``long_line`` False), ending in
    an answer so the run is one step (the actions are renamed: no tool runs)."""
    thoughts = THINKING_TEXT * max(1, (n_tokens // 2) // len(tokens_of(THINKING_TEXT)))
    text = model_reply(n_tokens // 2) if long_line else THOUGHT * max(1, n_tokens // 40)
    text = text.replace("Action:", "Next:") + "\nFinal Answer: done\n"
    return {"thinking": thoughts, "text": text}


@contextmanager
def kind_server(kind: str, spec: dict[str, dict[str, Any]]) -> Iterator[str]:
    """The kind's test server in its own process (so it never competes with the app for the
    GIL); yields its base URL."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as spec_file:
        json.dump(spec, spec_file)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.perf.serve_kind", kind, spec_file.name],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdin is not None
    base_url = proc.stdout.readline().strip()
    try:
        if not base_url:
            raise RuntimeError(f"the {kind} test server did not start")
        yield base_url
    finally:
        proc.stdin.close()  # the server's signal to stop
        proc.wait(timeout=10)
        proc.stdout.close()
        os.unlink(spec_file.name)


class KindBehind(Behind):
    """Tokens-behind with the arrivals stamped in one kind's backend (bench.Behind stamps the
    OpenAI-compatible one)."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    @contextmanager
    def stamping_arrivals(self) -> Iterator[None]:
        import importlib

        module, name = BACKENDS[self.kind]
        backend_class = getattr(importlib.import_module(module), name)
        original = backend_class.__dict__["_stream"]
        arrived = self.arrived

        async def stamped(backend: Any, messages: Any, params: Any) -> Any:
            log = arrived.setdefault(params.model, [])
            async for delta in original(backend, messages, params):
                if delta.text or delta.reasoning:
                    total = (log[-1][1] if log else 0) + len(delta.text) + len(delta.reasoning)
                    log.append((time.perf_counter(), total))
                yield delta

        backend_class._stream = stamped
        try:
            yield
        finally:
            backend_class._stream = original


def _finished(window: Any) -> Any:
    record = window.run_pane.history.latest
    return record.finished if record else None


async def kind_tps(window: Any, kind: str, base_url: str, model: str) -> dict[str, float]:
    """One Run-tab pane, unthrottled server: tokens/s from the socket, through the kind's SDK
    and stream decoding, into the pane."""
    panel = window.backend_panel
    panel.select(kind, base_url, model)
    panel.settings_form.widgets["max_tokens"].setValue(32768)
    window.tabs.setCurrentIndex(0)
    started, cpu = time.perf_counter(), time.process_time()
    window.start_run()
    await wait_for(lambda: not window.controller.running, seconds=600)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    result = _finished(window)
    tokens = float(result.metrics.tokens_out) if result else 0.0
    return {
        "tps": tokens / elapsed,
        # The app's CPU time (all its threads) per token: what the load of the machine's
        # other jobs changes least.
        "tokens_per_cpu_s": tokens / cpu if cpu else 0.0,
        "tokens": tokens,
        "answered": float(result is not None and result.status == "answered"),
    }


async def kind_lanes_lag(
    window: Any, kind: str, base_url: str, prefix: str = "lane"
) -> dict[str, float]:
    """Four compare lanes of one kind at 2,000 tokens/s each: the event loop's lag and how far
    the panes' text is behind the stream."""
    from sandbox_app.core.scenarios.scenario import LaneConfig
    from tests.heartbeat import Heartbeat

    compare = window.compare
    compare.set_lanes(tuple(LaneConfig(kind, base_url, f"{prefix}{i}") for i in range(4)))
    for lane in compare.lanes:
        lane.backend_panel.settings_form.widgets["max_tokens"].setValue(32768)
    window.tabs.setCurrentWidget(compare)
    behind = KindBehind(kind)
    for i, lane in enumerate(compare.lanes):
        behind.watch(lane.trace, f"{prefix}{i}")
    await asyncio.sleep(0.5)  # the lanes laid out before the heartbeat starts
    with behind.stamping_arrivals():
        beat = Heartbeat(interval_ms=5)
        compare.run_all()
        await wait_for(lambda: not compare.running, seconds=600)
        beat.stop()
    runs = [run for lane in compare.lanes for run in lane.record.runs]
    samples = behind.samples()
    return {
        "lag_p99_ms": percentile(beat.lags or [0.0], 99) * 1000,
        "lag_max_ms": max(beat.lags, default=0.0) * 1000,
        "behind_ms_p99": percentile(samples or [0.0], 99) * 1000,
        "behind_samples": float(len(samples)),
        "answered": float(all(run.status == "answered" for run in runs)),
        "tokens": float(sum(run.metrics.tokens_out for run in runs)),
    }


def spec_for(tps_tokens: int, lane_tokens: int) -> dict[str, dict[str, Any]]:
    """One unthrottled model for the throughput figure, four paced ones for the lanes."""
    lanes = {f"lane{i}": {**reply(lane_tokens), "rate": RATE, "turns": 1} for i in range(4)}
    return {
        "warm": {**reply(200), "rate": None, "turns": 1},
        "unthrottled": {**reply(tps_tokens), "rate": None, "turns": 1},
        **lanes,
    }


async def measure_kinds(
    kinds: tuple[str, ...] = KINDS, tps_tokens: int = 20_000, lane_tokens: int = 20_000
) -> dict[str, float]:
    """Both figures for each kind, a fresh window per kind (one kind's runs never weigh on
    the next kind's figures)."""
    spec = spec_for(tps_tokens, lane_tokens)
    figures: dict[str, float] = {}
    for kind in kinds:
        name = kind.replace("-", "_")
        with kind_server(kind, spec) as base_url, tempfile.TemporaryDirectory() as settings:
            window = await make_window(settings)
            # A first, short run pays the one-off costs (the kind's SDK imported, its client
            # made), as the openai SDK is imported at start-up before bench.end_to_end_tps.
            await kind_tps(window, kind, base_url, "warm")
            tps = await kind_tps(window, kind, base_url, "unthrottled")
            figures[f"kind_tps_{name}"] = tps["tps"]
            figures[f"kind_tokens_per_cpu_s_{name}"] = tps["tokens_per_cpu_s"]
            figures[f"kind_tps_tokens_{name}"] = tps["tokens"]
            figures[f"kind_tps_answered_{name}"] = tps["answered"]
            lag = await kind_lanes_lag(window, kind, base_url)
            for key, value in lag.items():
                figures[f"kind_{key}_{name}"] = value
            await window.shutdown()
            window.close()
        mine = {k: round(v, 2) for k, v in figures.items() if k.endswith(name)}
        print(f"{kind}: {json.dumps(mine)}", file=sys.stderr)  # progress, figures so far
    return figures


async def in_app(quick: bool, kinds: tuple[str, ...] = KINDS) -> dict[str, float]:
    from sandbox_app.ui.window.app import prepare_loop

    prepare_loop(asyncio.get_running_loop())
    scale = 10 if quick else 1
    return await measure_kinds(kinds, tps_tokens=20_000 // scale, lane_tokens=20_000 // scale)


def run(quick: bool, kinds: tuple[str, ...] = KINDS) -> dict[str, float]:
    """The figures, measured in a QApplication of this process (bench.main calls this)."""
    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv)
    app.setQuitOnLastWindowClosed(False)
    return dict(qasync.run(in_app(quick, kinds)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="replies a tenth as long")
    parser.add_argument("--kind", action="append", choices=KINDS, help="only this kind")
    args = parser.parse_args()
    print(json.dumps(run(args.quick, tuple(args.kind or KINDS)), indent=1))


if __name__ == "__main__":
    main()
