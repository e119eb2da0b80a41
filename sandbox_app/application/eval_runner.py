"""Running a test set: lane × case × repeat on the same engine, each server's requests capped.

Shared by ``react-sandbox eval`` (cli/evaluating/eval_command.py) and the window's test-set panel
(ui/compare/eval_panel.py): both hand it the runs to make and get each finished run back, as
an :class:`EvalResult` (core/results/eval_result.py: the run's key, its arm, how it ended,
its figures, checks and verdict) and its record, through ``on_result``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from sandbox_app.application.backend_choice import BackendChoice
from sandbox_app.application.judge import Judge, judge_config, judge_values
from sandbox_app.application.run_builder import RunSpec, build_run
from sandbox_app.backends.catalogue.keys import KeyStore, UrlSource, host_of
from sandbox_app.backends.transport.response_cache import CachedBackend
from sandbox_app.core.results.checks import CheckResult, overall
from sandbox_app.core.results.compare import Price
from sandbox_app.core.results.eval_result import (
    Arm,
    EvalResult,
    JudgeUsage,
    ResultMetrics,
    RunKey,
)
from sandbox_app.core.results.judging import trajectory_text
from sandbox_app.core.results.trajectory import trajectory_checks
from sandbox_app.core.results.verdict import matches
from sandbox_app.core.running.backend import Backend
from sandbox_app.core.running.engine import drive
from sandbox_app.core.running.events import Event, event_to_dict
from sandbox_app.core.running.records import RunRecord
from sandbox_app.core.scenarios.judge_spec import JudgeSpec, judge_identity
from sandbox_app.core.scenarios.lane_settings import LaneSettings, SettingError
from sandbox_app.core.scenarios.prompt_versions import VersionError
from sandbox_app.core.scenarios.scenario import EvalCase, Scenario
from sandbox_app.core.scenarios.test_set import scenario_for_case
from sandbox_app.core.tools import Tool
from sandbox_app.core.tools.policy import asking

OnResult = Callable[[EvalResult, RunRecord], None]


def lane_label(name: str, settings: LaneSettings) -> str:
    """A lane's column title: a native-tools lane says so (it is often the same model)."""
    return name + (" (native tools)" if settings.tool_calling == "native" else "")


def case_spec(scenario: Scenario, lane: BackendChoice, case: int, **run: Any) -> RunSpec:
    """A lane's run of case ``case`` (its ``scenario``: what the run is made from and its
    record keeps); ``run``: the rest of the spec (BackendChoice.spec)."""
    return lane.spec(scenario_for_case(scenario, scenario.test_set[case]), **run)


def unpinned(scenario: Scenario, lanes: Iterable[BackendChoice]) -> str | None:
    """One line for the first lane that cannot run: pinned to a prompt version the
    scenario's history lacks, or setting what its kind cannot send (every run of it would
    fail alike: said once, before any runs); None when all can run."""
    for lane in lanes:
        try:
            lane.applied(scenario)
        except (VersionError, SettingError) as err:
            return f"{lane.label}: {err}"
    return None


def declined(scenario: Scenario, trusted: frozenset[str]) -> str | None:
    """Which of the scenario's tools every run will decline, with no one to approve a call,
    and why (None: none)."""
    tools = asking(scenario.tools(), scenario.policies, trusted)
    if not tools:
        return None
    why = ", ".join(
        f"{t.name} ({'the scenario says ask' if t.read_only else 'it has side effects'})"
        for t in tools
    )
    return (
        f"eval asks no one, so every call of these tools will be declined: {why}; "
        "--allow TOOL lets one run unasked"
    )


def offline_judge(scenario: Scenario) -> bool:
    """Whether the scenario's answers are judged by the offline model's written verdicts."""
    judge = judge_config(scenario)
    return judge is not None and not judge.kind.server


def unjudged_lanes(scenario: Scenario, lanes: Iterable[BackendChoice]) -> str:
    """One line naming the lanes the offline judge does not grade, and why ("": none).

    Its verdicts and reasons were written for the offline model's answers: on a real model's
    answer they would be a grade that never read it. Those lanes' runs get no judge check
    (their answer and path still decide them) rather than a canned one."""
    names = [lane.label for lane in lanes if lane.config.kind.server]
    if not names or not offline_judge(scenario):
        return ""
    return (
        f"the offline judge's written verdicts grade only the offline model's answers: "
        f"{', '.join(names)} not judged (choose a judge model to grade them)"
    )


class EvalRunner:
    def __init__(
        self,
        scenario: Scenario,
        lanes: list[BackendChoice],
        on_result: OnResult,
        *,
        concurrency: int = 4,
        cache: Path | None = None,
        keys: KeyStore | None = None,
        with_events: bool = True,
        sources: Sequence[Tool] = (),
        trusted: Collection[str] = (),
        prices: Mapping[str, Price] | None = None,
        judge_url_source: UrlSource = "file",
    ) -> None:
        self.scenario = scenario
        self.lanes = {lane.label: lane for lane in lanes}
        self.on_result = on_result
        self.concurrency = concurrency
        self.cache = cache
        self.keys = keys or KeyStore()
        # The results file keeps every event as JSON; the window keeps the records instead
        # (turning a run's events into dicts costs ~1 ms a run, on the GUI's loop).
        self.with_events = with_events
        self.sources = sources  # connected MCP servers' tools
        self.trusted = frozenset(trusted)  # tools the user let run unasked (eval's --allow)
        self.prices = dict(prices or {})  # by model: what a "max_cost" check is checked with
        self._servers: dict[str, Backend] = {}
        # The judge of judged answers, made at the first rubric (application/judge.py); a
        # URL the scenario file names gets a key only as a lane's would (keys.py).
        self.judge_url_source: UrlSource = judge_url_source
        self._judge: Judge | None = None
        self._offline_judge = offline_judge(scenario)
        self._slots: dict[str, asyncio.Semaphore] = {}

    async def run_all(self, todo: Iterable[RunKey]) -> None:
        """Make the runs ``todo`` gives, taking each only when a worker is free: a plan of
        millions of runs is never turned into millions of tasks at once."""
        keys = iter(todo)
        # Enough workers for every lane's server to have its ``concurrency`` requests going
        # (the plan takes the lanes in turn); a server's semaphore caps its share.
        workers = self.concurrency * max(1, len(self.lanes))
        try:
            await asyncio.gather(*(self._work(keys) for _ in range(workers)))
        finally:
            for backend in self._servers.values():
                await backend.aclose()
            self._servers.clear()
            if self._judge is not None:
                await self._judge.aclose()
                self._judge = None

    async def _work(self, keys: Iterator[RunKey]) -> None:
        for key in keys:  # one iterator shared by every worker: each key is taken once
            await self._run(key)

    async def _run(self, key: RunKey) -> None:
        lane = self.lanes[key.lane]
        # Not a server (the offline model): one cap for all its lanes, by its kind.
        server = host_of(lane.config.url) if lane.config.kind.server else lane.config.kind.id
        async with self._slots.setdefault(server, asyncio.Semaphore(self.concurrency)):
            result, record = await self._one(lane, key)
        self.on_result(result, record)

    async def _one(self, lane: BackendChoice, key: RunKey) -> tuple[EvalResult, RunRecord]:
        case = self.scenario.test_set[key.case]
        spec = case_spec(
            self.scenario,
            lane,
            key.case,
            keys=self.keys,
            sources=self.sources,
            trusted=self.trusted,
        )
        scenario = spec.scenario
        if not lane.config.kind.server:  # made per run: the offline model replays the case's own
            backend = spec.new_backend()
        else:  # one client per server lane: its connections are reused run after run
            backend = self._servers.get(lane.label) or spec.new_backend()
            self._servers[lane.label] = backend
        if self.cache is not None:
            salt = f"{lane.config.base_url}|{lane.config.model}|repeat {key.repeat}"
            backend = CachedBackend(backend, self.cache, salt)
        engine, _ = build_run(spec, backend)
        # The version the model was told (the spec's, the backend's too), the lane's backend,
        # model and settings kept: an export names them (OpenTelemetry).
        record = RunRecord(spec.record_settings())
        record.scenario = scenario  # the case's: its expected answer judges the run shown
        finished = await drive(engine, lambda event: record.add([event]))
        answer_ok = bool(matches(finished.answer, case.expected))
        # Trajectory checks (core/results/trajectory.py): the path, the case's over the
        # scenario's defaults.
        path = case.checks.over(self.scenario.checks)
        model = lane.config.model_name
        checks = trajectory_checks(
            path, record.events, finished.metrics, self.prices.get(model), model
        )
        result = EvalResult(
            key.lane,
            key.case,
            key.repeat,
            passed=False,  # decided below, once every check is in
            question=scenario.asked_question,  # as asked: its {{variables}} filled
            expected=case.expected.answer,
            arm=Arm.of(record.settings),  # results of two versions, models… stay told apart
            status=finished.status,
            answer=finished.answer,
            reason=finished.reason,
            metrics=ResultMetrics.of(finished.metrics),
            events=tuple(event_to_dict(e) for e in record.events) if self.with_events else None,
        )
        # Judged answers (application/judge.py): a rubric graded by the judge model; the
        # offline judge's written verdicts only the offline model's (unjudged_lanes).
        judge, judged = (
            (None, []) if lane.config.kind.server and self._offline_judge
            else await self._judged(case, result, record.events)
        )  # fmt: skip
        if judge is not None:  # what the run would be without the judge's verdict: a build
            # is not failed by a judge people have not calibrated (cli/evaluating/eval_baseline.py)
            identity = judge_identity(self.scenario.judge or JudgeSpec())
            judge = replace(
                judge, passed_without_judge=overall(answer_ok, checks), judge_id=identity
            )
        checks += judged
        result = replace(
            result, checks=tuple(checks), judge=judge, passed=overall(answer_ok, checks)
        )
        return result, record

    async def _judged(
        self, case: EvalCase, result: EvalResult, events: Sequence[Event]
    ) -> tuple[JudgeUsage | None, list[CheckResult]]:
        """The judge's check of this run's answer when its case (or the scenario) has a
        rubric, with its tokens and cost (the result's ``judge``); none without one."""
        rubric = case.rubric or self.scenario.rubric
        if not rubric:
            return None, []
        answer = result.answer
        if not answer:  # nothing to grade, and no judge paid to say so
            return None, [CheckResult("judge", False, "no answer to judge")]
        if self._judge is None:
            spec = self.scenario.judge or JudgeSpec()
            try:
                self._judge = Judge(spec, self.keys, self.cache, self.judge_url_source)
            except ValueError as err:  # an unknown backend id: every run unjudged, said why
                return None, [CheckResult("judge", None, f"unjudged — {err}")]
        steps = trajectory_text(events)  # the judge sees the path, not only the answer
        values = judge_values(result.question or "", answer, result.expected or "", rubric, steps)
        judged = await self._judge.grade(values, case.judge_replies)
        return judged.usage(), [judged.check]
