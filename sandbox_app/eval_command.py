"""``react-sandbox eval``: a scenario's test set × lanes × repeats, headless, on the same engine.

One JSON line per finished run (case, lane, repeat, status, answer, verdict, metrics and the
full event trace) is appended and flushed as each run ends, so a killed process loses no
finished run; ``--resume`` skips what the file already has, ``--only-failed`` runs again
what failed. Each server gets at most ``--concurrency`` requests at once (a 429's retries wait
inside that server's share, never another's). Exit codes: 0 done, 1 an error, 4 a lane below
``--min-pass-rate``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from sandbox_app.backends.keys import KeyStore, host_of
from sandbox_app.backends.presets import preset_for_url
from sandbox_app.backends.registry import (
    SCRIPTED,
    BackendConfig,
    backend_id,
    config_for,
    make_backend,
)
from sandbox_app.backends.response_cache import CachedBackend
from sandbox_app.core.backend import Backend
from sandbox_app.core.engine import ReactEngine, drive
from sandbox_app.core.eval_report import to_html
from sandbox_app.core.evaluation import RunKey, plan, read_results, still_to_run, summarise
from sandbox_app.core.exports import run_document
from sandbox_app.core.records import RunRecord
from sandbox_app.core.scenario import REASONING_EFFORTS, Scenario
from sandbox_app.core.scenario_fields import ScenarioError
from sandbox_app.core.scenario_file import load_scenario
from sandbox_app.core.test_set import scenario_for_case
from sandbox_app.core.verdict import matches

EXIT_BELOW_PASS_RATE = 4
# "http://localhost:11434/v1:qwen3:8b": the URL ends where its path meets the first colon.
_URL_LANE = re.compile(r"^(https?://[^/\s]+(?:/[^:\s]*)?):(.+)$")


@dataclass(frozen=True)
class EvalLane:
    label: str
    config: BackendConfig
    options: dict[str, Any]  # temperature, max_tokens, reasoning_effort


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="react-sandbox eval",
        description="Run a scenario's test set against one or more lanes and summarise the "
        "pass rates. Keys come from the environment, as for `react-sandbox run`.",
    )
    p.add_argument("scenario", help="a scenario file with a test set")
    p.add_argument(
        "--lane",
        action="append",
        default=[],
        help="scripted, PRESET:MODEL or URL:MODEL, then ,key=value options (temperature, "
        "max_tokens, reasoning_effort); repeatable. Default: the scenario's lanes",
    )
    p.add_argument("--repeat", type=int, default=1, help="runs per case and lane (default 1)")
    p.add_argument("--concurrency", type=int, default=4, help="requests at once per server")
    p.add_argument("--out", help="results file, one JSON line per run (default: SCENARIO.jsonl)")
    p.add_argument("--resume", action="store_true", help="skip the runs the results file has")
    p.add_argument("--only-failed", action="store_true", help="run again what failed")
    p.add_argument("--min-pass-rate", help="exit 4 when a lane passes less (0.8 or 80%%)")
    p.add_argument("--report", help="also write a self-contained HTML report to this file")
    p.add_argument(
        "--cache",
        nargs="?",
        const=".react-sandbox-cache",
        help="answer a request seen before (same messages, model, settings and repeat) from "
        "this folder (default .react-sandbox-cache)",
    )
    p.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for a server")
    return p


def eval_command(argv: list[str], out: TextIO = sys.stdout) -> int:
    args = parser().parse_args(argv)
    try:
        scenario = load_scenario(args.scenario)
        if not scenario.test_set:
            raise ValueError(f"{Path(args.scenario).name} has no test set")
        lanes = _lanes(args, scenario)
        minimum = _rate(args.min_pass_rate)
        if args.repeat < 1 or args.concurrency < 1:
            raise ValueError("--repeat and --concurrency must be at least 1")
        results_path = Path(args.out or Path(args.scenario).with_suffix(".results.jsonl").name)
        resume = args.resume or args.only_failed
        if results_path.exists() and results_path.stat().st_size and not resume:
            raise ValueError(
                f"{results_path} exists: add --resume to go on with it, or choose another --out"
            )
    except (ScenarioError, ValueError, KeyError) as err:
        sys.stderr.write(f"react-sandbox eval: {err}\n")
        return 1
    labels = [lane.label for lane in lanes]
    planned = plan(labels, len(scenario.test_set), args.repeat)
    done = read_results(results_path) if resume else []
    todo = still_to_run(planned, done, args.only_failed)
    runner = _Runner(scenario, {lane.label: lane for lane in lanes}, args, results_path, out)
    asyncio.run(runner.run_all(todo))
    everything = [*done, *runner.results]
    summaries = summarise(everything, labels)
    out.write("\n" + "\n".join(s.row() for s in summaries) + "\n")
    if args.report:
        questions = [case.question for case in scenario.test_set]
        report = to_html(scenario.title, questions, labels, everything)
        Path(args.report).write_text(report, encoding="utf-8")
        out.write(f"report: {args.report}\n")
    if minimum is not None and any(s.pass_rate < minimum for s in summaries):
        below = ", ".join(s.lane for s in summaries if s.pass_rate < minimum)
        out.write(f"below the minimum pass rate of {minimum:.0%}: {below}\n")
        return EXIT_BELOW_PASS_RATE
    return 0


class _Runner:
    def __init__(
        self,
        scenario: Scenario,
        lanes: dict[str, EvalLane],
        args: argparse.Namespace,
        path: Path,
        out: TextIO,
    ) -> None:
        self.scenario, self.lanes, self.args, self.out = scenario, lanes, args, out
        self.path = path
        self.results: list[dict[str, Any]] = []
        self.keys = KeyStore()
        self._servers: dict[str, Backend] = {}
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._started = time.monotonic()
        self._total = 0
        self._live = out.isatty()

    async def run_all(self, todo: list[RunKey]) -> None:
        self._total = len(todo)
        try:
            with self.path.open("a", encoding="utf-8") as results:
                await asyncio.gather(*(self._run(key, results) for key in todo))
        finally:
            for backend in self._servers.values():
                await backend.aclose()
        if self._live:
            self.out.write("\n")

    async def _run(self, key: RunKey, results: TextIO) -> None:
        lane = self.lanes[key.lane]
        server = host_of(lane.config.base_url) if lane.config.preset else SCRIPTED
        async with self._slots.setdefault(server, asyncio.Semaphore(self.args.concurrency)):
            result = await self._one(lane, key)
        # One whole line, flushed: a kill after this loses nothing of this run.
        results.write(json.dumps(result, ensure_ascii=False) + "\n")
        results.flush()
        self.results.append(result)
        self._progress(key, result)

    async def _one(self, lane: EvalLane, key: RunKey) -> dict[str, Any]:
        case = self.scenario.test_set[key.case]
        scenario = scenario_for_case(self.scenario, case)
        scenario = replace(scenario, model=replace(scenario.model, **lane.options))
        if lane.config.preset is None:  # the offline model replays this case's own replies
            backend = make_backend(lane.config, scenario, self.keys)
        else:  # one client per server lane: its connections are reused run after run
            backend = self._servers.get(lane.label) or make_backend(
                lane.config, scenario, self.keys
            )
            self._servers[lane.label] = backend
        if self.args.cache:
            salt = f"{lane.config.base_url}|{lane.config.model}|repeat {key.repeat}"
            backend = CachedBackend(backend, Path(self.args.cache), salt)
        engine = ReactEngine(scenario, backend, model=lane.config.model)
        record = RunRecord()
        finished = await drive(engine, lambda event: record.add([event]))
        document = run_document(record)
        verdict = matches(finished.answer, case.expected)
        return {
            "lane": key.lane,
            "case": key.case,
            "repeat": key.repeat,
            "question": case.question,
            "expected": case.expected.answer,
            "passed": bool(verdict),
            **{k: document[k] for k in ("status", "answer", "reason", "metrics", "events")},
        }

    def _progress(self, key: RunKey, result: dict[str, Any]) -> None:
        count = len(self.results)
        failed = sum(not r["passed"] for r in self.results)
        elapsed = time.monotonic() - self._started
        left = elapsed / count * (self._total - count)
        if self._live:
            filled = round(30 * count / self._total)
            self.out.write(
                f"\r[{'=' * filled}{' ' * (30 - filled)}] {count}/{self._total} runs · "
                f"{failed} failed · ~{left:.0f} s left\033[K"
            )
        else:
            verdict = "passed" if result["passed"] else f"FAILED ({result['answer']!r})"
            self.out.write(
                f"{count}/{self._total} {key.lane} case {key.case + 1} repeat "
                f"{key.repeat + 1}: {verdict}\n"
            )
        self.out.flush()


def _lanes(args: argparse.Namespace, scenario: Scenario) -> list[EvalLane]:
    if args.lane:
        lanes = [_lane_from_spec(spec, args.timeout) for spec in args.lane]
    elif scenario.lanes:
        lanes = [
            EvalLane(
                f"{lane.backend}:{lane.model}" if lane.model else lane.backend,
                config_for(lane.backend, lane.base_url, lane.model, args.timeout),
                {
                    "temperature": lane.temperature,
                    "max_tokens": lane.max_tokens,
                    "reasoning_effort": lane.reasoning_effort,
                },
            )
            for lane in scenario.lanes
        ]
    else:
        lanes = [EvalLane(SCRIPTED, BackendConfig(None), {})]
    seen: dict[str, int] = {}
    unique = []
    for lane in lanes:  # two lanes of one model stay apart in the results
        seen[lane.label] = seen.get(lane.label, 0) + 1
        label = lane.label if seen[lane.label] == 1 else f"{lane.label}#{seen[lane.label]}"
        unique.append(replace(lane, label=label))
    return unique


def _lane_from_spec(spec: str, timeout: float) -> EvalLane:
    head, *pairs = spec.split(",")
    options = dict(_option(pair) for pair in pairs)
    if head == SCRIPTED:
        return EvalLane(SCRIPTED, BackendConfig(None), options)
    url = _URL_LANE.match(head)
    if url is not None:
        base_url, model = url.groups()
        config = BackendConfig(preset_for_url(base_url), base_url, model, timeout)
    else:
        preset_id, _, model = head.partition(":")
        if not model:
            raise ValueError(f"--lane {spec!r}: write PRESET:MODEL or URL:MODEL")
        config = config_for(backend_id(preset_id), "", model, timeout)
    return EvalLane(head, config, options)


def _option(pair: str) -> tuple[str, Any]:
    name, _, value = pair.partition("=")
    name = name.strip().replace("-", "_")
    try:
        if name == "temperature":
            return name, float(value)
        if name == "max_tokens":
            return name, None if value == "auto" else int(value)
    except ValueError:
        raise ValueError(f"--lane option {pair!r}: not a number") from None
    if name == "reasoning_effort" and value in REASONING_EFFORTS:
        return name, value
    raise ValueError(f"--lane option {pair!r}: use temperature=, max_tokens= or reasoning_effort=")


def _rate(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 1:
        raise ValueError(f"--min-pass-rate must be from 0 to 1, or a percentage (got {text})")
    return value
