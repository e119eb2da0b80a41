"""Improve my prompt, driven: the optimizer's loop over the arm's runs, the reflection model
and the history database, for every front end (``react-sandbox optimize``; a window dialog
calls the same :class:`Optimizer`).

The loop: the version being improved (candidate 0) runs on the training split; then, until
the budget or the patience ends it, a parent is drawn from the Pareto front
(core/optimizing/pareto.py), the reflection model is shown a few of its failing cases
(reflection.py), its reply read for a new template, refused with the reason when it loses a
placeholder or variable (keeping.py), else run on the training split. The best candidate on
training, when above candidate 0, is then run with candidate 0 on the held-out cases and
judged by the paired verdict ``history diff`` uses.

Everything is stored as it happens — each run in the optimization's evaluation, each
reflection's reply in ``candidates`` (core/history/history_optimizations.py) — and every
decision depends only on the seed and on what is stored, so stopping (cancel the task, or
kill the process) and resuming with the same settings gives the same result as never having
stopped. Nothing here changes the scenario: each accepted candidate is handed to
``on_candidate`` (the CLI adds it to the file's prompt history, unstarred), the winner only
reported.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace

from sandbox_app.application.optimize_setup import OptimizeSetup
from sandbox_app.application.optimizer_runs import OptimizerRuns, lane_of, price_of
from sandbox_app.application.reflector import Reflector
from sandbox_app.core.comparing.arm_diff import ArmComparison, cells_of, compare_within
from sandbox_app.core.history import history_optimizations as stored
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.history.history_schema import HistoryError
from sandbox_app.core.optimizing import pareto
from sandbox_app.core.optimizing.budget import Progress, Spent
from sandbox_app.core.optimizing.keeping import Kept, refusal
from sandbox_app.core.optimizing.outcome import Candidate, Outcome
from sandbox_app.core.optimizing.reflection import (
    MAX_FAILURES,
    Failure,
    read_reply,
    reflection_prompt,
    trace_of,
)
from sandbox_app.core.optimizing.split import Split, split_cases
from sandbox_app.core.results.checks import failure_lines
from sandbox_app.core.results.verdict import matches
from sandbox_app.core.scenarios.prompt_versions import PromptVersion
from sandbox_app.core.scenarios.test_set import asked_questions


class OptimizeError(Exception):
    """The optimization cannot start or go on, in one line."""


OnProgress = Callable[[Progress], None]
OnCandidate = Callable[[Candidate, PromptVersion], None]  # an accepted one and its parent's


class Optimizer:
    def __init__(
        self,
        setup: OptimizeSetup,
        store: HistoryStore,
        on_progress: OnProgress = lambda _p: None,
        on_candidate: OnCandidate = lambda _c, _p: None,
    ) -> None:
        self.setup, self.store = setup, store
        self.on_progress, self.on_candidate = on_progress, on_candidate
        self.spent = Spent()
        self.candidates: list[Candidate] = []
        self.scores: dict[int, dict[int, float]] = {}
        self.train: tuple[int, ...] = ()
        self.stage = "training"

    async def run(self, resume: bool = False) -> Outcome:
        """The whole optimization (``resume``: the unfinished one with these settings, going
        on from what it stored). Raises OptimizeError or HistoryError (one line each); a
        reflection model that fails raises its BackendError: everything before it is kept."""
        setup = self.setup
        settings = setup.settings()
        split = split_cases(settings["cases"], setup.held_out, setup.seed)
        need = (2 * len(split.train) + 2 * len(split.held_out)) * setup.repeats
        if setup.budget.runs is not None and setup.budget.runs < need:
            raise OptimizeError(
                f"a budget of {setup.budget.runs} runs is too few: the version improved and one "
                f"candidate on {len(split.train)} training cases, then the held-out check, "
                f"take {need} runs"
            )
        if resume:
            row = stored.unfinished(self.store, setup.place, settings)
            if row is None or row.evaluation is None:
                raise OptimizeError(
                    "no unfinished optimization of this scenario with these settings to "
                    "resume; start a new one"
                )
            self.id, evaluation = row.id, row.evaluation
            self._say("training", f"resuming optimization {self.id}: what it stored is reused")
        else:
            evaluation = self.store.begin_evaluation(
                setup.scenario.title,
                setup.place,
                {},
                len(setup.scenario.test_set),
                setup.repeats,
                "optimize",
            )
            self.id = stored.begin(
                self.store, setup.scenario.title, setup.place, settings, evaluation
            )
        self.runs = OptimizerRuns(
            setup.scenario,
            setup.arm,
            self.store,
            evaluation,
            repeats=setup.repeats,
            concurrency=setup.concurrency,
            keys=setup.keys,
            trusted=setup.trusted,
            prices=setup.prices,
        )
        self.runs.on_run = lambda made: self._say(self.stage, "", made)
        self.asked = stored.reflections(self.store, self.id)
        reflector = Reflector(setup.reflect, setup.scenario.script.reflections, setup.keys)
        try:
            outcome = await self._loop(reflector, split)
        finally:
            await reflector.aclose()
        run_lanes = {lane_of(c.number): self.runs.model for c in outcome.candidates if c.runs}
        stored.finish(self.store, self.id, outcome.document(), evaluation, run_lanes)
        self.store.finish_evaluation(evaluation)
        return outcome

    async def _loop(self, reflector: Reflector, split: Split) -> Outcome:
        setup, budget = self.setup, self.setup.budget
        train, held = split.train, split.held_out
        self.train = train
        base = setup.base()
        kept = Kept.of(base.template)
        defined = set(setup.scenario.variables)
        for case in setup.scenario.test_set:
            defined |= set(case.variables)
        self._say("training", f"{len(train)} training cases, {len(held)} held out")
        await self._train(Candidate(0, base), train)
        stopped, since_better = f"{budget.candidates} candidates proposed", 0
        kept_back = 2 * len(held) * setup.repeats
        for number in range(1, budget.candidates + 1):
            if since_better >= budget.patience:
                stopped = f"no better candidate in {since_better} tries"
                break
            over = self.spent.stop_before(budget, len(train) * setup.repeats, kept_back)
            if over:
                stopped = over
                break
            parent = pareto.parent(self.scores, train, setup.seed, number)
            if parent is None:
                stopped = "every training case passes"
                break
            candidate = await self._reflect(reflector, number, parent, train, kept, defined)
            best_before = self._best_rate(train)
            if candidate.version is None:
                self.candidates.append(candidate)
                self._say("reflecting", f"{candidate.name}: refused: {candidate.refused}")
            else:
                parent_version = self.candidates[parent].version
                assert parent_version is not None
                await self._train(candidate, train)
                self.on_candidate(self.candidates[-1], parent_version)
            since_better = 0 if self._best_rate(train) > best_before else since_better + 1
        winner = pareto.winner(self.scores, train)
        if pareto.mean(self.scores[winner], train) <= pareto.mean(self.scores[0], train):
            return self._outcome(split, stopped, None, None)
        return self._outcome(split, stopped, winner, await self._validate(winner, held))

    async def _train(self, candidate: Candidate, train: tuple[int, ...]) -> None:
        assert candidate.version is not None
        counted = await self.runs.evaluate(candidate.number, candidate.version, train, self.spent)
        rates = counted.rates()
        self.scores[candidate.number] = rates
        rate = pareto.mean(rates, train)
        passes, runs = sum(counted.passes.values()), sum(counted.runs.values())
        self.candidates.append(replace(candidate, passes=passes, runs=runs, rate=rate))
        self._say(
            "training", f"{candidate.name} {candidate.version.short}: {rate:.0%} of training cases"
        )

    async def _reflect(
        self,
        reflector: Reflector,
        number: int,
        parent: int,
        train: tuple[int, ...],
        kept: Kept,
        defined: set[str],
    ) -> Candidate:
        version = self.candidates[parent].version
        assert version is not None
        failing = [c for c in train if self.scores[parent].get(c, 0.0) < 1.0]
        random.Random(f"{self.setup.seed}:{number}:cases").shuffle(failing)
        shown = sorted(failing[:MAX_FAILURES])
        model = reflector.model
        asked = self.asked.get(number)
        if asked is not None and (asked.parent, asked.failures) != (parent, tuple(shown)):
            raise OptimizeError(
                f"optimization {self.id}'s reflection {number} was asked about other cases "
                "than this run would ask: the stored evidence differs; start it afresh"
            )
        if asked is None:
            self._say(
                "reflecting",
                f"asking {model} about {len(shown)} failing cases of "
                f"{self.candidates[parent].name}",
            )
            prompt = reflection_prompt(version, kept, self._failures(parent, shown), len(failing))
            reply = await reflector.ask(prompt, number)
            text = reply.text[: stored.MAX_REPLY]  # what is stored is what is read, resumed or not
            asked = stored.Reflection(
                number, parent, tuple(shown), model, text, reply.tokens_in, reply.tokens_out
            )
            stored.add_reflection(self.store, self.id, asked)
        price = price_of(reflector.lane.config, self.setup.prices)
        if price is None:
            self.spent.unpriced.add(model)
        else:
            self.spent.dollars += price.cost(asked.tokens_in, asked.tokens_out)
        proposal = read_reply(asked.reply)
        tried = {c.version.template: c.number for c in self.candidates if c.version is not None}
        why = proposal.problem or refusal(proposal.template or "", kept, defined, tried)
        made = Candidate(number, None, parent, tuple(shown), model, why or "", proposal.diagnosis)
        if why or proposal.template is None:
            return made
        return replace(made, version=replace(version, template=proposal.template))

    def _failures(self, parent: int, cases: list[int]) -> list[Failure]:
        scenario, shown = self.setup.scenario, []
        questions = asked_questions(scenario)
        for case in cases:
            results = self.runs.results(parent, [case])
            failed = next(r for r in results if not r.passed)
            expected = scenario.test_set[case].expected
            lines = failure_lines(failed.checks)
            if not matches(failed.answer, expected):
                lines.insert(0, f"✗ answer — does not match the expected answer ({expected.match})")
            answer = failed.answer or f"(no answer: the run ended {failed.status}; {failed.reason})"
            shown.append(
                Failure(
                    case,
                    questions[case],
                    expected.answer,
                    answer,
                    tuple(lines),
                    trace_of(self.runs.trace(failed)),
                    sum(r.passed for r in results),
                    len(results),
                )
            )
        return shown

    async def _validate(self, winner: int, held: tuple[int, ...]) -> ArmComparison | None:
        self._say("validating", f"candidate 0 and candidate {winner} on {len(held)} held-out cases")
        for number in (0, winner):
            version = self.candidates[number].version
            assert version is not None
            await self.runs.evaluate(number, version, held, self.spent)
        results = self.runs.results(0, held) + self.runs.results(winner, held)
        names: dict[str, str] = {}
        for number in (0, winner):
            version = self.candidates[number].version
            assert version is not None
            names[version.id] = "current" if number == 0 else f"candidate {winner}"
        found = compare_within(cells_of(results), names)
        return found[0] if found else None

    def _best_rate(self, train: tuple[int, ...]) -> float:
        return max(pareto.mean(rates, train) for rates in self.scores.values())

    def _outcome(
        self, split: Split, stopped: str, winner: int | None, verdict: ArmComparison | None
    ) -> Outcome:
        outcome = Outcome(
            self.id,
            split,
            tuple(self.candidates),
            stopped,
            winner,
            verdict,
            self.spent.runs,
            self.spent.cost,
        )
        self._say("done", f"stopped: {stopped}")
        return outcome

    def _say(self, stage: str, line: str, made: int = 0) -> None:
        """Progress: a line for people (``""``: only the figures moved, ``made`` runs into
        the evaluation under way)."""
        self.stage = stage
        best = pareto.winner(self.scores, self.train) if self.scores else 0
        rate = pareto.mean(self.scores[best], self.train) if self.scores else 0.0
        proposed = sum(1 for c in self.candidates if c.number > 0)
        runs = self.spent.runs + made
        self.on_progress(Progress(stage, line, runs, self.spent.cost, proposed, best, rate))


__all__ = ["HistoryError", "OptimizeError", "OptimizeSetup", "Optimizer", "lane_of"]
