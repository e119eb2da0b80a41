"""What an optimization may spend, what it has spent, and the progress it reports.

Three limits, each optional but the first: candidates proposed (refused ones count: each
cost a reflection), runs of the arm being improved, and dollars (the arm's runs and the
reflections, priced by the user's price table). The runs the held-out validation will need
(the version being improved and the winner, on every held-out case) are kept back from the
start, so the training stops in time for the validation to fit; dollars are kept back the
same way, at the mean cost of a run so far. And a patience: after that many candidates in a
row that do not raise the best training pass rate, the optimization stops (no candidate is
better).
"""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_CANDIDATES = 5
DEFAULT_PATIENCE = 3


@dataclass(frozen=True)
class Budget:
    candidates: int = DEFAULT_CANDIDATES
    runs: int | None = None
    dollars: float | None = None
    patience: int = DEFAULT_PATIENCE

    def to_dict(self) -> dict[str, object]:
        return {
            "candidates": self.candidates,
            "runs": self.runs,
            "dollars": self.dollars,
            "patience": self.patience,
        }


@dataclass
class Spent:
    runs: int = 0
    dollars: float = 0.0
    unpriced: set[str] = field(default_factory=set)  # models without a price: cost unknown

    @property
    def cost(self) -> float | None:
        return None if self.unpriced else self.dollars

    def stop_before(self, budget: Budget, runs_next: int, runs_kept_back: int) -> str | None:
        """Why the next training evaluation (``runs_next`` runs) must not start, keeping
        ``runs_kept_back`` for the validation; None when it may."""
        if budget.runs is not None and self.runs + runs_next + runs_kept_back > budget.runs:
            return (
                f"the run budget ({budget.runs}) leaves no room for another candidate and "
                f"the held-out check ({runs_kept_back} runs)"
            )
        if budget.dollars is not None and self.runs:
            per_run = self.dollars / self.runs
            if self.dollars + per_run * (runs_next + runs_kept_back) > budget.dollars:
                return (
                    f"the dollar budget (${budget.dollars:g}) leaves no room for another "
                    f"candidate and the held-out check (${self.dollars:.4f} spent)"
                )
        return None


@dataclass(frozen=True)
class Progress:
    """What a front end shows as the optimization goes: a line for people and the figures
    (the CLI prints the line; a dialog sets its labels from the rest)."""

    stage: str  # "training", "reflecting", "validating", "done"
    line: str  # "": a run ended and only the figures moved
    runs: int
    dollars: float | None  # None: some model has no price
    candidates: int  # proposed so far (refused ones included)
    best: int  # the candidate best so far on the training cases (0: the version improved)
    best_rate: float  # its mean training pass rate
