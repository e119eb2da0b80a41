"""``react-sandbox eval``'s side of each finished run: its line in the results file, its
lane's tally, the progress line — and nothing kept. An evaluation of 100,000 runs holds each
lane's running sums (core/results/evaluation.py ``LaneTally``: a few numbers, and 8 bytes a
run for the latency percentiles), never the results: the summary comes from the tallies, the
report and the JUnit file from reading the results file again (core/results/result_stream.py).

:meth:`EvalRuns.finished` is the one place a result is handed on: the results file first
(flushed: a kill after it loses nothing of the run), then each of ``also`` (a store of past
evaluations and the OpenTelemetry export plug in there), then the tally and the progress.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TextIO

from sandbox_app.application.eval_runner import EvalRunner
from sandbox_app.cli.terminal import visible
from sandbox_app.core.results.checks import described
from sandbox_app.core.results.eval_result import EvalResult, RunKey
from sandbox_app.core.results.evaluation import LaneSummary, LaneTally
from sandbox_app.core.running.records import RunRecord

OnResult = Callable[[EvalResult, RunRecord], None]


class EvalRuns:
    """Make ``todo``'s runs with ``runner`` (made by the caller with :meth:`finished` as its
    ``on_result``), writing each to ``path``; ``out`` gets the progress (stderr, so that stdout
    holds only the summary)."""

    def __init__(
        self,
        path: Path,
        out: TextIO,
        tallies: dict[str, LaneTally],
        also: Sequence[OnResult] = (),
    ) -> None:
        self.out, self.path = out, path
        self.tallies = tallies  # each lane's sums: the earlier results' (a resume) and these
        self.also = also
        self._file: TextIO | None = None
        self._started = time.monotonic()
        self.total = 0  # the runs to make, for the progress
        self.count = 0  # the runs made
        self._failed = 0  # counted as they come: a sum over all results a run is quadratic
        self._live = out.isatty()

    async def run_all(self, runner: EvalRunner, todo: Iterable[RunKey]) -> None:
        try:
            await runner.run_all(todo)
        finally:
            if self._file is not None:
                self._file.close()
        if self._live:
            self.out.write("\n")

    def _opened(self) -> TextIO:
        """The results file, opened at the first result: a Ctrl+C before any leaves none."""
        if self._file is None:
            self._file = self.path.open("a", encoding="utf-8")
            if _cut_short(self.path):  # a kill mid-line: the next result starts a line of its own
                self._file.write("\n")
        return self._file

    def finished(self, result: EvalResult, record: RunRecord) -> None:
        """A run has ended: written, handed on, counted. Neither ``result`` nor its record is
        kept past this call (the runner drops them too)."""
        file = self._opened()
        # One whole line, flushed: a kill after this loses nothing of this run.
        file.write(json.dumps(result.to_dict(), ensure_ascii=False) + "\n")
        file.flush()
        for hand_on in self.also:  # the history database's row, the OpenTelemetry export…
            hand_on(result, record)
        self.tallies.setdefault(result.lane, LaneTally()).add(result)
        self.count += 1
        self._failed += not result.passed
        self._progress(result)

    def summaries(self, lanes: Sequence[str]) -> list[LaneSummary]:
        return [self.tallies.setdefault(lane, LaneTally()).summary(lane) for lane in lanes]

    def _progress(self, result: EvalResult) -> None:
        count, failed = self.count, self._failed
        elapsed = time.monotonic() - self._started
        total = max(self.total, count)
        left = elapsed / count * (total - count)
        if self._live:
            filled = round(30 * count / total)
            self.out.write(
                f"\r[{'=' * filled}{' ' * (30 - filled)}] {count}/{total} runs · "
                f"{failed} failed · ~{left:.0f} s left\033[K"
            )
        else:
            # The answer, then each check that did not pass (a right answer on a wrong path).
            why = described(result.answer, result.checks)
            verdict = "passed" if result.passed else f"FAILED ({why})"
            line = (
                f"{count}/{total} {result.lane} case {result.case + 1} repeat "
                f"{result.repeat + 1}: {verdict}"
            )
            self.out.write(visible(line) + "\n")  # the answer and lane are others' words
        self.out.flush()


def _cut_short(path: Path) -> bool:
    """Whether ``path``'s last line has no line end (a process killed while writing it)."""
    with path.open("rb") as file:
        if file.seek(0, 2) == 0:
            return False
        file.seek(-1, 2)
        return file.read(1) != b"\n"
