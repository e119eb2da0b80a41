"""``react-sandbox run``: one scenario, headless, its trace printed as the window draws it.

Exit codes (cli_io.py): 0 answered, 1 error, 2 usage, 3 stopped, 5 max steps, 6 a loop.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import replace

from sandbox_app.application.backend_choice import BackendChoice
from sandbox_app.application.lane_policy import LanePolicy
from sandbox_app.application.mcp_set import McpSet, own_tool_names
from sandbox_app.application.run_builder import build_run
from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.backends.catalogue.presets import preset_for_url
from sandbox_app.backends.local_servers.served import served_context
from sandbox_app.backends.mcp_client.mcp_tools import McpError
from sandbox_app.backends.registry import (
    SCRIPTED,
    BackendConfig,
    backend_id,
    config_for,
    display_name,
    key_notice,
)
from sandbox_app.backends.transport.sdk_backend import SdkBackend
from sandbox_app.cli.cli_io import (
    EXIT_ANSWERED,
    EXIT_ERROR,
    EXIT_LOOP,
    EXIT_MAX_STEPS,
    EXIT_STOPPED,
)
from sandbox_app.cli.evaluating.eval_history import history_at
from sandbox_app.cli.otel_options import OtlpOut
from sandbox_app.cli.run_options import (
    UnknownTool,
    check_flags,
    check_tools,
    run_parser,
    run_scenario,
)
from sandbox_app.cli.terminal import TracePrinter, WaitingNotice, json_visible, say
from sandbox_app.cli.terminal_person import TerminalPerson
from sandbox_app.core.otel.otel_attributes import Tags
from sandbox_app.core.results.exports import run_document
from sandbox_app.core.running.backend import Backend
from sandbox_app.core.running.engine import ReactEngine, drive
from sandbox_app.core.running.events import Event, RunFinished
from sandbox_app.core.running.records import RunRecord
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.tools import Tool
from sandbox_app.core.tools.mcp_server import McpServerSpec
from sandbox_app.core.tools.policy import allow, refused_line

EXIT_CODES = {
    "answered": EXIT_ANSWERED,
    "failed": EXIT_ERROR,
    "max_steps": EXIT_MAX_STEPS,
    "stopped": EXIT_STOPPED,
    "loop": EXIT_LOOP,
}


def run_command(argv: list[str]) -> int:
    parser = run_parser()
    args = parser.parse_args(argv)
    try:
        check_flags(args)
        otlp = OtlpOut(args)  # checked before the run: a bad endpoint or file runs nothing
        scenario = run_scenario(args)
        if undefined := scenario.undefined_variables():  # refused before anything starts
            raise ValueError(undefined)
        config, keys = _backend_config(args), KeyStore()
        config.kind.check_settings(scenario.model)  # what it cannot send: refused, one line
    except (ScenarioError, ValueError, KeyError) as err:
        say(f"react-sandbox: {err}")
        return 1
    # --allow is the user's word for this run: the tool's policy becomes auto, and trusted.
    allowance = allow(scenario.policies, args.allow)
    for name in allowance.refused:
        say(f"react-sandbox: {refused_line(name)}")
    scenario = scenario.with_changes(policies=allowance.policies)
    notice = key_notice(config, keys)
    if notice:
        say(f"react-sandbox: {notice}")
    person = TerminalPerson(sys.stdin, sys.stderr)
    spec = BackendChoice(config, keys=keys).spec(  # the scenario's own settings, as is
        scenario,
        approve=person.approve,
        ask=person.ask,
        trusted=allowance.trusted,
        token_budget=args.token_budget,
        # The window's source for the meter's window: its local server asked (/api/ps…).
        served_context=asyncio.run(served_context(config)),
    )
    # Stored as the window stores its Run tab's runs (application/lane_policy.py): its
    # version's runs and pass rate in the run history count it (a history that cannot be used
    # is one line on stderr; the run's result stands). The scenario file is left as it is.
    policy = LanePolicy("react-sandbox run", lambda: history_at(args.db, "run"))
    policy.started(spec)
    backend = spec.new_backend()  # a server's one client; its label for the waiting line
    native = scenario.model.tool_calling == "native"
    printer = (
        None
        if args.json
        else TracePrinter(
            sys.stdout,
            thinking=not args.hide_thinking,
            expected=scenario.expected,
            native=native,
        )
    )
    # With --json stdout holds only the document: the wait shows on stderr, and only if that
    # is a terminal (a status line that leaves nothing behind), never in a log.
    out = sys.stderr if args.json else sys.stdout
    waiting = WaitingNotice(out, backend.label) if out is sys.stdout or out.isatty() else None
    record = RunRecord(spec.record_settings())
    record.scenario = scenario  # its expected answer judges the run (--json's "correct")

    def emit(event: Event) -> None:
        record.add([event])
        if waiting is not None:
            waiting.saw(event)  # first: its status line is erased before the event shows
        if printer is not None:
            printer.show(event)

    if scenario.mcp_servers and not args.mcp:
        named = "; ".join(f"{m.name}: {m.where}" for m in scenario.mcp_servers)
        say(f"react-sandbox: the scenario uses MCP servers ({named}): add --mcp to start them")
        return 1
    engines: list[ReactEngine] = []

    def make_engine(sources: Sequence[Tool], check: bool = True) -> ReactEngine:
        if check and args.mcp and scenario.mcp_servers:  # their tools are known, connected
            check_tools(args, scenario, sources)
        run = replace(spec, sources=sources)
        # The prompt version counts the MCP servers' tools, known only now: the record keeps
        # it, and the offline model, made again from this spec, plays the replies for it.
        record.settings = run.record_settings()
        engines.append(build_run(run, backend if config.kind.server else None)[0])
        return engines[-1]

    try:
        own = own_tool_names(scenario)
        run = _run(make_engine, scenario.mcp_servers, own, backend, emit, waiting)
        finished = asyncio.run(run)
    except KeyboardInterrupt:  # Ctrl+C: asyncio.run cancelled the run, then re-raised this
        finished = (engines[-1] if engines else make_engine([], check=False)).stopped()
    except (McpError, UnknownTool) as err:
        say(f"react-sandbox: {err}")
        return 1
    if record.finished is None:  # Ctrl+C before the engine could say so
        record.add([finished])
    policy.finished(finished.answer, record)
    if otlp:  # after the trace, on stderr; never the exit code: the run's result stands
        otlp.add(record, Tags(scenario.title, record.settings.prompt_version))
        otlp.send(sys.stderr)
    if args.json:
        document = json.dumps(run_document(record), ensure_ascii=False, indent=1)
        print(json_visible(document))  # the same document, with no character a terminal obeys
    return EXIT_CODES[finished.status]


async def _run(
    make_engine: Callable[[Sequence[Tool]], ReactEngine],
    servers: tuple[McpServerSpec, ...],
    taken: tuple[str, ...],
    backend: Backend,
    emit: Callable[[Event], None],
    waiting: WaitingNotice | None = None,
) -> RunFinished:
    """Connect the MCP servers, then drive the run; meanwhile ``waiting`` (fed the events by
    ``emit``) watches the clock."""
    # The window's connection set: a name already taken is offered as SERVER_NAME, and each
    # skipped or renamed tool is said once, as the window says it.
    connected = McpSet(on_notice=lambda notice: print(f"react-sandbox: {notice}", file=sys.stderr))
    watcher = None
    try:
        engine = make_engine(await connected.connect_all(servers, taken))
        if isinstance(backend, SdkBackend):  # its start-up is never counted as the server's wait
            await backend.ready()
        watcher = asyncio.create_task(waiting.watch()) if waiting is not None else None
        return await drive(engine, emit)
    finally:
        if watcher is not None:
            watcher.cancel()  # which erases its status line, if any
            with suppress(asyncio.CancelledError):
                await watcher
        await backend.aclose()
        await connected.close_all()


def _backend_config(args: argparse.Namespace) -> BackendConfig:
    """What the flags say to run against: any registered backend id, a preset, or a URL."""
    backend = backend_id(args.backend) if args.backend else SCRIPTED  # any registered id
    if args.preset:  # an id ("lmstudio") or a display name ("LM Studio"), as in the window
        backend = backend_id(args.preset)
        if not config_for(backend).kind.server:
            raise ValueError("--preset names a server; leave it out for the offline model")
    elif args.base_url and backend in (SCRIPTED, "openai"):
        # --base-url alone, or with --backend openai ("any OpenAI-compatible server" before
        # ids): the URL's own preset, else custom.
        backend = preset_for_url(args.base_url).id
    config = config_for(backend, args.base_url or "", args.model, args.timeout)
    if args.base_url and not config.kind.has("base_url"):
        raise ValueError(f"--base-url: the {display_name(backend)} backend takes no URL")
    if config.kind.has("model") and not args.model:
        raise ValueError(f"--model is required for the {display_name(backend)} backend")
    return config
