"""Per-tool policy: run on its own (auto), ask the user each time (ask), or never (deny).

Reading information is usually fine; sending emails, making payments or deleting things is
not, unless a person approves it. So a read-only tool defaults to auto and
any other to ask, and a side-effecting tool runs without asking only when the user trusted it
here and now (a confirmation that names the risk in the window, ``--allow TOOL`` in the CLI):
a scenario file, perhaps someone else's, cannot pre-approve side effects by saying auto.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from sandbox_app.core.tools.base import Tool

Policy = Literal["auto", "ask", "deny"]
POLICIES: tuple[Policy, ...] = ("auto", "ask", "deny")


def default_policy(tool: Tool) -> Policy:
    return "auto" if tool.read_only else "ask"


def effective_policy(tool: Tool, chosen: Policy | None, trusted: Collection[str]) -> Policy:
    """What the router does with a call of ``tool``."""
    policy = chosen or default_policy(tool)
    if policy == "auto" and not tool.read_only and tool.name not in trusted:
        return "ask"
    return policy


@dataclass(frozen=True)
class Allowance:
    """What ``--allow TOOL`` (``run`` and ``eval``) makes of a scenario's policies."""

    policies: dict[str, Policy]  # each allowed tool's is auto
    trusted: frozenset[str]  # the allowed tools: auto holds for them though they have effects
    refused: tuple[str, ...]  # allowed, but the scenario denies them: they stay denied


def allow(policies: Mapping[str, Policy], names: Iterable[str]) -> Allowance:
    """The user's explicit word for this run: each named tool runs unasked, whatever its
    default. A deny in the scenario is the one exception: the file's author ruled the tool
    out, and a command-line flag does not quietly overrule that (the caller says so)."""
    wanted = list(dict.fromkeys(names))
    refused = tuple(name for name in wanted if policies.get(name) == "deny")
    granted = frozenset(wanted) - set(refused)
    auto: dict[str, Policy] = {name: "auto" for name in granted}
    return Allowance({**policies, **auto}, granted, refused)


def refused_line(tool: str) -> str:
    return f"--allow {tool}: the scenario denies {tool} (its policy is deny), so it stays denied"


def asking(
    tools: Iterable[Tool], policies: Mapping[str, Policy], trusted: Collection[str]
) -> list[Tool]:
    """The tools whose every call needs a person's approval: with no one to ask, declined."""
    return [t for t in tools if effective_policy(t, policies.get(t.name), trusted) == "ask"]


def denied(tool: str) -> str:
    return f"Error: {tool} may not be used in this run (its policy is deny)."
