"""``react-sandbox eval``: a scenario's test set × lanes × repeats, headless, on the same engine.

One JSON line per finished run (case, lane, repeat, status, answer, verdict, metrics and the
full event trace) is appended and flushed as each run ends, so a killed process loses no
finished run; ``--resume`` skips what the file already has, ``--only-failed`` runs again
what failed. Each server gets at most ``--concurrency`` requests at once (a 429 pauses and
halves that server's requests, never another's: backends/transport/throttle.py). The
progress goes to stderr, the summary to stdout (``--json``: as JSON); ``--junit`` writes the
runs as a CI server's test report (eval_outputs.py). Nothing is kept per run (eval_runs.py):
100,000 runs take flat memory. ``--shard I/N``, ``--merge`` and ``--ray``: one evaluation in
pieces (eval_shards.py).
Exit codes (cli_io.py, listed in ``--help``): 0 done, 1 an error, 2 usage, 3 stopped (Ctrl+C),
4 a lane below ``--min-pass-rate``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import textwrap
from collections.abc import Collection
from pathlib import Path
from typing import TextIO

from sandbox_app.application.eval_runner import EvalRunner, declined, unjudged_lanes
from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.backends.registry import key_notice
from sandbox_app.cli.cli_io import (
    EVAL_EXIT_CODES,
    EXIT_BELOW_PASS_RATE,
    EXIT_STOPPED,
    STDIN,
    STDIN_NAME,
    scenario_from,
)
from sandbox_app.cli.evaluating.eval_baseline import (
    add_baseline_options,
    check_baseline_option,
    compare_with_baseline,
    counted_in_history,
    judge_agreement,
)
from sandbox_app.cli.evaluating.eval_history import add_db_option, eval_log, scenario_place
from sandbox_app.cli.evaluating.eval_outputs import Finish, cache_problem, check_writable, finish
from sandbox_app.cli.evaluating.eval_runs import EvalRuns
from sandbox_app.cli.evaluating.eval_shards import (
    Merging,
    add_shard_options,
    check_shard_options,
    default_results,
    run_on_ray,
)
from sandbox_app.cli.lane_spec import eval_lanes, lane_from_spec
from sandbox_app.cli.otel_options import OtlpOut, add_otlp_options
from sandbox_app.cli.terminal import say
from sandbox_app.core.results.compare import read_prices
from sandbox_app.core.results.eval_result import RunKey
from sandbox_app.core.results.evaluation import count_pending, iter_plan, pending
from sandbox_app.core.results.result_stream import Scan, iter_latest, scan, tally_latest
from sandbox_app.core.results.shards import ShardPlan, case_ids
from sandbox_app.core.scenarios.lane_settings import parse_option
from sandbox_app.core.scenarios.prompt_versions import names_of
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.test_set import asked_questions, undefined_in_cases
from sandbox_app.core.tools.policy import allow, refused_line
from sandbox_app.core.untrusted.file_reader import ReadError, display_name

__all__ = ["EXIT_BELOW_PASS_RATE", "eval_command", "parser"]  # tests import the exit code
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
    p.add_argument(
        "--out",
        help="results file, one JSON line per run (default: ./NAME.results.jsonl in the "
        "current folder, NAME the scenario file's name without .json)",
    )
    p.add_argument("--resume", action="store_true", help="skip the runs the results file has")
    p.add_argument("--only-failed", action="store_true", help="run again what failed")
    p.add_argument("--min-pass-rate", help="exit 4 when a lane passes less (0.8 or 80%%)")
    p.add_argument("--report", help="also write a self-contained HTML report to this file")
    p.add_argument(
        "--junit",
        metavar="FILE",
        help="also write the runs as JUnit XML for a CI server: a test suite per lane, a test "
        "case per case x repeat, each failure naming its failed checks",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the summary as JSON on stdout (each lane's runs, passes, pass rate and "
        "95%% interval, and the totals); the progress stays on stderr",
    )
    p.add_argument(
        "--cache",
        nargs="?",
        const=".react-sandbox-cache",
        help="answer a request seen before (same messages, model, settings and repeat) from "
        "this folder (default .react-sandbox-cache)",
    )
    p.add_argument(
        "--prices",
        metavar="FILE",
        help="a JSON price table, model -> [input, output] dollars per million tokens, for "
        'the "max_cost" checks (without a price such a check is undecided, never a pass)',
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
    add_baseline_options(p)
    add_otlp_options(p)  # --otlp, --otlp-file: the runs as OpenTelemetry traces
    add_shard_options(p)  # --shard, --merge, --ray: one evaluation in pieces (eval_shards.py)
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
        check_baseline_option(args)
        # In the current folder, not beside the scenario: a built-in's folder is the
        # installed package's, and a shared scenario's may not be the user's to write in.
        shard = check_shard_options(args)
        results_path = Path(args.out or default_results(args.scenario, shard))
        # Every file the evaluation writes is checked before the first run, not after the last.
        scenario_path = {} if piped else {"the scenario file": Path(args.scenario)}
        check_writable(results_path, "--out", others=scenario_path)
        resume = args.resume or args.only_failed
        # A shard run again replaces its own file (a rerun never doubles a run).
        replace_shard = shard is not None and not resume and results_path.exists()
        if results_path.exists() and results_path.stat().st_size and not resume and not shard:
            raise ValueError(
                f"{results_path} exists: add --resume to go on with it, or choose another --out"
            )
        for option, given in (("--report", args.report), ("--junit", args.junit)):
            if given:
                others = {**scenario_path, "the results file": results_path}
                if args.report and option == "--junit":
                    others["the --report file"] = Path(args.report)
                check_writable(Path(given), option, others=others)
        otlp = OtlpOut(args, {**scenario_path, "the results file": results_path})
        prices = read_prices(args.prices) if args.prices else {}
    except (ScenarioError, ValueError, KeyError) as err:
        say(f"react-sandbox eval: {err}", progress)
        return 1
    # --allow is the user's word for this evaluation, as for `run`; the rest of what would
    # ask is declined (eval asks no one), and said once here rather than only in the results.
    allowance = allow(scenario.policies, args.allow)
    scenario = scenario.with_changes(policies=allowance.policies)
    for name in allowance.refused:
        say(f"react-sandbox eval: {refused_line(name)}", progress)
    if notice := declined(scenario, allowance.trusted):
        say(f"react-sandbox eval: {notice}", progress)
    if notice := unjudged_lanes(scenario, lanes):
        say(f"react-sandbox eval: {notice}", progress)
    cache = Path(args.cache) if args.cache else None
    problem = cache_problem(cache) if cache is not None else None
    if problem is not None:  # a saving, not a result: the runs go on without it
        say(f"react-sandbox eval: --cache {problem}: running without the cache", progress)
        cache = args.cache = None  # nor handed to --ray's shards
    keys = KeyStore()
    for lane in lanes:  # before any run: what the key rule holds back, and why
        notice = key_notice(lane.config, keys)
        if notice:
            say(f"react-sandbox eval: {lane.label}: {notice}", progress)
    labels = [lane.label for lane in lanes]
    # The plan is walked one run at a time: only its count is known up front.
    planned: Collection[RunKey] = iter_plan(labels, len(scenario.test_set), args.repeat)
    if shard is not None:
        planned = ShardPlan(planned, shard, case_ids(scenario.test_set))
        if replace_shard:
            say(f"react-sandbox eval: shard {shard}: {results_path.name} replaced", progress)
            results_path.write_bytes(b"")
    try:  # the shards' runs (from files, or from Ray tasks): checked before anything is written
        shard_files = [Path(f) for f in args.merge or ()]
        if args.ray:
            shard_files = run_on_ray(args, results_path, eval_command, progress)
        merging = Merging(results_path, shard_files, planned) if shard_files else None
        # What the file has: each run's latest verdict, not its result (result_stream.py).
        found = scan(results_path, planned) if resume and merging is None else Scan()
        # The earlier runs' sums, but those about to be made again (their new result counts).
        tallies = tally_latest(
            results_path, labels, found, lambda key: args.only_failed and not found.latest[key]
        )
    except (ValueError, ReadError) as err:
        say(f"react-sandbox eval: {err}", progress)
        return 1
    # The history database gets the earlier runs it lacks (a resume), read as a stream.
    earlier = iter_latest(results_path, planned, found) if resume else iter([])
    log = eval_log(args, scenario, lanes, results_path, earlier)
    if merging is not None:  # the merged file written, its runs stored and counted, at once
        log.add_many(merging.written(tallies, found))
    if notice := found.notice(display_name(results_path)):
        say(f"react-sandbox eval: {notice}", progress)
    # Each result is handed on, in this order, after its line is written (eval_runs.py).
    title = scenario.title
    hand_on = [lambda result, record: otlp.add_result(result, record, title), log.add]
    runs = EvalRuns(results_path, progress, tallies, also=hand_on)
    runner = EvalRunner(
        scenario,
        lanes,
        runs.finished,
        concurrency=args.concurrency,
        cache=cache,
        keys=keys,
        trusted=allowance.trusted,
        judge_url_source="user" if args.trust_file_lanes else "file",  # the judge's URL too
        prices=prices,
    )
    runs.total = count_pending(planned, found.latest, args.only_failed)
    try:
        asyncio.run(runs.run_all(runner, pending(planned, found.latest, args.only_failed)))
    except KeyboardInterrupt:  # Ctrl+C: asyncio.run cancelled the runs, then re-raised this
        # Every finished run is a whole line already (and a history row): the evaluation
        # stays unfinished in the history, as after a kill, and --resume goes on from it.
        if runs.count:
            say(
                f"react-sandbox eval: stopped after {runs.count} runs; {results_path.name} "
                "has them, --resume goes on",
                progress,
            )
        else:  # no file was made for it: nothing to name
            say("react-sandbox eval: stopped before the first run ended; nothing written", progress)
        return EXIT_STOPPED
    log.finish()
    otlp.send_evaluation(progress, scenario.title)
    baseline = compare_with_baseline(args, log, scenario_place(args))
    judge = judge_agreement(log, scenario_place(args), scenario)
    outputs = Finish(
        scenario.title,
        asked_questions(scenario),
        labels,
        results_path,
        planned,
        report=Path(args.report) if args.report else None,
        junit=Path(args.junit) if args.junit else None,
        as_json=args.json,
        minimum=minimum,
        baseline=baseline,
        fail_on_regression=args.fail_on_regression,
        names=names_of(scenario.prompt_history),
        counted=counted_in_history(log),
        judge=judge,
    )
    return finish(outputs, runs.tallies, out)


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
