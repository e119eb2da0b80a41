"""What an optimization is asked to do (``optimize``'s options, a window dialog's fields):
the scenario, the arm whose prompt is improved, the reflection model, the budget, the seed
and the split. Its :meth:`OptimizeSetup.settings` are what the history finds an unfinished
optimization by: the same settings (and the same test set and prompt) resume it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sandbox_app.application.backend_choice import BackendChoice
from sandbox_app.application.eval_runner import case_spec
from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.core.optimizing.budget import Budget
from sandbox_app.core.optimizing.split import DEFAULT_HELD_OUT, case_identity
from sandbox_app.core.results.prices import Price
from sandbox_app.core.scenarios.prompt_versions import PromptVersion
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.scenarios.test_set import asked_questions


@dataclass(frozen=True)
class OptimizeSetup:
    """What an optimization is asked to do; its settings are what a resume finds it by."""

    scenario: Scenario
    place: str  # the scenario's file (its resolved path)
    arm: BackendChoice  # the lane whose prompt is improved (its model runs every candidate)
    reflect: BackendChoice  # the reflection model
    budget: Budget = field(default_factory=Budget)
    seed: int = 0
    held_out: float = DEFAULT_HELD_OUT
    repeats: int = 1
    concurrency: int = 4
    prices: Mapping[str, Price] = field(default_factory=dict)
    keys: KeyStore = field(default_factory=KeyStore, compare=False)
    trusted: frozenset[str] = frozenset()

    def base(self) -> PromptVersion:
        """The version being improved: what the arm's runs are told now."""
        return case_spec(self.scenario, self.arm, 0).prompt_version

    def settings(self) -> dict[str, Any]:
        questions = asked_questions(self.scenario)
        cases = [
            case_identity(q, c.expected.answer)
            for q, c in zip(questions, self.scenario.test_set, strict=True)
        ]
        return {
            "arm": _lane(self.arm),
            "reflect": _lane(self.reflect),
            "budget": self.budget.to_dict(),
            "seed": self.seed,
            "held_out": self.held_out,
            "repeats": self.repeats,
            "version": self.base().id,
            "cases": cases,
        }


def _lane(lane: BackendChoice) -> dict[str, Any]:
    c = lane.config
    return {"kind": c.kind.id, "url": c.base_url, "model": c.model, **lane.settings.to_dict()}
