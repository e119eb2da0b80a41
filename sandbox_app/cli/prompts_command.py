"""``react-sandbox prompts list|show|diff``: a scenario file's prompt history on a terminal.

The history is what the window keeps as you run (core/scenarios/prompt_versions.py); a
version is named by the start of its id or by its name. Every word of a version came from a
file, so it is printed through ``terminal.visible``. Exit codes: 0 done, 1 an error (a bad
file, a version named that is not there or is ambiguous), 2 a usage error.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from typing import TextIO

from sandbox_app.cli.cli_io import STDIN, scenario_from
from sandbox_app.cli.terminal import say, visible
from sandbox_app.core.scenarios.prompt_diff import diff_versions, inline
from sandbox_app.core.scenarios.prompt_versions import PromptEntry, VersionError, find
from sandbox_app.core.scenarios.scenario_fields import ScenarioError


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="react-sandbox prompts",
        description="The prompt versions a scenario file has kept (each Run in the window "
        "records the version it used). VERSION: the start of a version's id, or its name.",
    )
    commands = p.add_subparsers(dest="command", required=True, metavar="list|show|diff")
    listing = commands.add_parser("list", help="every version: id, name, time, star, runs")
    listing.add_argument("file", help=f"a scenario file ({STDIN}: standard input)")
    show = commands.add_parser("show", help="one version: its template, dialect and tools")
    show.add_argument("version")
    show.add_argument("file")
    diff = commands.add_parser("diff", help="what changed from A to B, word by word")
    diff.add_argument("a", metavar="A")
    diff.add_argument("b", metavar="B")
    diff.add_argument("file")
    return p


def prompts_command(argv: list[str], out: TextIO | None = None) -> int:
    out = out or sys.stdout
    args = parser().parse_args(argv)
    try:
        history = scenario_from(args.file).prompt_history
        if args.command == "list":
            lines = _list(history) if history else []
            if not history:
                say(f"react-sandbox prompts: {_NONE_YET}")
        elif args.command == "show":
            lines = _show(find(history, args.version))
        else:
            lines = diff_lines(find(history, args.a), find(history, args.b))
    except (ScenarioError, VersionError) as err:
        say(f"react-sandbox prompts: {err}")
        return 1
    out.write("".join(line + "\n" for line in lines))
    return 0


_NONE_YET = "no prompt versions yet (each Run in the window keeps one)"


def _when(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")  # the reader's own time zone


def _list(history: tuple[PromptEntry, ...]) -> list[str]:
    lines = [f"{'id':<8}  {'last used':<16}  {'star':<4}  {'runs':>5}  name"]
    for e in reversed(history):  # the latest first, as a log is read
        star = "★" if e.starred else ""
        lines.append(f"{e.short}  {_when(e.last_used)}  {star:<4}  {e.runs:>5}  {visible(e.name)}")
    return lines


def _show(entry: PromptEntry) -> list[str]:
    v = entry.version
    head = f"version {entry.short}" + (f" ({visible(entry.name)})" if entry.name else "")
    lines = [
        head + (" ★" if entry.starred else ""),
        f"id: {entry.id}",
        f"first run {_when(entry.time)} · last {_when(entry.last_used)} · {entry.runs} runs",
    ]
    if entry.note:
        lines.append(f"note: {visible(entry.note)}")
    lines.append(f"dialect: {visible(v.dialect)} · tool calling: {visible(v.tool_calling)}")
    lines.append("tools:" if v.tools else "tools: none")
    lines += [visible(f"  {t.name} [{t.input_hint}]: {t.description}") for t in v.tools]
    lines += ["template:", visible(v.template)]
    return lines


def diff_lines(a: PromptEntry, b: PromptEntry) -> list[str]:
    """What changed from version A to B, word by word (`prompts diff`, `optimize`'s winner)."""
    changes = diff_versions(a.version, b.version)
    lines = [f"{a.short} → {b.short}"]
    if changes.same:
        return [*lines, "the two versions are the same"]
    lines += [visible(change) for change in changes.named]
    for part in changes.changed_parts:
        lines += [f"{visible(part.label)}:", inline(part.pieces, visible)]
    return lines
