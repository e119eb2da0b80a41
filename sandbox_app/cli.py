"""Command line: ``react-sandbox`` opens the window; ``react-sandbox run`` prints a trace.

The CLI and the window are two front ends on one engine: ``run`` prints the same events the
window draws. Exit codes: 0 answered, 2 max steps, 3 stopped, 1 error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import replace

from sandbox_app import __version__
from sandbox_app.backends.keys import CUSTOM_KEY_ENV
from sandbox_app.backends.mcp_tools import McpConnection, McpError
from sandbox_app.core.backend import Backend
from sandbox_app.core.dialects import DIALECTS
from sandbox_app.core.engine import ReactEngine, drive
from sandbox_app.core.events import Event, RunFinished
from sandbox_app.core.exports import run_document
from sandbox_app.core.lane_settings import parse_option
from sandbox_app.core.records import RunRecord, RunSettings
from sandbox_app.core.scenario import (
    REASONING_EFFORTS,
    TOOL_CALLING,
    Scenario,
    lane_settings,
)
from sandbox_app.core.scenario_fields import ScenarioError
from sandbox_app.core.scenario_file import default_scenario, load_scenario
from sandbox_app.core.tools import TOOL_NAMES, Tool, tool_names, tools_for
from sandbox_app.core.tools.mcp_server import McpServerSpec
from sandbox_app.core.tools.plugins import installed
from sandbox_app.core.tools.policy import allow, refused_line
from sandbox_app.terminal import TracePrinter, WaitingNotice, json_visible, say
from sandbox_app.terminal_person import TerminalPerson

EXIT_CODES = {"answered": 0, "failed": 1, "max_steps": 2, "stopped": 3}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] in (["run"], ["eval"]):
        for problem in installed().problems:  # the window shows them in its status bar
            say(f"react-sandbox: {problem}")
    if args[:1] == ["run"]:
        return run_command(args[1:])
    if args[:1] == ["eval"]:
        from sandbox_app.eval_command import eval_command

        return eval_command(args[1:])
    options = _window_parser().parse_args(args)
    if options.self_test:
        from sandbox_app.ui.self_test import self_test

        return self_test()
    from sandbox_app.ui.app import run_app  # Qt is only imported for the window

    return run_app(options.scenario)


def _window_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="react-sandbox",
        description="ReAct Sandbox: edit a ReAct prompt, run it against a model, watch the trace.",
        epilog="Headless: react-sandbox run [SCENARIO] … (see react-sandbox run --help); a "
        "test set: react-sandbox eval SCENARIO … (see react-sandbox eval --help).",
    )
    parser.add_argument("scenario", nargs="?", help="scenario file to open in the window")
    parser.add_argument("--version", action="version", version=f"react-sandbox {__version__}")
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="run the default scenario in the window, offscreen and offline; exit 0 if right",
    )
    return parser


def _run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="react-sandbox run",
        description="Run a scenario headless and print its trace. The API key comes from the "
        "preset's variable (OPENAI_API_KEY, OPENROUTER_API_KEY, GROQ_API_KEY) only for that "
        f"preset's own host; any other server (a proxy, a local server, an edited base URL) "
        f"gets {CUSTOM_KEY_ENV}. Never from the command line.",
    )
    p.add_argument("scenario", nargs="?", help="scenario file (default: the Brightgrid example)")
    p.add_argument("--question", help="ask this instead of the scenario's question")
    p.add_argument("--backend", choices=["scripted", "openai"], help="default: scripted")
    p.add_argument(
        "--preset",
        help="a server by id or name: openai, ollama, lmstudio ('LM Studio'), llamacpp, vllm, "
        "openrouter, groq, custom",
    )
    p.add_argument(
        "--base-url", help="any OpenAI-compatible server, e.g. http://localhost:11434/v1"
    )
    p.add_argument("--model", default="", help="model name on the server")
    p.add_argument("--max-steps", help="1-50")
    p.add_argument(
        "--tools",
        help=f"comma-separated: the built-ins ({', '.join(TOOL_NAMES)}), the scenario's own "
        "tools, plugins' tools and, with --mcp, its MCP servers' tools",
    )
    p.add_argument("--dialect", choices=["auto", *DIALECTS])
    p.add_argument("--token-budget", help="stop when the run has used this many tokens (≥ 1)")
    p.add_argument(
        "--timeout",
        default="60",
        help="seconds to wait for the server before giving up (default 60)",
    )
    p.add_argument(
        "--max-tokens",
        help="per model reply: a number, or auto (512; 8192 for a model that thinks)",
    )
    p.add_argument(
        "--reasoning-effort",
        choices=REASONING_EFFORTS,
        help="how hard a reasoning model thinks (default: the server's)",
    )
    p.add_argument(
        "--tool-calling",
        choices=TOOL_CALLING,
        help="react: the prompt asks for Action lines (default); native: the API's tool calls",
    )
    p.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="TOOL",
        help="run this tool without asking, whatever its policy (repeatable); a tool the "
        "scenario denies stays denied",
    )
    p.add_argument(
        "--mcp", action="store_true", help="start the scenario's MCP servers (their tools)"
    )
    p.add_argument(
        "--hide-thinking", action="store_true", help="leave the model's thinking out of the trace"
    )
    p.add_argument(
        "--json", action="store_true", help="print one JSON document instead (thinking included)"
    )
    return p


def run_command(argv: list[str]) -> int:
    parser = _run_parser()
    args = parser.parse_args(argv)
    try:
        _check_flags(args)
        scenario = _scenario(args)
        backend = _backend(args, scenario)
    except (ScenarioError, ValueError, KeyError) as err:
        say(f"react-sandbox: {err}")
        return 1
    # --allow is the user's word for this run: the tool's policy becomes auto, and trusted.
    allowance = allow(scenario.policies, args.allow)
    for name in allowance.refused:
        say(f"react-sandbox: {refused_line(name)}")
    scenario = scenario.with_changes(policies=allowance.policies)
    printer = None if args.json else TracePrinter(sys.stdout, thinking=not args.hide_thinking)
    # With --json stdout holds only the document: the wait shows on stderr, and only if that
    # is a terminal (a status line that leaves nothing behind), never in a log.
    out = sys.stderr if args.json else sys.stdout
    waiting = WaitingNotice(out, backend.label) if out is sys.stdout or out.isatty() else None
    record = RunRecord(_settings(args, scenario, backend))

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
    person = TerminalPerson(sys.stdin, sys.stderr)
    engines: list[ReactEngine] = []

    def make_engine(sources: Sequence[Tool], check: bool = True) -> ReactEngine:
        s = scenario
        if check and args.mcp and s.mcp_servers:  # their tools are known now, connected
            _check_tools(args, s, sources)
        tools = tools_for(
            s.enabled_tools, s.documents, s.custom_tools, ask=person.ask, sources=sources
        )
        engines.append(
            ReactEngine(
                s,
                backend,
                model=args.model,
                token_budget=args.token_budget,
                approve=person.approve,
                tools=tools,
                trusted=allowance.trusted,
            )
        )
        return engines[-1]

    try:
        own = (*TOOL_NAMES, *(c.name for c in scenario.custom_tools))
        run = _run(make_engine, scenario.mcp_servers, own, backend, emit, waiting)
        finished = asyncio.run(run)
    except KeyboardInterrupt:  # Ctrl+C: asyncio.run cancelled the run, then re-raised this
        finished = (engines[-1] if engines else make_engine([], check=False)).stopped()
    except (McpError, UnknownTool) as err:
        say(f"react-sandbox: {err}")
        return 1
    if args.json:
        if record.finished is None:  # Ctrl+C before the engine could say so
            record.add([finished])
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
    connections = [McpConnection(spec) for spec in servers]
    watcher = None
    try:
        sources: list[Tool] = []
        for connection in connections:  # a name already taken is offered as SERVER_NAME
            sources += await connection.connect((*taken, *(t.name for t in sources)))
        engine = make_engine(sources)
        watcher = asyncio.create_task(waiting.watch()) if waiting is not None else None
        return await drive(engine, emit)
    finally:
        if watcher is not None:
            watcher.cancel()  # which erases its status line, if any
            with suppress(asyncio.CancelledError):
                await watcher
        await backend.aclose()
        for connection in connections:
            await connection.close()


def _settings(args: argparse.Namespace, scenario: Scenario, backend: Backend) -> RunSettings:
    """What the --json document records of how the run was made (never a key)."""
    return RunSettings(
        backend=backend.label,
        base_url=args.base_url or "",
        model=args.model,
        **lane_settings(scenario.model),
        dialect=scenario.dialect,
        max_steps=scenario.max_steps,
        question=scenario.question,
    )


def _scenario(args: argparse.Namespace) -> Scenario:
    scenario = load_scenario(args.scenario) if args.scenario else default_scenario()
    if args.question:
        scenario = scenario.with_changes(question=args.question)
    if args.max_steps is not None:
        scenario = scenario.with_changes(max_steps=args.max_steps)
    if args.tools is not None:
        args.tools = tuple(t.strip() for t in args.tools.split(",") if t.strip())
        if not (args.mcp and scenario.mcp_servers):  # else checked once they are connected
            _check_tools(args, scenario, ())
        scenario = scenario.with_changes(enabled_tools=args.tools)
    if args.dialect:
        scenario = scenario.with_changes(dialect=args.dialect)
    model = scenario.model
    if args.max_tokens is not None:  # "auto" sets None: the scenario's number is dropped
        model = replace(
            model, max_tokens=parse_option("max_tokens", args.max_tokens, "--max-tokens")
        )
    if args.reasoning_effort is not None:
        model = replace(model, reasoning_effort=args.reasoning_effort)
    if args.tool_calling is not None:
        model = replace(model, tool_calling=args.tool_calling)
    unknown = [name for name in args.allow if name not in scenario.enabled_tools]
    if unknown:
        raise ValueError(f"--allow {unknown[0]}: no such tool is enabled in this scenario")
    return scenario.with_changes(model=model)


class UnknownTool(ValueError):
    """A --tools name the run would not have."""


def _check_tools(args: argparse.Namespace, scenario: Scenario, sources: Sequence[Tool]) -> None:
    """--tools may name any tool the run would have, from the place its tools are made."""
    if args.tools is None:
        return
    known = tool_names(scenario.custom_tools, sources=sources)
    unknown = [name for name in args.tools if name not in known]
    if unknown:
        raise UnknownTool(f"--tools: unknown tool {unknown[0]!r}; known: {', '.join(known)}")


# The flags checked by the rules `eval` and the scenario file share (core/lane_settings.py).
# (--max-tokens too, in _scenario: its "auto" is None, which here would mean "not given".)
_CHECKED_FLAGS = ("max_steps", "token_budget", "timeout")


def _check_flags(args: argparse.Namespace) -> None:
    """Turn the checked flags' text into their values, or raise one line naming the flag."""
    for name in _CHECKED_FLAGS:
        text = getattr(args, name)
        if text is not None:
            flag = "--" + name.replace("_", "-")
            setattr(args, name, parse_option(name, text, flag))


def _backend(args: argparse.Namespace, scenario: Scenario) -> Backend:
    from sandbox_app.backends.keys import KeyStore
    from sandbox_app.backends.presets import preset_for_url, preset_named, preset_with_id
    from sandbox_app.backends.registry import (
        SCRIPTED,
        BackendConfig,
        backend_id,
        key_notice,
        make_backend,
    )

    wants_server = args.backend == "openai" or args.base_url or args.preset
    if not wants_server:
        return make_backend(BackendConfig(None), scenario, KeyStore())
    if args.preset:  # an id ("lmstudio") or a display name ("LM Studio"), as in the window
        backend = backend_id(args.preset)
        if backend == SCRIPTED:
            raise ValueError("--preset names a server; leave it out for the offline model")
        preset = preset_with_id(backend)
    else:
        preset = preset_for_url(args.base_url) if args.base_url else preset_named("OpenAI")
    if not args.model:
        raise ValueError("--model is required for an OpenAI-compatible backend")
    # The registry's key rule: a preset's key only ever goes to that preset's own host.
    config = BackendConfig(preset, args.base_url or preset.base_url, args.model, args.timeout)
    keys = KeyStore()
    notice = key_notice(config, keys)
    if notice:
        sys.stderr.write(f"react-sandbox: {notice}\n")
    return make_backend(config, scenario, keys)
