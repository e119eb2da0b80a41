"""``eval --baseline ID|latest`` and ``--fail-on-regression``: the evaluation just run, compared
arm by arm with a baseline in the history database (core/comparing/: arms paired by what
made them, cases k/N → k/N, the difference with its paired 95 % interval and a verdict).

``latest`` is the evaluation marked as the scenario's baseline (History → Set as baseline,
``history baseline ID``), else the newest finished one of the same scenario file before this
one. ``--fail-on-regression`` fails (exit 7) only when an arm is *worse* beyond the interval;
nothing to compare (no history, no baseline, no arm in common) is said, never a failure.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from sandbox_app.application.history import EvaluationLog
from sandbox_app.cli.terminal import say
from sandbox_app.core.comparing.arm_diff import Cells, EvaluationDiff, verdict_document
from sandbox_app.core.comparing.evaluations import cells_in, diff_evaluations
from sandbox_app.core.history.history_arms import baseline_of
from sandbox_app.core.history.history_schema import HistoryError

LATEST = "latest"


def add_baseline_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--baseline",
        metavar="ID|latest",
        help="compare this evaluation arm by arm with evaluation ID of the history (latest: "
        "the scenario's marked baseline, else its newest finished evaluation before this one)",
    )
    p.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 7 when an arm is worse than its --baseline arm beyond the 95 %% interval",
    )


def check_baseline_option(args: argparse.Namespace) -> None:
    """Before any run: a bad --baseline is a usage line, not a surprise at the end."""
    given = args.baseline
    if args.fail_on_regression and given is None:
        raise ValueError("--fail-on-regression needs --baseline ID or --baseline latest")
    if given is not None and given != LATEST and not (given.isdigit() and int(given) > 0):
        raise ValueError(f"--baseline takes an evaluation's number or latest (got {given})")


@dataclass(frozen=True)
class BaselineDiff:
    baseline: int
    current: int
    diff: EvaluationDiff

    @property
    def names(self) -> tuple[str, str]:
        return f"#{self.baseline}", f"#{self.current}"

    def document(self) -> dict[str, object]:
        first, second = self.names
        return {
            "baseline": self.baseline,
            "evaluation": self.current,
            "comparisons": [verdict_document(c, first, second) for c in self.diff.comparisons],
            "only_in_baseline": self.diff.only_first,
            "only_in_evaluation": self.diff.only_second,
            "regressed": bool(self.diff.worse),
        }


def compare_with_baseline(
    args: argparse.Namespace, log: EvaluationLog, where: str
) -> BaselineDiff | None:
    """The diff, or None with the reason said in one line (the evaluation stands)."""
    if args.baseline is None:
        return None
    store = log.history.store
    if store is None or log.id is None:
        say("react-sandbox eval: --baseline: no history to compare with (history is off)")
        return None
    try:
        base = int(args.baseline) if args.baseline != LATEST else baseline_of(store, where, log.id)
        if base is None:
            say("react-sandbox eval: --baseline latest: no earlier evaluation of this scenario")
            return None
        return BaselineDiff(base, log.id, diff_evaluations(store, base, log.id))
    except HistoryError as err:
        say(f"react-sandbox eval: --baseline: {err}")
        return None


def counted_in_history(log: EvaluationLog) -> Cells | None:
    """The evaluation's runs counted per arm and case by the history database (in SQL: no
    result read whole: 48 ms at 10,000 runs), for its arms compared within it; None when
    history is off (or went off during the runs): then the results file is read again (2.2-3.5 s
    at 10,000 runs with their traces)."""
    store = log.history.store
    if store is None or log.id is None:
        return None
    try:
        return cells_in(store, log.id)
    except HistoryError:
        return None
