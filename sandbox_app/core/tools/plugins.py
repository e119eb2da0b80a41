"""Third-party tools: Python distributions that register in the entry-point group
``react_sandbox.tools``, each entry naming a class (made with no arguments), a function that
returns a tool, or a tool object, that follows :class:`~sandbox_app.core.tools.base.Tool`.

A plugin is someone else's code running in the app, so it is kept at arm's length:

- They are found once per process. One that fails to import or to build — with any exception,
  ``SystemExit`` included (an ``argparse`` at module level exits when imported) — is skipped
  with one line saying why (the window's status bar, the CLI's stderr). Only Ctrl+C
  (``KeyboardInterrupt``) goes through.
- Every attribute is checked for its type when found (:func:`_validated`), and the tool that
  runs is a :class:`PluginTool` holding those checked values, never the plugin's object: a
  ``max_input = "100"`` is one skipped line, not a crash in the middle of a run.
- ``parameters``, when it has them, must be a JSON schema of an object (checked by the
  ``jsonschema`` package against its draft's meta-schema, :func:`schema_problem`), as native
  tool calling sends them to the model and the router reads an input by them.
- What ``run`` does is made an observation: a result that is not text, or any exception it
  raises, reaches the model as one ``Error:`` line, like any tool's.
- A ``run`` that is an ordinary function (not ``async def``) runs on a thread of its own
  (:func:`_on_a_thread`), never on the event loop, which is the window's: a plugin that sleeps
  or reads a socket without asyncio would freeze the window and leave Stop and the router's
  time limit unable to act. Both end the wait at once; Python cannot stop a thread, so it
  finishes in the background (a daemon thread: never holding up the app's exit) and what it
  returns then is dropped.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.machinery import PathFinder
from typing import TYPE_CHECKING, Any

from sandbox_app.core.tools.base import Tool
from sandbox_app.core.tools.mock import NAME
from sandbox_app.core.tools.outside import checked
from sandbox_app.lazy_import import lazy_import

if TYPE_CHECKING:
    import asyncio
    from importlib.metadata import EntryPoint
else:
    asyncio = lazy_import("asyncio")

GROUP = "react_sandbox.tools"
BUILT_IN = ("calculator", "search", "finish")


@dataclass(frozen=True)
class Plugins:
    tools: tuple[Tool, ...]
    problems: tuple[str, ...]  # one line per plugin skipped


def entry_points(group: str) -> Sequence[EntryPoint]:
    """The entry points registered in ``group``, by importlib.metadata.

    Importing importlib.metadata costs ~20 ms (its e-mail header parser), paid before the
    window's first frame; with no plugin installed (the usual case) nothing needs it, which
    :func:`_may_declare` tells from the files alone.
    """
    if not _may_declare(group):
        return ()
    from importlib.metadata import entry_points as registered

    return tuple(registered(group=group))


def _may_declare(group: str) -> bool:
    """False only when certainly no distribution on ``sys.path`` registers in ``group``:
    none of their ``entry_points.txt`` files names it. Anything this look does not cover (a
    zip or egg on the path, a file it cannot read, a finder of another kind that lists
    distributions) answers True, and importlib.metadata decides."""
    for finder in sys.meta_path:
        if finder is not PathFinder and hasattr(finder, "find_distributions"):
            return True
    for entry in sys.path:
        folder = entry or "."
        if not os.path.isdir(folder):
            if os.path.exists(folder):
                return True  # a zip or an egg file
            continue
        if folder.lower().endswith(".egg"):
            return True
        try:
            with os.scandir(folder) as children:
                metadata = [c.path for c in children if c.name.lower().endswith(_METADATA)]
        except OSError:
            return True
        for path in metadata:
            listed = os.path.join(path, "entry_points.txt")
            try:
                with open(listed, encoding="utf-8", errors="replace") as file:
                    if group in file.read():
                        return True
            except (FileNotFoundError, NotADirectoryError):  # none, or an egg-info file
                continue
            except OSError:
                return True
    return False


_METADATA = (".dist-info", ".egg-info")  # as importlib.metadata finds them, in lower case


@functools.cache
def installed() -> Plugins:
    tools: list[Tool] = []
    problems: list[str] = []
    names = set(BUILT_IN)
    for entry in entry_points(group=GROUP):
        stage = "loading it"
        try:
            found = entry.load()
            stage = "making its tool"
            made = _made(found)
            stage = "checking it"
            # checked: its name and description as the app may show and send them (outside.py)
            tool = checked(_validated(made, names))
        except KeyboardInterrupt:
            raise
        except NotATool as err:
            why = str(err)
        # A third party's import or constructor may raise anything, SystemExit included.
        except BaseException as err:
            why = f"{type(err).__name__} while {stage}: {err}"
        else:
            names.add(tool.name)
            tools.append(tool)
            continue
        line = f"Plugin {entry.name!r} ({entry.value}) was skipped: {why}"
        problems.append(_one_line(line))
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


def _is_name(value: object) -> bool:
    return isinstance(value, str) and NAME.fullmatch(value) is not None


def _is_text(value: object) -> bool:
    return isinstance(value, str)


def _is_flag(value: object) -> bool:
    return isinstance(value, bool)


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _is_time_limit(value: object) -> bool:
    if value is None:
        return True
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return number and 0 < value < math.inf  # type: ignore[operator]


def _is_schema(value: object) -> bool:
    return isinstance(value, dict)


# What each attribute must be: its check and the words for the message when it fails.
_ATTRIBUTES: dict[str, tuple[Callable[[object], bool], str]] = {
    "name": (_is_name, "a word of letters, digits and _ (at most 40), not starting with a digit"),
    "description": (_is_text, "text"),
    "input_hint": (_is_text, "text"),
    "read_only": (_is_flag, "True or False"),
    "max_input": (_is_count, "a positive whole number"),
    "run": (callable, "a function (async def run(self, input: str) -> str)"),
}
# Optional: the router and native tool calling read them with getattr when present.
_OPTIONAL: dict[str, tuple[Callable[[object], bool], str]] = {
    "timeout_s": (_is_time_limit, "None or a positive number of seconds"),
    "parameters": (_is_schema, "a JSON schema (a dict)"),  # and schema_problem's checks
}
_MISSING = object()


def _validated(tool: object, taken: set[str]) -> PluginTool:
    """The plugin's tool as a :class:`PluginTool`, every attribute read once and checked;
    :class:`NotATool` naming the first attribute that is missing or of the wrong type."""
    values: dict[str, Any] = {}
    for attribute, (ok, wanted) in (*_ATTRIBUTES.items(), *_OPTIONAL.items()):
        value = getattr(tool, attribute, _MISSING)
        if value is _MISSING and attribute in _OPTIONAL:
            continue
        if value is _MISSING:
            raise NotATool(f"it has no {attribute!r} (a tool has {', '.join(_ATTRIBUTES)}).")
        if not ok(value):
            raise NotATool(f"its {attribute!r} must be {wanted} (got {_shown(value)}).")
        values[attribute] = value
    if "parameters" in values and (problem := schema_problem(values["parameters"])):
        raise NotATool(f"its 'parameters' is not a JSON schema of an object: {problem}.")
    if values["name"] in taken:
        raise NotATool(f"another tool is named {values['name']!r}.")
    return PluginTool(**values)


def schema_problem(schema: dict[str, Any]) -> str:
    """What keeps ``schema`` from being a tool's parameters ("" when nothing): invalid by its
    JSON Schema draft's meta-schema (``$schema``, else the latest), or not an object's."""
    from jsonschema import SchemaError
    from jsonschema.validators import validator_for

    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as err:
        return f"at {err.json_path}, {err.message}"
    if schema.get("type", "object") != "object":
        return f"its type is {_shown(schema['type'])}, not 'object' (a tool's input is an object)"
    return ""


class PluginTool:
    """A plugin's tool as the app uses it: checked values, and a ``run`` whose result or
    exception always becomes one line of text."""

    def __init__(
        self,
        name: str,
        description: str,
        input_hint: str,
        read_only: bool,
        max_input: int,
        run: Callable[[str], Any],
        **optional: Any,  # timeout_s, parameters: set only when the plugin has them
    ) -> None:
        self.name = name
        self.description = description
        self.input_hint = input_hint
        self.read_only = read_only
        self.max_input = max_input
        self._run = run
        # An ordinary function runs on a thread (_on_a_thread); a coroutine function, or a
        # callable object whose call gives an awaitable, is awaited on the loop.
        self._blocking = not inspect.iscoroutinefunction(run)
        for attribute, value in optional.items():
            setattr(self, attribute, value)

    async def run(self, input: str) -> str:
        try:
            result = await _on_a_thread(self._run, input) if self._blocking else self._run(input)
            if inspect.isawaitable(result):
                result = await result
        except (KeyboardInterrupt, GeneratorExit):
            raise
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():  # Stop, or the router's time limit
                raise
            return self._error("raised CancelledError")
        # Someone else's code: SystemExit from an argparse, anything at all.
        except BaseException as err:
            return self._error(f"raised {type(err).__name__}: {err}")
        if not isinstance(result, str):
            return self._error(f"returned {_shown(result)}, not text")
        return result

    def _error(self, what: str) -> str:
        return _one_line(f"Error: the plugin tool {self.name} {what}.")


async def _on_a_thread(run: Callable[[str], Any], input: str) -> Any:
    """``run(input)`` on a daemon thread of its own, the loop free meanwhile; what it returns,
    or raises, here. Cancelled (Stop, the router's time limit), the wait ends at once and the
    thread's later result is dropped."""
    import threading

    loop = asyncio.get_running_loop()
    answered: asyncio.Future[tuple[Any, BaseException | None]] = loop.create_future()

    def settle(outcome: tuple[Any, BaseException | None]) -> None:
        if not answered.done():  # else cancelled: nobody waits for it any more
            answered.set_result(outcome)

    def work() -> None:
        # Any exception (SystemExit too) is carried back to be one error line, never left
        # to end the thread unsaid.
        try:
            outcome: tuple[Any, BaseException | None] = (run(input), None)
        except BaseException as err:
            outcome = (None, err)
        with contextlib.suppress(RuntimeError):  # the loop has closed since
            loop.call_soon_threadsafe(settle, outcome)

    threading.Thread(target=work, name="plugin tool", daemon=True).start()
    result, err = await answered
    if err is not None:
        raise err
    return result


def _shown(value: object) -> str:
    """A value as a message quotes it: its repr, short (a plugin's repr may itself fail)."""
    try:
        text = repr(value)
    except Exception:
        text = f"a {type(value).__name__}"
    return text if len(text) <= 60 else f"{text[:57]}…"


def _one_line(text: str) -> str:
    return " ".join(text.split())[:300]
