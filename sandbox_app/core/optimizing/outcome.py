"""An optimization's candidates and its outcome: what each candidate was made from (its
origin), how it did on the training cases, the winner and its held-out verdict (the paired
verdict core/comparing gives ``history diff``), as lines for people and as a JSON document
(``--json``, the history's outcome column).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sandbox_app.core.comparing.arm_diff import ArmComparison, verdict_document
from sandbox_app.core.comparing.paired_verdict import BETTER
from sandbox_app.core.optimizing.split import Split
from sandbox_app.core.scenarios.prompt_versions import PromptVersion


@dataclass(frozen=True)
class Candidate:
    """Candidate ``number`` (0: the version being improved)."""

    number: int
    version: PromptVersion | None  # None: refused
    parent: int | None = None  # the candidate it was made from (None for 0)
    failures: tuple[int, ...] = ()  # the failing training cases shown (case numbers)
    reflection_model: str = ""
    refused: str = ""  # why it was never run
    diagnosis: str = ""  # what the reflection said went wrong
    passes: int = 0  # on the training cases, all repeats
    runs: int = 0
    rate: float | None = None  # mean per-case training pass rate (None: never run)

    @property
    def name(self) -> str:
        return "the version improved" if self.number == 0 else f"candidate {self.number}"

    def origin(self, parent_id: str) -> str:
        """The prompt history's note: where it came from, in one line."""
        cases = ", ".join(str(c + 1) for c in self.failures)
        return (
            f"optimize candidate {self.number}: from {parent_id[:8]} by "
            f"{self.reflection_model}, shown failing cases {cases}"
        )

    def line(self) -> str:
        if self.version is None:
            return f"{self.name} (from {self.parent}): refused: {self.refused}"
        rate = "not run" if self.rate is None else f"{self.rate:.0%} of training cases"
        origin = f" (from {self.parent})" if self.parent is not None else ""
        return f"{self.name} {self.version.short}{origin}: {rate} ({self.passes}/{self.runs} runs)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "version": self.version.id if self.version is not None else None,
            "parent": self.parent,
            "failures": [c + 1 for c in self.failures],
            "reflection_model": self.reflection_model,
            "refused": self.refused,
            "diagnosis": self.diagnosis,
            "passes": self.passes,
            "runs": self.runs,
            "training_pass_rate": self.rate,
        }


@dataclass(frozen=True)
class Outcome:
    optimization: int
    split: Split
    candidates: tuple[Candidate, ...]  # candidate 0 first
    stopped: str  # why the loop ended, in words
    winner: int | None  # the best candidate on training, when above candidate 0
    verdict: ArmComparison | None  # the winner against candidate 0 on the held-out cases
    runs: int
    dollars: float | None  # None: some model has no price

    @property
    def better(self) -> bool:
        """Whether the winner is better on the held-out cases by the paired verdict."""
        return self.verdict is not None and self.verdict.verdict.word == BETTER

    def version(self, number: int) -> PromptVersion | None:
        return self.candidates[number].version

    def lines(self) -> list[str]:
        split = self.split
        head = [
            f"optimization {self.optimization}: {len(split.train)} training cases, "
            f"{len(split.held_out)} held out; stopped: {self.stopped}",
            *(f"  {c.line()}" for c in self.candidates),
            f"{self.runs} runs" + (f", ${self.dollars:.4f}" if self.dollars is not None else ""),
        ]
        if self.winner is None:
            return [
                *head,
                "no candidate did better than the version improved on the training cases",
            ]
        held = (
            self.verdict.sentence() if self.verdict is not None else "not checked on held-out cases"
        )
        advice = (
            "the winner is better on the held-out cases: apply it in the window's Versions tab"
            if self.better
            else "the held-out cases do not show the winner is better: keep the version you have"
        )
        return [*head, f"winner: candidate {self.winner}", f"held out: {held}", advice]

    def document(self) -> dict[str, Any]:
        return {
            "optimization": self.optimization,
            "train_cases": [c + 1 for c in self.split.train],
            "held_out_cases": [c + 1 for c in self.split.held_out],
            "stopped": self.stopped,
            "candidates": [c.to_dict() for c in self.candidates],
            "winner": self.winner,
            "winner_version": _version_id(self.candidates, self.winner),
            "better": self.better,
            "held_out_verdict": verdict_document(self.verdict) if self.verdict else None,
            "runs": self.runs,
            "dollars": self.dollars,
        }


def _version_id(candidates: Sequence[Candidate], winner: int | None) -> str | None:
    if winner is None:
        return None
    version = candidates[winner].version
    return version.id if version is not None else None
