"""Third-party tools: Python distributions that register in the entry-point group
``react_sandbox.tools``, each entry naming a class (made with no arguments), a function that
returns a tool, or a tool object, that follows :class:`~sandbox_app.core.tools.base.Tool`.

They are found once per process. One that fails to import, to build, or to follow the
protocol is skipped with one line saying why (the window's status bar, the CLI's stderr);
one that raises when called reaches the model as an error observation, like any tool.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib.metadata import entry_points

from sandbox_app.core.tools.base import Tool
from sandbox_app.core.tools.mock import NAME
from sandbox_app.core.tools.outside import checked

GROUP = "react_sandbox.tools"
BUILT_IN = ("calculator", "search", "finish")


@dataclass(frozen=True)
class Plugins:
    tools: tuple[Tool, ...]
    problems: tuple[str, ...]  # one line per plugin skipped


@functools.cache
def installed() -> Plugins:
    tools: list[Tool] = []
    problems: list[str] = []
    names = set(BUILT_IN)
    for entry in entry_points(group=GROUP):
        try:
            # checked: its name and description as the app may show and send them (outside.py)
            tool = checked(_checked(_made(entry.load()), names))
        except Exception as err:  # whatever a third party's import or constructor raises
            why = str(err) if isinstance(err, NotATool) else f"{type(err).__name__}: {err}"
            line = f"Plugin {entry.name!r} ({entry.value}) was skipped: {why}"
            problems.append(line.splitlines()[0][:200])
            continue
        names.add(tool.name)
        tools.append(tool)
    return Plugins(tuple(tools), tuple(problems))


def _made(found: object) -> object:
    """A class is made with no arguments, a function called; a tool object is itself. (A
    class with the protocol's attributes passes isinstance(…, Tool) too: checked first.)"""
    if isinstance(found, type):
        return found()
    if not isinstance(found, Tool) and callable(found):
        return found()
    return found


class NotATool(Exception):
    """What an entry point gave is no usable tool; the message says why."""


def _checked(tool: object, taken: set[str]) -> Tool:
    if not isinstance(tool, Tool):
        raise NotATool(
            "it is not a tool (name, description, input_hint, read_only, max_input, run)."
        )
    if not isinstance(tool.name, str) or not NAME.fullmatch(tool.name):
        raise NotATool(f"its name {tool.name!r} is not a word of letters, digits and _.")
    if tool.name in taken:
        raise NotATool(f"another tool is named {tool.name!r}.")
    return tool
