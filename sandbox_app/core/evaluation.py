"""Evaluating a test set: which runs a plan holds, what a results file already has, and the
per-lane summary with a pass rate you can trust (a 95 % Wilson interval).

A run is one lane × one case × one repeat, identified by its :class:`RunKey`; a results file
is one JSON line per finished run (see ``eval_command.py``), so a killed process loses no
finished run and a resumed one skips what is done.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
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
    return summarise_latest({key_of(result): result for result in results}, lanes)


def summarise_latest(
    latest: Mapping[RunKey, dict[str, Any]], lanes: Sequence[str]
) -> list[LaneSummary]:
    """:func:`summarise` of results already keyed by run."""
    tallies = {lane: LaneTally() for lane in lanes}
    for key, result in latest.items():
        tally = tallies.get(key.lane)
        if tally is not None:
            tally.add(result)
    return [tally.summary(lane) for lane, tally in tallies.items()]


@dataclass
class LaneTally:
    """A lane's running sums, so a window showing thousands of runs adds each as it ends
    (and takes back one a re-run replaces) instead of reading them all again."""

    runs: int = 0
    passed: int = 0
    steps: int = 0
    tool_calls: int = 0
    format_errors: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    thinking: int = 0
    walls: list[float] = field(default_factory=list)

    def add(self, result: dict[str, Any], sign: int = 1) -> None:
        m = result.get("metrics") or {}
        self.runs += sign
        self.passed += sign * bool(result["passed"])
        self.steps += sign * len(m.get("steps") or ())
        self.tool_calls += sign * int(m.get("tool_calls") or 0)
        self.format_errors += sign * int(m.get("format_errors") or 0)
        self.tokens_in += sign * int(m.get("tokens_in") or 0)
        self.tokens_out += sign * int(m.get("tokens_out") or 0)
        self.thinking += sign * int(m.get("reasoning_tokens") or 0)
        wall = float(m.get("wall_s") or 0.0)
        if sign > 0:
            self.walls.append(wall)
        else:
            self.walls.remove(wall)

    def remove(self, result: dict[str, Any]) -> None:
        self.add(result, -1)

    def summary(self, lane: str) -> LaneSummary:
        walls = sorted(self.walls)
        return LaneSummary(
            lane,
            self.runs,
            self.passed,
            self.steps / self.runs if self.runs else 0.0,
            self.tool_calls,
            self.format_errors,
            self.tokens_in,
            self.tokens_out,
            self.thinking,
            _percentile(walls, 50),
            _percentile(walls, 95),
        )


def _percentile(ordered: list[float], p: float) -> float:
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]
