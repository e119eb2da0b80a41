"""``react-sandbox run``'s options: the parser, and the scenario they make of the file.

Every value goes through the rules the scenario file and ``eval`` share
(core/scenarios/lane_settings.py), and every tool name is checked against the tools the run would
have
(core/tools), so a flag is refused with one line naming it before anything runs.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Sequence
from typing import Any

from sandbox_app.backends.catalogue.keys import CUSTOM_KEY_ENV
from sandbox_app.cli.cli_io import RUN_EXIT_CODES, STDIN, question_from, scenario_from
from sandbox_app.cli.evaluating.eval_history import add_db_option
from sandbox_app.cli.otel_options import add_otlp_options
from sandbox_app.cli.prompt_choice import with_version
from sandbox_app.core.react_format.dialects import DIALECTS
from sandbox_app.core.react_format.variables import parse_assignment
from sandbox_app.core.scenarios.lane_settings import SETTINGS, LaneSettings, parse_option
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.scenarios.scenario_file import default_scenario
from sandbox_app.core.tools import TOOL_NAMES, Tool, tool_names


def run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="react-sandbox run",
        # Wrapped here: the epilog's list of exit codes needs its lines kept as written.
        description=textwrap.fill(
            "Run a scenario headless and print its trace. The API key comes from the "
            "preset's variable (OPENAI_API_KEY, OPENROUTER_API_KEY, GROQ_API_KEY) only for "
            "that preset's own host; any other server (a proxy, a local server, an edited "
            f"base URL) gets {CUSTOM_KEY_ENV}. Never from the command line.",
            79,
        ),
        epilog=RUN_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "scenario",
        nargs="?",
        help="scenario file, or - to read one from standard input (default: the Brightgrid "
        "example)",
    )
    p.add_argument(
        "--question",
        help="ask this instead of the scenario's question; - reads it from standard input",
    )
    p.add_argument(
        "--backend",
        help="a backend id, as in a scenario file's lanes: scripted (the default), a preset "
        "(openai, ollama, lmstudio, …), custom, or another backend kind's id",
    )
    p.add_argument(
        "--preset",
        help="a server by id or name: openai, ollama, lmstudio ('LM Studio'), llamacpp, vllm, "
        "openrouter, groq, custom",
    )
    p.add_argument(
        "--base-url", help="any OpenAI-compatible server, e.g. http://localhost:11434/v1"
    )
    p.add_argument("--model", default="", help="model name on the server")
    p.add_argument(
        "--prompt",
        metavar="VERSION",
        help="run with this version of the scenario's prompt (id prefix or name: `react-sandbox "
        "prompts list`): its template, dialect, tool-calling mode and tools; flags such as "
        "--dialect still change it",
    )
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
    add_setting_flags(p)
    p.add_argument(
        "--var",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="give the template variable {{NAME}} this value, over the scenario's (repeatable)",
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
    add_otlp_options(p)
    add_db_option(p)  # the run stored there as a single run (the Versions panel counts it)
    return p


def run_scenario(args: argparse.Namespace) -> Scenario:
    if args.scenario == STDIN and args.question == STDIN:
        raise ValueError("the scenario and --question cannot both be - (one standard input)")
    scenario = scenario_from(args.scenario) if args.scenario else default_scenario()
    scenario = with_version(scenario, args.prompt)  # first: the flags below change it
    if args.question:
        scenario = scenario.with_changes(question=question_from(args.question))
    if args.max_steps is not None:
        scenario = scenario.with_changes(max_steps=args.max_steps)
    if args.tools is not None:
        args.tools = tuple(t.strip() for t in args.tools.split(",") if t.strip())
        if not (args.mcp and scenario.mcp_servers):  # else checked once they are connected
            check_tools(args, scenario, ())
        scenario = scenario.with_changes(enabled_tools=args.tools)
    if args.dialect:
        scenario = scenario.with_changes(dialect=args.dialect)
    if args.var:  # over the scenario's own; a bad one is one line naming it
        given = dict(parse_assignment(text) for text in args.var)
        scenario = scenario.with_changes(variables={**scenario.variables, **given})
    model = settings_from_flags(args, scenario.model)
    unknown = [name for name in args.allow if name not in scenario.enabled_tools]
    if unknown:
        raise ValueError(f"--allow {unknown[0]}: no such tool is enabled in this scenario")
    return scenario.with_changes(model=model)


def add_setting_flags(p: argparse.ArgumentParser) -> None:
    """A flag per lane setting (core/scenarios/lane_settings.py): --temperature, --max-tokens, …"""
    for setting in SETTINGS.values():
        if setting.lane_only:  # run has --prompt, --dialect, --tools and --max-steps itself
            continue
        rule = setting.rule
        if rule.kind == "switch":  # --stop-on-loops, and --no-stop-on-loops for a file's true
            p.add_argument(
                setting.flag,
                dest=setting.name,
                action=argparse.BooleanOptionalAction,
                default=None,
                help=setting.help,
            )
            continue
        # A choice keeps argparse's own check (exit 2, the choices listed in --help).
        choices = (*rule.choices, *(["auto"] if rule.nullable else [])) if rule.choices else None
        p.add_argument(setting.flag, dest=setting.name, choices=choices, help=setting.help)


def settings_from_flags(args: argparse.Namespace, base: LaneSettings) -> LaneSettings:
    """``base`` with the settings the flags gave, each by its rule ("auto" is None: the
    scenario's number is dropped); one line naming the flag for a bad value."""
    given = {
        name: _flag_value(args, name)
        for name, setting in SETTINGS.items()
        if not setting.lane_only and getattr(args, name, None) is not None
    }
    return base.replace(**given)


def _flag_value(args: argparse.Namespace, name: str) -> Any:
    setting, value = SETTINGS[name], getattr(args, name)
    if isinstance(value, bool):  # a switch's flag: argparse already made it true or false
        return setting.rule.check(value, setting.flag)
    return parse_option(name, value, setting.flag)


class UnknownTool(ValueError):
    """A --tools name the run would not have."""


def check_tools(args: argparse.Namespace, scenario: Scenario, sources: Sequence[Tool]) -> None:
    """--tools may name any tool the run would have, from the place its tools are made."""
    if args.tools is None:
        return
    known = tool_names(scenario.custom_tools, sources=sources)
    unknown = [name for name in args.tools if name not in known]
    if unknown:
        raise UnknownTool(f"--tools: unknown tool {unknown[0]!r}; known: {', '.join(known)}")


# The flags checked by the rules `eval` and the scenario file share
# (core/scenarios/lane_settings.py).
# (--max-tokens too, in run_scenario: its "auto" is None, which here would mean "not given".)
_CHECKED_FLAGS = ("max_steps", "token_budget", "timeout")


def check_flags(args: argparse.Namespace) -> None:
    """Turn the checked flags' text into their values, or raise one line naming the flag."""
    for name in _CHECKED_FLAGS:
        text = getattr(args, name)
        if text is not None:
            flag = "--" + name.replace("_", "-")
            setattr(args, name, parse_option(name, text, flag))
