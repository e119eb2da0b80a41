"""Per-tool policy: run on its own (auto), ask the user each time (ask), or never (deny).

Reading information is usually fine; sending emails, making payments or deleting things is
not, unless a person approves it. So a read-only tool defaults to auto and
any other to ask, and a side-effecting tool runs without asking only when the user trusted it
here and now (a confirmation that names the risk in the window, ``--allow TOOL`` in the CLI):
a scenario file, perhaps someone else's, cannot pre-approve side effects by saying auto.
"""

from __future__ import annotations

from collections.abc import Collection
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


def denied(tool: str) -> str:
    return f"Error: {tool} may not be used in this run (its policy is deny)."
