"""Evaluating a test set: which runs a plan holds, what a results file already has, and the
per-lane summary with a pass rate you can trust (a 95 % Wilson interval).

A run is one lane × one case × one repeat, identified by its :class:`RunKey`; a results file
is one JSON line per finished run (see ``eval_command.py``), so a killed process loses no
finished run and a resumed one skips what is done.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from typing import Any

Z_95 = 1.959963984540054  # the normal quantile for a two-sided 95 % interval


@dataclass(frozen=True, order=True)
class RunKey:
    lane: str
    case: int  # index in the test set
    repeat: int  # 0-based


def plan(lanes: Sequence[str], cases: int, repeats: int) -> list[RunKey]:
    """Every run, case by case, so early results already cover every lane."""
    return [
        RunKey(lane, case, repeat)
        for case in range(cases)
        for repeat in range(repeats)
        for lane in lanes
    ]


def read_results(path: Path) -> list[dict[str, Any]]:
    """The finished runs in a results file; a line cut short by a kill is ignored."""
    if not path.is_file():
        return []
    results = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue  # the last line of a killed process may be half written
        if isinstance(item, dict) and {"lane", "case", "repeat", "passed"} <= item.keys():
            results.append(item)
    return results


def key_of(result: dict[str, Any]) -> RunKey:
    return RunKey(str(result["lane"]), int(result["case"]), int(result["repeat"]))


def still_to_run(
    planned: Iterable[RunKey], done: Iterable[dict[str, Any]], only_failed: bool = False
) -> list[RunKey]:
    """What a resumed evaluation runs: what is not done yet, or (``only_failed``) the runs
    whose latest result failed."""
    latest = {key_of(result): bool(result["passed"]) for result in done}
    if only_failed:
        return [key for key in planned if latest.get(key) is False]
    return [key for key in planned if key not in latest]


def wilson(passed: int, total: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a pass rate: sound for small N and for 0 % or 100 %."""
    if total == 0:
        return (0.0, 1.0)
    p = passed / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class LaneSummary:
    lane: str
    runs: int
    passed: int
    mean_steps: float
    tool_calls: int
    format_errors: int
    tokens_in: int
    tokens_out: int
    thinking_tokens: int
    latency_p50_s: float
    latency_p95_s: float

    @property
    def pass_rate(self) -> float:
        return self.passed / self.runs if self.runs else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.passed, self.runs)

    def row(self) -> str:
        low, high = self.interval
        return (
            f"{self.lane}: {self.pass_rate:.0%} ({self.passed}/{self.runs}, 95% CI "
            f"{low:.0%}–{high:.0%}) · {self.mean_steps:.1f} steps · "
            f"{self.tool_calls} tool calls · {self.format_errors} format errors · tokens "
            f"{self.tokens_in:,} in / {self.tokens_out:,} out"
            + (f" · thinking {self.thinking_tokens:,}" if self.thinking_tokens else "")
            + f" · p50 {self.latency_p50_s:.2f} s · p95 {self.latency_p95_s:.2f} s"
        )


def summarise(results: Iterable[dict[str, Any]], lanes: Sequence[str]) -> list[LaneSummary]:
    """One summary per lane, from each run's latest result."""
    latest: dict[RunKey, dict[str, Any]] = {}
    for result in results:
        latest[key_of(result)] = result
    summaries = []
    for lane in lanes:
        mine = [r for key, r in sorted(latest.items()) if key.lane == lane]
        metrics = [r.get("metrics") or {} for r in mine]
        walls = sorted(float(m.get("wall_s") or 0.0) for m in metrics)
        summaries.append(
            LaneSummary(
                lane,
                len(mine),
                sum(bool(r["passed"]) for r in mine),
                mean(len(m.get("steps") or ()) for m in metrics) if metrics else 0.0,
                sum(int(m.get("tool_calls") or 0) for m in metrics),
                sum(int(m.get("format_errors") or 0) for m in metrics),
                sum(int(m.get("tokens_in") or 0) for m in metrics),
                sum(int(m.get("tokens_out") or 0) for m in metrics),
                sum(int(m.get("reasoning_tokens") or 0) for m in metrics),
                _percentile(walls, 50),
                _percentile(walls, 95),
            )
        )
    return summaries


def _percentile(ordered: list[float], p: float) -> float:
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]
