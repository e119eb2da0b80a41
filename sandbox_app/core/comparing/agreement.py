"""Can the judge be trusted, and which arm do people prefer: the sums, with no Qt.

**A judge's agreement** with the human grades on the same runs (each graded run it decided
is a label: the person's 👍/👎 beside the judge's pass/fail): Cohen's κ — the agreement
beyond what two raters with those pass rates would reach by chance, so a judge that passes
everything scores 0 however many answers pass — its true-pass rate (of the runs people
passed, the share it passed) and true-fail rate (of the runs people failed, the share it
failed), and the number of labels. A judge is *calibrated* with κ ≥ :data:`KAPPA_FLOOR` on at
least :data:`MIN_LABELS` labels: 0.6 is where Landis and Koch's "substantial" agreement
starts; raw agreement (zeroclaw#9227's ≥ 0.85) is not used because it rewards a judge for a
test set's prevalence; 50 labels as zeroclaw#9227 asks (κ's standard error is then about
0.1). An uncalibrated judge's verdicts are shown, and never fail a build alone
(cli/evaluating/eval_baseline.py).

**A blind pairwise review**'s win rate: of the choices that were not a tie, the share the
first arm won, with its 95 % Wilson interval; ties are counted and said beside it, never
halved into wins (the interval is then a binomial one, whose coverage the tests check by
simulation).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sandbox_app.core.estimates.intervals import wilson

KAPPA_FLOOR = 0.6
MIN_LABELS = 50


@dataclass(frozen=True)
class Agreement:
    """The 2×2 table of the people's grade against the judge's verdict."""

    both_pass: int = 0  # people 👍, judge pass
    only_people: int = 0  # people 👍, judge fail
    only_judge: int = 0  # people 👎, judge pass
    both_fail: int = 0

    @classmethod
    def of(cls, labels: Iterable[tuple[bool, bool]]) -> Agreement:
        """From (the person's 👍, the judge's pass) pairs."""
        counts = [0, 0, 0, 0]
        for good, passed in labels:
            counts[(0 if good else 2) + (0 if passed else 1)] += 1
        return cls(*counts)

    @property
    def labels(self) -> int:
        return self.both_pass + self.only_people + self.only_judge + self.both_fail

    @property
    def kappa(self) -> float | None:
        """Cohen's κ; None with no labels, or when chance agreement is certain (both raters
        gave one verdict throughout, so agreement says nothing of skill)."""
        n = self.labels
        if n == 0:
            return None
        observed = (self.both_pass + self.both_fail) / n
        people_pass = (self.both_pass + self.only_people) / n
        judge_pass = (self.both_pass + self.only_judge) / n
        chance = people_pass * judge_pass + (1 - people_pass) * (1 - judge_pass)
        if chance >= 1.0:
            return None
        return (observed - chance) / (1 - chance)

    @property
    def true_pass(self) -> float | None:
        passed = self.both_pass + self.only_people
        return self.both_pass / passed if passed else None

    @property
    def true_fail(self) -> float | None:
        failed = self.only_judge + self.both_fail
        return self.both_fail / failed if failed else None

    @property
    def calibrated(self) -> bool:
        kappa = self.kappa
        return self.labels >= MIN_LABELS and kappa is not None and kappa >= KAPPA_FLOOR

    def words(self) -> str:
        """The figures, then " — uncalibrated (…)" and why when it is."""
        return self.figures() + ("" if self.calibrated else f" — {self.why_uncalibrated()}")

    def figures(self) -> str:
        """ "κ 0.72 · true pass 90% · true fail 80% · 64 labels"."""
        said = [
            f"κ {_figure(self.kappa, '.2f')}",
            f"true pass {_figure(self.true_pass, '.0%')}",
            f"true fail {_figure(self.true_fail, '.0%')}",
            f"{self.labels} label{'s' * (self.labels != 1)}",
        ]
        return " · ".join(said)

    def why_uncalibrated(self) -> str:
        if self.labels < MIN_LABELS:
            return f"uncalibrated (fewer than {MIN_LABELS} human grades of judged runs)"
        return f"uncalibrated (κ below {KAPPA_FLOOR})"


def _figure(value: float | None, form: str) -> str:
    return "—" if value is None else format(value, form)


@dataclass(frozen=True)
class WinRate:
    """A pairwise review of two arms: how often people chose each, and ties."""

    first_wins: int
    second_wins: int
    ties: int

    @property
    def decided(self) -> int:
        return self.first_wins + self.second_wins

    @property
    def rate(self) -> float | None:
        return self.first_wins / self.decided if self.decided else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.first_wins, self.decided)

    def words(self, first: str, second: str) -> str:
        """ "A preferred in 70% (7/10, 95% CI 40%–89%) · 2 ties" (the first arm's wins)."""
        ties = f" · {self.ties} tie{'s' * (self.ties != 1)}"
        if not self.decided:
            return f"{first} vs {second}: no choice but ties yet{ties if self.ties else ''}"
        low, high = self.interval
        return (
            f"{first} over {second}: {self.rate:.0%} ({self.first_wins}/{self.decided}, "
            f"95% CI {low:.0%}–{high:.0%}){ties}"
        )


def win_rate(picks: Iterable[str]) -> WinRate:
    """From choices "first", "second" and "tie"."""
    chosen = list(picks)
    return WinRate(chosen.count("first"), chosen.count("second"), chosen.count("tie"))
