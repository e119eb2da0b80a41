"""Two evaluations compared: the runs that flipped from pass to fail and from fail to pass.

A run is matched by its lane, case and repeat. Two evaluations of the same lanes match by
lane name; where the names differ (``eval --prompt`` titles a lane ``LANE @ VERSION``), the
lanes left over are matched in order, the first unmatched of one with the first of the
other. Runs only one side has are counted, never called flips.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sandbox_app.core.results.evaluation import wilson
from sandbox_app.core.results.history_db import HistoryStore, RunKeyTuple


def rate(passed: int, runs: int) -> str:
    """``92% (11/12, 95% CI 65%–99%)``: a pass rate with its Wilson interval, as ``eval``'s
    summary says it."""
    low, high = wilson(passed, runs)
    share = passed / runs if runs else 0.0
    return f"{share:.0%} ({passed}/{runs}, 95% CI {low:.0%}–{high:.0%})"


@dataclass(frozen=True, order=True)
class Flip:
    case: int  # 0-based
    repeat: int
    lane: str  # the first evaluation's lane
    other_lane: str  # the second's
    was: bool  # passed in the first
    now: bool  # passed in the second

    @property
    def direction(self) -> str:
        return "pass → fail" if self.was else "fail → pass"


@dataclass(frozen=True)
class HistoryDiff:
    first: int
    second: int
    flips: list[Flip]
    compared: int  # runs both have
    only_first: int
    only_second: int

    @property
    def broke(self) -> list[Flip]:
        return [f for f in self.flips if f.was]

    @property
    def fixed(self) -> list[Flip]:
        return [f for f in self.flips if not f.was]


def lane_pairs(first: Sequence[str], second: Sequence[str]) -> dict[str, str]:
    """Each lane of ``first`` → the lane of ``second`` it is compared with."""
    pairs = {lane: lane for lane in first if lane in second}
    left = [lane for lane in first if lane not in pairs]
    right = [lane for lane in second if lane not in pairs.values()]
    pairs.update(zip(left, right, strict=False))
    return pairs


def diff_verdicts(
    first: Mapping[RunKeyTuple, bool],
    second: Mapping[RunKeyTuple, bool],
    lanes: Mapping[str, str],
) -> tuple[list[Flip], int, int, int]:
    flips: list[Flip] = []
    compared = 0
    for (lane, case, repeat), was in first.items():
        other = lanes.get(lane)
        now = second.get((other, case, repeat)) if other is not None else None
        if now is None:
            continue
        compared += 1
        if now != was:
            flips.append(Flip(case, repeat, lane, other or lane, was, now))
    flips.sort()
    return flips, compared, len(first) - compared, len(second) - compared


def diff_evaluations(store: HistoryStore, first: int, second: int) -> HistoryDiff:
    """What changed from evaluation ``first`` to ``second`` (HistoryError: one missing)."""
    a, b = store.evaluation(first), store.evaluation(second)
    flips, compared, only_a, only_b = diff_verdicts(
        store.verdicts(first), store.verdicts(second), lane_pairs(a.lanes, b.lanes)
    )
    return HistoryDiff(first, second, flips, compared, only_a, only_b)
