"""``react-sandbox open-trace FILE``: a trace from elsewhere (OTLP JSON or protobuf, GenAI or
OpenInference spans) printed as ``run`` prints a run (``--json`` as ``run --json``), and with
``--fork-from K`` continued live from its step K against the model the backend flags name.

Exit codes (cli_io.py): 0 answered, 1 error (an unreadable trace is one line), 2 usage, and
for a fork as ``run``'s: 3 stopped (Ctrl+C), 5 max steps, 6 a loop; 8 a trace that itself
ends without an answer (never 3: that is Ctrl+C).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import textwrap
from collections.abc import Mapping

from sandbox_app.application.backend_choice import BackendChoice
from sandbox_app.application.run_builder import build_run
from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.backends.registry import key_notice
from sandbox_app.cli.cli_io import EXIT_TRACE_UNANSWERED, OPEN_TRACE_EXIT_CODES
from sandbox_app.cli.run_command import EXIT_CODES, _backend_config
from sandbox_app.cli.run_options import add_setting_flags, check_flags, settings_from_flags
from sandbox_app.cli.terminal import TracePrinter, json_visible, say
from sandbox_app.cli.terminal_person import TerminalPerson
from sandbox_app.core.otel.otel_import import ImportedTrace, open_trace
from sandbox_app.core.otel.otel_spans import TraceError
from sandbox_app.core.results.exports import run_document
from sandbox_app.core.running.engine import drive
from sandbox_app.core.running.events import Event, RunFinished
from sandbox_app.core.running.fork import fork_point
from sandbox_app.core.running.records import RunRecord
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.tools.policy import allow


def open_trace_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="react-sandbox open-trace",
        description=textwrap.fill(
            "Print a trace from elsewhere (an OTLP JSON or protobuf file of OpenTelemetry "
            "GenAI or OpenInference spans) as `run` prints a run; with --fork-from K, go on "
            "from its step K live against the model the backend flags name. Tools the trace "
            "only names become mock tools (the results it recorded) or ask you.",
            79,
        ),
        epilog=OPEN_TRACE_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", help="an OTLP trace file (.json, .jsonl or protobuf)")
    p.add_argument(
        "--fork-from",
        metavar="K",
        type=int,
        help="continue live from step K (the trace's steps 1..K as they were)",
    )
    p.add_argument("--backend", help="a backend id, as for `run` (with --fork-from)")
    p.add_argument("--preset", help="a server by id or name, as for `run`")
    p.add_argument(
        "--base-url", help="any OpenAI-compatible server, e.g. http://localhost:11434/v1"
    )
    p.add_argument("--model", default="", help="model name on the server")
    p.add_argument("--timeout", default="60", help="seconds to wait for the server (default 60)")
    add_setting_flags(p)
    p.add_argument(
        "--allow", action="append", default=[], metavar="TOOL", help="run this tool unasked"
    )
    p.add_argument(
        "--hide-thinking", action="store_true", help="leave the model's thinking out of the trace"
    )
    p.add_argument(
        "--json", action="store_true", help="print one JSON document instead, as `run --json`"
    )
    p.set_defaults(max_steps=None, token_budget=None)
    return p


def open_trace_command(argv: list[str]) -> int:
    args = open_trace_parser().parse_args(argv)
    try:
        trace = open_trace(args.file)
    except TraceError as err:
        say(f"react-sandbox: {err}")
        return 1
    if args.fork_from is None:
        return _print(trace, args)
    return _fork(trace, args)


def _print(trace: ImportedTrace, args: argparse.Namespace) -> int:
    record = RunRecord(trace.lane.settings)
    record.scenario = trace.recording.scenario
    printer = None if args.json else TracePrinter(sys.stdout, thinking=not args.hide_thinking)
    for _, event in trace.lane.events:
        record.add([event])
        if printer is not None:
            printer.show(event)
    # Only the end of the trace stops a printed trace: not Ctrl+C, which 3 means.
    return _finish(record, args, {**EXIT_CODES, "stopped": EXIT_TRACE_UNANSWERED})


def _fork(trace: ImportedTrace, args: argparse.Namespace) -> int:
    events = [event for _, event in trace.lane.events]
    point = fork_point(events, args.fork_from)
    if point is None:
        steps = sum(1 for e in events if type(e).__name__ == "StepStarted")
        say(
            f"react-sandbox: --fork-from {args.fork_from}: the trace has no step after it to "
            f"go on from (fork from 1 to {max(steps - 1, 0)})"
        )
        return 1
    try:
        check_flags(args)
        if not (args.backend or args.preset or args.base_url):
            raise ValueError(
                "--fork-from needs a model: --base-url URL --model NAME (or --backend)"
            )
        config, keys = _backend_config(args), KeyStore()
        scenario = trace.recording.scenario
        scenario = scenario.with_changes(model=settings_from_flags(args, scenario.model))
        config.kind.check_settings(scenario.model)  # what it cannot send: refused, one line
    except (ScenarioError, ValueError, KeyError) as err:
        say(f"react-sandbox: {err}")
        return 1
    allowance = allow(scenario.policies, args.allow)
    scenario = scenario.with_changes(policies=allowance.policies)
    if notice := key_notice(config, keys):
        say(f"react-sandbox: {notice}")
    person = TerminalPerson(sys.stdin, sys.stderr)
    spec = BackendChoice(config, keys=keys).spec(  # the scenario's own settings, as is
        scenario,
        approve=person.approve,
        ask=person.ask,
        trusted=allowance.trusted,
        fork=point,
    )
    backend = spec.new_backend()
    record = RunRecord(spec.record_settings())
    printer = None if args.json else TracePrinter(sys.stdout, thinking=not args.hide_thinking)

    def emit(event: Event) -> None:
        record.add([event])
        if printer is not None:
            printer.show(event)

    engine = build_run(spec, backend)[0]

    async def go() -> RunFinished:
        try:
            return await drive(engine, emit)
        finally:
            await backend.aclose()

    try:
        finished = asyncio.run(go())
    except KeyboardInterrupt:
        finished = engine.stopped()
        if record.finished is None:
            record.add([finished])
    return _finish(record, args, EXIT_CODES)


def _finish(record: RunRecord, args: argparse.Namespace, codes: Mapping[str, int]) -> int:
    if args.json:
        document = json.dumps(run_document(record), ensure_ascii=False, indent=1)
        sys.stdout.write(json_visible(document) + "\n")
    finished = record.finished
    return codes[finished.status] if finished is not None else 1
