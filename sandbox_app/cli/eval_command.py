"""``react-sandbox eval``: a scenario's test set × lanes × repeats, headless, on the same engine.

One JSON line per finished run (case, lane, repeat, status, answer, verdict, metrics and the
full event trace) is appended and flushed as each run ends, so a killed process loses no
finished run; ``--resume`` skips what the file already has, ``--only-failed`` runs again
what failed. Each server gets at most ``--concurrency`` requests at once (a 429's retries wait
inside that server's share, never another's). The progress goes to stderr, the summary to
stdout. Exit codes (cli_io.py): 0 done, 1 an error, 2 usage, 4 a lane below
``--min-pass-rate``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import textwrap
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from sandbox_app.application.eval_runner import EvalLane, EvalRunner, declined
from sandbox_app.application.history import EvaluationLog
from sandbox_app.backends.keys import KeyStore
from sandbox_app.backends.registry import key_notice
from sandbox_app.cli.cli_io import (
    EVAL_EXIT_CODES,
    EXIT_BELOW_PASS_RATE,
    STDIN,
    STDIN_NAME,
    scenario_from,
)
from sandbox_app.cli.eval_history import add_db_option, eval_log
from sandbox_app.cli.eval_outputs import cache_problem, check_writable
from sandbox_app.cli.lane_spec import eval_lanes, lane_from_spec
from sandbox_app.cli.otel_options import OtlpOut, add_otlp_options
from sandbox_app.cli.prompt_choice import version_note
from sandbox_app.cli.terminal import say, visible
from sandbox_app.core.results.checks import described
from sandbox_app.core.results.evaluation import (
    ResultsFile,
    RunKey,
    count_pending,
    iter_plan,
    pending,
    results_file,
    summarise,
)
from sandbox_app.core.results.exports import TEST_SET_FORMATS, EvalResults
from sandbox_app.core.running.records import RunRecord
from sandbox_app.core.scenarios.lane_settings import parse_option
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.test_set import asked_questions, undefined_in_cases
from sandbox_app.core.tools.policy import allow, refused_line
from sandbox_app.core.untrusted.file_reader import ReadError, display_name

_lane_from_spec = lane_from_spec  # where --lane was read before lane_spec.py (tests import it)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="react-sandbox eval",
        # Wrapped here: the epilog's list of exit codes needs its lines kept as written.
        description=textwrap.fill(
            "Run a scenario's test set against one or more lanes and summarise the pass "
            "rates: the progress on stderr, the summary on stdout. Keys come from the "
            "environment, as for `react-sandbox run`.",
            79,
        ),
        epilog=EVAL_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "scenario", help="a scenario file with a test set, or - to read one from standard input"
    )
    p.add_argument(
        "--lane",
        action="append",
        default=[],
        help="scripted, BACKEND:MODEL (ollama:llama3), URL:MODEL or BACKEND:URL:MODEL "
        "(anthropic:http://127.0.0.1:8123:claude-x), then ,key=value options "
        "(temperature, max_tokens, reasoning_effort, tool_calling=native); repeatable. "
        "Default: the scenario's lanes",
    )
    p.add_argument(
        "--prompt",
        action="append",
        default=[],
        metavar="VERSION",
        help="run this prompt version (id prefix or name: `react-sandbox prompts list`) in "
        "every lane; repeatable: each version × each lane",
    )
    p.add_argument("--repeat", default="1", help="runs per case and lane, 1-1000 (default 1)")
    p.add_argument("--concurrency", default="4", help="requests at once per server, 1-64")
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
    p.add_argument("--timeout", default="60", help="seconds to wait for a server (default 60)")
    p.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="TOOL",
        help="run this tool without asking, whatever its policy (repeatable); without it a "
        "tool with side effects is declined (eval asks no one); a tool the scenario denies "
        "stays denied",
    )
    p.add_argument(
        "--trust-file-lanes",
        action="store_true",
        help="send keys to the servers the scenario's lanes (and judge) name, as if given "
        "with --lane "
        "(without it, a URL from the file gets no key: a file may not decide where keys go)",
    )
    add_db_option(p)
    add_otlp_options(p)  # --otlp, --otlp-file: the runs as OpenTelemetry traces
    return p


def eval_command(argv: list[str], out: TextIO | None = None, progress: TextIO | None = None) -> int:
    """The summary to ``out``, the progress to ``progress`` (by default stdout and stderr,
    looked up now: a default bound at import outlives a redirection)."""
    out, progress = out or sys.stdout, progress or sys.stderr
    args = parser().parse_args(argv)
    try:
        for name in ("repeat", "concurrency", "timeout"):  # the rules `run` and files share
            setattr(args, name, parse_option(name, getattr(args, name), f"--{name}"))
        piped = args.scenario == STDIN
        if piped and not args.out:  # no file name to name the results after
            raise ValueError("a scenario from standard input needs --out (its results file)")
        scenario = scenario_from(args.scenario)
        if not scenario.test_set:
            name = STDIN_NAME if piped else Path(args.scenario).name
            raise ValueError(f"{name} has no test set")
        unknown = [name for name in args.allow if name not in scenario.enabled_tools]
        if unknown:
            raise ValueError(f"--allow {unknown[0]}: no such tool is enabled in this scenario")
        if undefined := undefined_in_cases(scenario):  # before the first run, not in each
            raise ValueError(undefined)
        lanes = eval_lanes(args, scenario)
        minimum = _rate(args.min_pass_rate)
        results_path = Path(args.out or Path(args.scenario).with_suffix(".results.jsonl").name)
        # Every file the evaluation writes is checked before the first run, not after the last.
        scenario_path = {} if piped else {"the scenario file": Path(args.scenario)}
        check_writable(results_path, "--out", others=scenario_path)
        resume = args.resume or args.only_failed
        if results_path.exists() and results_path.stat().st_size and not resume:
            raise ValueError(
                f"{results_path} exists: add --resume to go on with it, or choose another --out"
            )
        if args.report:
            check_writable(
                Path(args.report),
                "--report",
                others={**scenario_path, "the results file": results_path},
            )
        otlp = OtlpOut(args, {**scenario_path, "the results file": results_path})
    except (ScenarioError, ValueError, KeyError) as err:
        say(f"react-sandbox eval: {err}")
        return 1
    # --allow is the user's word for this evaluation, as for `run`; the rest of what would
    # ask is declined (eval asks no one), and said once here rather than only in the results.
    allowance = allow(scenario.policies, args.allow)
    scenario = scenario.with_changes(policies=allowance.policies)
    for name in allowance.refused:
        say(f"react-sandbox eval: {refused_line(name)}")
    if notice := declined(scenario, allowance.trusted):
        say(f"react-sandbox eval: {notice}")
    cache = Path(args.cache) if args.cache else None
    problem = cache_problem(cache) if cache is not None else None
    if problem is not None:  # a saving, not a result: the runs go on without it
        say(f"react-sandbox eval: --cache {problem}: running without the cache")
        cache = None
    keys = KeyStore()
    for lane in lanes:  # before any run: what the key rule holds back, and why
        notice = key_notice(lane.config, keys)
        if notice:
            say(f"react-sandbox eval: {lane.label}: {notice}")
    labels = [lane.label for lane in lanes]
    # The plan is walked one run at a time: only its count is known up front.
    planned = iter_plan(labels, len(scenario.test_set), args.repeat)
    try:
        found = results_file(results_path, planned) if resume else ResultsFile([])
    except ReadError as err:
        say(f"react-sandbox eval: {err}")
        return 1
    if notice := found.notice(display_name(results_path)):
        say(f"react-sandbox eval: {notice}")
    done = found.results
    todo = pending(planned, done, args.only_failed)
    log = eval_log(args, scenario, lanes, results_path, done if resume else [])
    runner = _Runner(scenario, lanes, args, results_path, progress, keys, cache, allowance.trusted)
    runner.total, runner.log = count_pending(planned, done, args.only_failed), log
    runner.otlp = otlp
    asyncio.run(runner.run_all(todo))
    log.finish()
    otlp.send_evaluation(progress, scenario.title)
    everything = [*done, *runner.results]
    summaries = summarise(everything, labels)
    rows = (visible(s.row()) + version_note(everything, s.lane) for s in summaries)
    out.write("\n" + "\n".join(rows) + "\n")
    if args.report:
        questions = asked_questions(scenario)
        results = EvalResults(scenario.title, questions, labels, [(r, None) for r in everything])
        try:  # checked before the runs; a disk that filled up since is still one line
            TEST_SET_FORMATS.exporter("html").save(results, Path(args.report))
        except OSError as err:
            say(f"react-sandbox eval: --report {args.report}: {err.strerror or err}")
            return 1
        out.write(f"report: {visible(args.report)}\n")
    if minimum is not None and any(s.pass_rate < minimum for s in summaries):
        below = ", ".join(s.lane for s in summaries if s.pass_rate < minimum)
        out.write(visible(f"below the minimum pass rate of {minimum:.0%}: {below}") + "\n")
        return EXIT_BELOW_PASS_RATE
    return 0


class _Runner:
    """The command's side of a run: one flushed line per result, and the progress (on
    ``out``: stderr, so that stdout holds only the summary)."""

    def __init__(
        self,
        scenario: Scenario,
        lanes: list[EvalLane],
        args: argparse.Namespace,
        path: Path,
        out: TextIO,
        keys: KeyStore,
        cache: Path | None,
        trusted: frozenset[str],
    ) -> None:
        self.out, self.path = out, path
        self.results: list[dict[str, Any]] = []
        self.runner = EvalRunner(
            scenario,
            lanes,
            self._finished,
            concurrency=args.concurrency,
            cache=cache,
            keys=keys,
            trusted=trusted,
            judge_url_source="user" if args.trust_file_lanes else "file",  # the judge's URL too
        )
        self._file: TextIO | None = None
        self._started = time.monotonic()
        self.total = 0  # the runs to make, for the progress
        self._failed = 0  # counted as they come: a sum over all results a run is quadratic
        self._live = out.isatty()
        self.log: EvaluationLog | None = None  # the history database's side (eval_history.py)
        self.otlp: OtlpOut | None = None  # the runs' traces, sent when all are done

    async def run_all(self, todo: Iterable[RunKey]) -> None:
        with self.path.open("a", encoding="utf-8") as self._file:
            await self.runner.run_all(todo)
        if self._live:
            self.out.write("\n")

    def _finished(self, result: dict[str, Any], record: RunRecord) -> None:
        assert self._file is not None
        if self.otlp:
            self.otlp.add_result(result, record, self.runner.scenario.title)
        # One whole line, flushed: a kill after this loses nothing of this run.
        self._file.write(json.dumps(result, ensure_ascii=False) + "\n")
        self._file.flush()
        if self.log is not None:  # its row, in its own transaction (a resume adds one lost)
            self.log.add(result, record)
        # Kept for the summary and the report, which never read the events (the file has them).
        self.results.append({k: v for k, v in result.items() if k != "events"})
        self._failed += not result["passed"]
        self._progress(result)

    def _progress(self, result: dict[str, Any]) -> None:
        count, failed = len(self.results), self._failed
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
            verdict = "passed" if result["passed"] else f"FAILED ({described(result)})"
            line = (
                f"{count}/{total} {result['lane']} case {result['case'] + 1} repeat "
                f"{result['repeat'] + 1}: {verdict}"
            )
            self.out.write(visible(line) + "\n")  # the answer and lane are others' words
        self.out.flush()


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
