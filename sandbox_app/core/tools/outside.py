"""Names and descriptions of tools that come from outside the app (MCP servers, plugins),
checked where they enter.

A tool's name becomes a toggle in the window, a policy key and a line of the system prompt's
``{tools}``; its description is written into every request and shown as a tooltip. So a name
must be a safe word (letters, digits, ``_ - .``, at most 64 characters: what the model can
write back in an action), or the tool is skipped with one line; a description loses its
control characters (a newline in it would start a line of its own in the prompt) and is
capped, so one server cannot make every request a megabyte.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from sandbox_app.core.tools.base import Tool

NAME = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
MAX_DESCRIPTION = 1_000
_SPACES = re.compile(r"\s+")


def name_problem(name: object) -> str:
    """Why ``name`` cannot name a tool ("" when it can), in words for a one-line message."""
    if isinstance(name, str) and NAME.fullmatch(name):
        return ""
    shown = repr(name) if not isinstance(name, str) else repr(name[:40])
    return f"its name {shown} is not 1–64 letters, digits, '_', '-' or '.'"


def clean_description(text: object, limit: int = MAX_DESCRIPTION) -> str:
    """One line of printable text, at most ``limit`` characters (cut ones end in "…")."""
    if not isinstance(text, str):
        return ""
    # Control and format characters (Cc, Cf: newlines, escapes, bidi overrides) become spaces.
    printable = "".join(" " if unicodedata.category(c) in ("Cc", "Cf") else c for c in text)
    line = _SPACES.sub(" ", printable).strip()
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


class CheckedTool:
    """A plugin's tool with its description cleaned; everything else is the tool's own (its
    ``run``, ``parameters``, ``timeout_s``…), so the router sees no difference."""

    def __init__(self, tool: Tool) -> None:
        self._tool = tool
        self.name = tool.name
        self.description = clean_description(tool.description)
        self.input_hint = clean_description(tool.input_hint, 200)
        self.read_only = tool.read_only
        self.max_input = tool.max_input

    async def run(self, input: str) -> str:
        return await self._tool.run(input)

    def __getattr__(self, attribute: str) -> Any:  # only for what is not set above
        if attribute == "_tool":  # not set yet (a copy being made): no recursion
            raise AttributeError(attribute)
        return getattr(self._tool, attribute)


def checked(tool: Tool) -> Tool:
    """``tool`` as the app may show and send it; ValueError (one line) if its name is unsafe."""
    problem = name_problem(tool.name)
    if problem:
        raise ValueError(problem + ".")
    return CheckedTool(tool)
