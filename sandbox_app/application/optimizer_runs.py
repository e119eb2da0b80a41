"""The optimizer's runs: a candidate on some cases, through the one test-set runner
(application/eval_runner.py), each result stored in the optimization's evaluation as it ends.

A run the evaluation already holds (a resumed optimization: made before the stop) is taken
from it and never made again; what each evaluation *uses* is counted as it is used, fresh or
stored, so a resumed optimization reaches every decision with the figures an uninterrupted
one had there. A stored result made with another version than the candidate's (a changed
file) is made again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from sandbox_app.application.backend_choice import BackendChoice
from sandbox_app.application.eval_runner import EvalRunner
from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.backends.registry import BackendConfig
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.optimizing.budget import Spent
from sandbox_app.core.results.eval_result import EvalResult, RunKey
from sandbox_app.core.results.prices import Price
from sandbox_app.core.running.records import RunRecord
from sandbox_app.core.scenarios.prompt_versions import PromptVersion
from sandbox_app.core.scenarios.scenario import Scenario

RunTuple = tuple[str, int, int]  # lane, case, repeat


FREE = Price(0.0, 0.0)  # the offline model: no server, nothing to pay


def price_of(config: BackendConfig, prices: Mapping[str, Price]) -> Price | None:
    """What a model's tokens cost (the offline model's nothing); None: no price known."""
    if not config.kind.server:
        return FREE
    return prices.get(config.model or config.kind.id)


def lane_of(number: int) -> str:
    """Candidate ``number``'s lane in the optimization's evaluation."""
    return f"candidate {number}"


@dataclass
class CandidateRuns:
    """One candidate's runs on some cases: passes and runs per case."""

    passes: dict[int, int] = field(default_factory=dict)
    runs: dict[int, int] = field(default_factory=dict)

    def rates(self) -> dict[int, float]:
        return {case: self.passes[case] / n for case, n in self.runs.items() if n}


class OptimizerRuns:
    def __init__(
        self,
        scenario: Scenario,
        arm: BackendChoice,
        store: HistoryStore,
        evaluation: int,
        *,
        repeats: int,
        concurrency: int,
        keys: KeyStore,
        trusted: frozenset[str],
        prices: Mapping[str, Price],
    ) -> None:
        self.scenario, self.arm, self.store, self.evaluation = scenario, arm, store, evaluation
        self.repeats, self.concurrency, self.keys = repeats, concurrency, keys
        self.trusted, self.prices = trusted, prices
        self.model = arm.config.model or arm.config.kind.id
        # What the evaluation holds: a resume's earlier runs, then each run as it ends.
        self.done: dict[RunTuple, EvalResult] = {
            (r.lane, r.case, r.repeat): r for r in store.results(evaluation)
        }
        # Called after each fresh run with the runs made in this evaluation so far (a
        # front end's live count; the figures that decide are counted when it ends).
        self.on_run: Callable[[int], None] = lambda _made: None
        self._made = 0

    async def evaluate(
        self, number: int, version: PromptVersion, cases: Sequence[int], spent: Spent
    ) -> CandidateRuns:
        """Candidate ``number`` (told ``version``) on ``cases``, each ``repeats`` times."""
        label = lane_of(number)
        wanted = [(label, case, r) for case in cases for r in range(self.repeats)]
        todo = [
            RunKey(*key)
            for key in wanted
            if key not in self.done or self.done[key].prompt_version != version.id
        ]
        self._made = 0
        if todo:
            lane = BackendChoice(self.arm.config, self.arm.settings, label=label, prompt=version)
            runner = EvalRunner(
                self.scenario,
                [lane],
                self._stored,
                concurrency=self.concurrency,
                keys=self.keys,
                trusted=self.trusted,
                prices=self.prices,
            )
            await runner.run_all(todo)
        counted = CandidateRuns()
        price = price_of(self.arm.config, self.prices)
        for key in wanted:
            result = self.done[key]
            case = key[1]
            counted.runs[case] = counted.runs.get(case, 0) + 1
            counted.passes[case] = counted.passes.get(case, 0) + int(result.passed)
            spent.runs += 1
            if price is None:
                spent.unpriced.add(self.model)
            else:
                spent.dollars += price.cost(result.metrics.tokens_in, result.metrics.tokens_out)
        return counted

    def results(self, number: int, cases: Sequence[int]) -> list[EvalResult]:
        """Candidate ``number``'s results on ``cases``, in case and repeat order."""
        label = lane_of(number)
        return [
            self.done[(label, case, r)]
            for case in cases
            for r in range(self.repeats)
            if (label, case, r) in self.done
        ]

    def trace(self, result: EvalResult) -> tuple[dict[str, object], ...]:
        """A run's stored trace (read from the database only when a reflection shows it)."""
        key = (result.lane, result.case, result.repeat)
        for found in self.store.results(self.evaluation, [key], events=True):
            return tuple(found.events or ())
        return ()

    def _stored(self, result: EvalResult, record: RunRecord) -> None:
        """A run has ended: in the database (its trace with it) before it counts."""
        self.store.add_result(self.evaluation, result, list(result.events or ()), self.model)
        self.done[(result.lane, result.case, result.repeat)] = result.without_trace()
        self._made += 1
        self.on_run(self._made)
