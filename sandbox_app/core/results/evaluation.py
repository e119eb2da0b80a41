"""Evaluating a test set: which runs a plan holds, what a results file already has, and the
per-lane summary with a pass rate you can trust (a 95 % interval counted by case when cases
repeat: core/estimates/intervals.py).

A run is one lane × one case × one repeat, identified by its :class:`RunKey`; a results file
is one JSON line per finished run (see ``eval_command.py``), so a killed process loses no
finished run and a resumed one skips what is done.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sandbox_app.core.estimates.intervals import Spread, clustered_interval, wilson
from sandbox_app.core.estimates.pass_rates import interval_words
from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.results.eval_result import RunKey as RunKey  # where it has been imported
from sandbox_app.core.running.metrics import plural
from sandbox_app.core.untrusted.file_reader import ReadError, display_name, iter_lines


def plan(lanes: Sequence[str], cases: int, repeats: int) -> list[RunKey]:
    """Every run, case by case, so early results already cover every lane."""
    return list(iter_plan(lanes, cases, repeats))


def iter_plan(lanes: Sequence[str], cases: int, repeats: int) -> Plan:
    """:func:`plan` one run at a time: a large test set × repeats is never held at once."""
    return Plan(tuple(lanes), cases, repeats)


@dataclass(frozen=True)
class Plan(Collection[RunKey]):
    """Every run of an evaluation, in :func:`plan`'s order, without a list of them: its
    length and whether it holds a run are arithmetic, its runs made one at a time."""

    lanes: tuple[str, ...]
    cases: int
    repeats: int

    def __len__(self) -> int:
        return len(self.lanes) * self.cases * self.repeats

    def __contains__(self, key: object) -> bool:
        return (
            isinstance(key, RunKey)
            and key.lane in self.lanes
            and 0 <= key.case < self.cases
            and 0 <= key.repeat < self.repeats
        )

    def __iter__(self) -> Iterator[RunKey]:
        for case in range(self.cases):
            for repeat in range(self.repeats):
                for lane in self.lanes:
                    yield RunKey(lane, case, repeat)


# 16 GiB: read line by line (result_stream.py), never whole; 100,000 runs of the example's
# three-step traces make 1.1 GB.
MAX_RESULTS_BYTES = 16 << 30


@dataclass(frozen=True)
class ResultsFile:
    """What a results file holds for a resumed evaluation: the runs to count, and how many
    lines were not (``damaged``: unreadable or of the wrong shape; ``outside``: runs this
    evaluation does not plan, such as a case since removed)."""

    results: list[EvalResult]
    damaged: int = 0
    outside: int = 0

    def notice(self, name: str) -> str:
        """One line saying what was left out, or ""."""
        parts = []
        if self.damaged:
            parts.append(f"{plural(self.damaged, 'damaged line')} skipped, not counted")
        if self.outside:
            parts.append(
                f"{plural(self.outside, 'result')} for runs this evaluation does not have "
                "(a case, lane or repeat no longer in it) left out"
            )
        return f"{name}: {'; '.join(parts)}." if parts else ""


def read_results(path: Path, planned: Collection[RunKey] | None = None) -> list[EvalResult]:
    """The finished runs in a results file (see :func:`results_file`)."""
    return results_file(path, planned).results


def results_file(path: Path, planned: Collection[RunKey] | None = None) -> ResultsFile:
    """Read a results file line by line: a line cut short by a kill (even inside a
    character), one that is not a result or whose fields have the wrong types is skipped and
    counted as damaged; with ``planned``, a run it does not hold is left out. A file that
    cannot be read at all (not a regular file, too large) is a :class:`ReadError`."""
    if not os.path.lexists(path):
        return ResultsFile([])
    name = display_name(path)
    results: list[EvalResult] = []
    damaged = outside = 0
    for number, raw in enumerate(iter_lines(path, MAX_RESULTS_BYTES, "a results file"), 1):
        if not raw.strip():
            continue
        try:
            result = EvalResult.from_json(raw, f"{name} line {number}")
        except ReadError:
            damaged += 1
            continue
        if planned is not None and result.key not in planned:
            outside += 1
            continue
        results.append(result)
    return ResultsFile(results, damaged, outside)


Done = Iterable[EvalResult] | Mapping[RunKey, bool]  # results, or each run's verdict


def _verdicts(done: Done) -> Mapping[RunKey, bool]:
    """Each run's latest verdict: ``done`` itself when it is already that (a scan's)."""
    if isinstance(done, Mapping):
        return done
    return {result.key: result.passed for result in done}


def still_to_run(planned: Iterable[RunKey], done: Done, only_failed: bool = False) -> list[RunKey]:
    """What a resumed evaluation runs: what is not done yet, or (``only_failed``) the runs
    whose latest result failed."""
    latest = _verdicts(done)
    if only_failed:
        return [key for key in planned if latest.get(key) is False]
    return [key for key in planned if key not in latest]


def pending(planned: Iterable[RunKey], done: Done, only_failed: bool = False) -> Iterator[RunKey]:
    """:func:`still_to_run` one run at a time (to feed a runner from :func:`iter_plan`)."""
    latest = _verdicts(done)
    for key in planned:
        if (latest.get(key) is False) if only_failed else (key not in latest):
            yield key


def count_pending(planned: Collection[RunKey], done: Done, only_failed: bool = False) -> int:
    """How many runs :func:`pending` gives for ``planned``, without going through them."""
    latest = _verdicts(done)
    in_plan = [passed for key, passed in latest.items() if key in planned]
    if only_failed:
        return in_plan.count(False)
    return len(planned) - len(in_plan)


@dataclass(frozen=True)
class LaneSummary:
    lane: str
    runs: int
    passed: int
    mean_steps: float
    tool_calls: int
    format_errors: int
    loops: int  # the model repeating itself (core/running/loops.py), over all runs
    tokens_in: int
    tokens_out: int
    thinking_tokens: int
    latency_p50_s: float
    latency_p95_s: float
    # Steps whose prompt the server cut silently (core/running/context_meter.py), all runs.
    prompt_cuts: int = 0
    # Judged answers: the judge's tokens (in + out) and cost (None: no judge price known).
    judge_tokens: int = 0
    judge_cost: float | None = None
    # Some run's token counts are the app's estimate (its server sent no usage): shown with ~,
    # as `run` shows them.
    estimated: bool = False
    # Seconds the lane's runs waited for their server's turn (a place, a 429's wait), over all
    # runs: apart from the latencies, which are working time.
    queued_s: float = 0.0
    # The cases the runs were of, and the runs' effective number the interval is counted at
    # (core/estimates/intervals.py): a case's repeats are not independent trials. 0: not
    # known (a summary made without its cases), and the interval is Wilson's over the runs.
    cases: int = 0
    effective_runs: float = 0.0

    @property
    def pass_rate(self) -> float:
        return self.passed / self.runs if self.runs else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        if not self.effective_runs:
            return wilson(self.passed, self.runs)
        return wilson(self.pass_rate * self.effective_runs, self.effective_runs)

    def row(self) -> str:
        approx = "~" if self.estimated else ""
        return (
            f"{self.lane}: {self.pass_rate:.0%} ({self.passed}/{self.runs}, 95% CI "
            f"{interval_words(self.interval, self.cases, self.runs)}) · "
            f"{self.mean_steps:.1f} steps · "
            f"{self.tool_calls} tool calls · {self.format_errors} format errors · "
            + (f"{plural(self.loops, 'loop')} · " if self.loops else "")
            + (f"{plural(self.prompt_cuts, 'prompt cut')} · " if self.prompt_cuts else "")
            + f"tokens {approx}{self.tokens_in:,} in / {approx}{self.tokens_out:,} out"
            + (f" · thinking {self.thinking_tokens:,}" if self.thinking_tokens else "")
            + f" · p50 {self.latency_p50_s:.2f} s · p95 {self.latency_p95_s:.2f} s"
            + (f" working, {self.queued_s:.1f} s queued" if self.queued_s else "")
            + (f" · {self.judge_words()}" if self.judge_tokens else "")
        )

    def judge_words(self) -> str:
        """The judge's share: "judge 1,234 tokens, $0.0012" (no price: no cost said)."""
        cost = f", ${self.judge_cost:.4f}" if self.judge_cost is not None else ""
        return f"judge {self.judge_tokens:,} tokens{cost}"


def summarise(results: Iterable[EvalResult], lanes: Sequence[str]) -> list[LaneSummary]:
    """One summary per lane, from each run's latest result."""
    return summarise_latest({result.key: result for result in results}, lanes)


def summarise_latest(
    latest: Mapping[RunKey, EvalResult], lanes: Sequence[str]
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
    loops: int = 0
    prompt_cuts: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    estimated: int = 0  # runs whose token counts are estimates
    thinking: int = 0
    # Each run's working time (its wall time less its queue time), for the percentiles: 8
    # bytes a run (a list of floats takes 32).
    walls: array[float] = field(default_factory=lambda: array("d"))
    queued: float = 0.0
    judge_tokens: int = 0  # judged answers' requests (a result's "judge")
    judge_cost: float | None = None
    # The prompt versions the lane's runs were made with, in the order first seen (a resumed
    # file can span an edit): a handful of ids, however many runs.
    versions: dict[str, None] = field(default_factory=dict)
    # For the interval by case (a case's repeats are not independent trials): each case's runs
    # and passes as one int, ``runs << 32 | passes`` (a dict entry and an int, ~90 bytes a
    # case), and how many cases have each (runs, passes), kept as runs come and go.
    by_case: dict[int, int] = field(default_factory=dict)
    spread: dict[tuple[int, int], int] = field(default_factory=dict)

    def add(self, result: EvalResult, sign: int = 1) -> None:
        m = result.metrics
        self.runs += sign
        self.passed += sign * result.passed
        self.steps += sign * m.steps
        self.tool_calls += sign * m.tool_calls
        self.format_errors += sign * m.format_errors
        self.loops += sign * m.loops
        self.prompt_cuts += sign * m.truncations
        self.tokens_in += sign * m.tokens_in
        self.tokens_out += sign * m.tokens_out
        self.estimated += sign * m.estimated
        self.thinking += sign * m.reasoning_tokens
        self.queued += sign * m.queued_s
        self._count_case(result.key.case, sign, sign * result.passed)
        if result.judge is not None:
            self.judge_tokens += sign * (result.judge.tokens_in + result.judge.tokens_out)
            if result.judge.cost is not None:
                self.judge_cost = (self.judge_cost or 0.0) + sign * result.judge.cost
        if sign > 0:
            self.walls.append(m.working_s)
            if result.prompt_version:
                self.versions.setdefault(result.prompt_version, None)
        else:
            self.walls.remove(m.working_s)

    def remove(self, result: EvalResult) -> None:
        self.add(result, -1)

    def _count_case(self, case: int, runs: int, passes: int) -> None:
        was = self.by_case.pop(case, 0)
        before = (was >> 32, was & 0xFFFFFFFF)
        after = (before[0] + runs, before[1] + passes)
        for counts, change in ((before, -1), (after, 1)):
            left = self.spread.pop(counts, 0) + change
            if counts[0] and left:  # a case with no run is in no count
                self.spread[counts] = left
        if after[0]:
            self.by_case[case] = after[0] << 32 | after[1]

    def cases(self) -> Iterator[tuple[int, int, int]]:
        """Each case's (number, runs, passes)."""
        for case, packed in self.by_case.items():
            yield case, packed >> 32, packed & 0xFFFFFFFF

    def summary(self, lane: str) -> LaneSummary:
        walls = sorted(self.walls)
        return LaneSummary(
            lane,
            self.runs,
            self.passed,
            self.steps / self.runs if self.runs else 0.0,
            self.tool_calls,
            self.format_errors,
            self.loops,
            self.tokens_in,
            self.tokens_out,
            self.thinking,
            _percentile(walls, 50),
            _percentile(walls, 95),
            self.prompt_cuts,
            self.judge_tokens,
            self.judge_cost,
            estimated=self.estimated > 0,
            queued_s=self.queued,
            cases=len(self.by_case),
            effective_runs=clustered_interval(self.spread)[2],
        )


def spread_by_case(*tallies: LaneTally) -> Spread:
    """How many cases had each (runs, passes) count over ``tallies`` (a case's runs in every
    lane are one case's: its difficulty is the same whichever lane runs it)."""
    if len(tallies) == 1:
        return tallies[0].spread
    by_case: dict[int, tuple[int, int]] = {}
    for tally in tallies:
        for case, runs, passes in tally.cases():
            was = by_case.get(case, (0, 0))
            by_case[case] = (was[0] + runs, was[1] + passes)
    spread: dict[tuple[int, int], int] = {}
    for counts in by_case.values():
        spread[counts] = spread.get(counts, 0) + 1
    return spread


def _percentile(ordered: list[float], p: float) -> float:
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]
