"""Python plugins: a real installed distribution registering a tool in the entry-point group
``react_sandbox.tools`` (tests/plugin_example), found and run; broken and badly behaved ones
(tests/plugin_hostile: SystemExit at import or construction, an attribute of the wrong type,
a run() that exits or returns a number) skipped with one line or answered with one error."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.core.scenarios.scenario_file import save_scenario
from sandbox_app.core.tools import ToolRouter, plugins
from tests.helpers import builtin
from tests.plugin_install import plugin_site  # noqa: F401  (a fixture)

SKIPPED = {
    "Plugin 'broken' (react_sandbox_weather:missing_name) was skipped: AttributeError while "
    "loading it: module 'react_sandbox_weather' has no attribute 'missing_name'",
    "Plugin 'exits_at_import' (react_sandbox_hostile.exits_at_import:Tool) was skipped: "
    "SystemExit while loading it: 2",
    "Plugin 'exits_when_built' (react_sandbox_hostile.flawed:ExitsWhenBuilt) was skipped: "
    "SystemExit while making its tool: no configuration file",
    "Plugin 'string_limit' (react_sandbox_hostile.flawed:StringLimit) was skipped: its "
    "'max_input' must be a positive whole number (got '100').",
    "Plugin 'not_a_schema' (react_sandbox_hostile.blocking:NotASchema) was skipped: its "
    "'parameters' is not a JSON schema of an object: at $.properties, 'oops' is not of type "
    "'object'.",
}


@pytest.fixture
def installed_plugins(
    plugin_site: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[plugins.Plugins]:
    monkeypatch.syspath_prepend(str(plugin_site))
    plugins.installed.cache_clear()
    try:
        yield plugins.installed()
    finally:
        plugins.installed.cache_clear()


def test_an_installed_plugin_is_found_and_broken_ones_skipped_with_one_line_each(
    installed_plugins: plugins.Plugins,
) -> None:
    assert sorted(tool.name for tool in installed_plugins.tools) == [
        "exits_when_run",
        "returns_a_number",
        "sleeps",
        "weather",
    ]
    assert set(installed_plugins.problems) == SKIPPED
    assert len(installed_plugins.problems) == len(SKIPPED)


def test_what_a_plugins_run_does_wrong_is_one_error_observation(
    installed_plugins: plugins.Plugins,
) -> None:
    router = ToolRouter(installed_plugins.tools)

    async def observations() -> list[str]:
        return [
            (await router.run_tool(name, "Paris")).text
            for name in ("weather", "exits_when_run", "returns_a_number")
        ]

    assert asyncio.run(observations()) == [
        "18 °C, clear",
        "Error: the plugin tool exits_when_run raised SystemExit: 3.",
        "Error: the plugin tool returns_a_number returned 42, not text.",
    ]


def test_the_cli_runs_a_plugin_tool_and_says_which_were_skipped(
    plugin_site: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    scenario = builtin("brightgrid").with_changes(
        enabled_tools=("search", "weather"),
        script=builtin("brightgrid").script.__class__(
            replies=("Action: weather[Paris]", "Answer: 18 °C"), tokens_per_second=0
        ),
    )
    path = tmp_path / "weather.json"
    save_scenario(scenario, path)
    env = {**os.environ, "PYTHONPATH": str(plugin_site), "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "sandbox_app", "run", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    # A plugin that exits when imported (argparse at module level) does not stop the app.
    assert done.returncode == 0, done.stderr
    assert "Observation: 18 °C, clear" in done.stdout
    for line in SKIPPED:
        assert line in done.stderr
    assert "weather[city]: Today's weather for a city." not in done.stderr


# In-process plugins, found through real entry points that name objects in this module.
class Good:
    name = "good"
    description = "A tool that answers."
    input_hint = "input"
    read_only = True
    max_input = 100

    async def run(self, input: str) -> str:
        return f"got {input}"


def _variant(**changes: Any) -> object:
    tool = Good()
    for attribute, value in changes.items():
        setattr(tool, attribute, value)
    return tool


class NoRun:
    name = "no_run"
    description = "No run at all."
    input_hint = "input"
    read_only = True
    max_input = 100


class ExplodingName(Good):
    @property
    def name(self) -> str:  # type: ignore[override]
        raise SystemExit("reading the name exits")


BAD_NAME = _variant(name=3)
SPACED_NAME = _variant(name="two words")
NO_DESCRIPTION = _variant(description=None)
NUMBER_HINT = _variant(input_hint=5)
WORDY_FLAG = _variant(read_only="yes")
ZERO_LIMIT = _variant(max_input=0)
TRUE_LIMIT = _variant(max_input=True)
TEXT_RUN = _variant(run="run")
TEXT_TIMEOUT = _variant(timeout_s="10")
LIST_SCHEMA = _variant(parameters=[])
TEXT_SCHEMA = _variant(parameters={"type": "string"})
NO_SCHEMA = _variant(parameters={"type": "object", "required": "city"})
NAMED_LIKE_A_BUILT_IN = _variant(name="calculator")


def _found(monkeypatch: pytest.MonkeyPatch, *objects: str) -> plugins.Plugins:
    entries = [EntryPoint(o.lower(), f"{__name__}:{o}", plugins.GROUP) for o in objects]
    monkeypatch.setattr(plugins, "entry_points", lambda group: entries)
    plugins.installed.cache_clear()
    try:
        return plugins.installed()
    finally:
        plugins.installed.cache_clear()


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ("BAD_NAME", "its 'name' must be a word of letters, digits and _"),
        ("SPACED_NAME", "its 'name' must be a word of letters, digits and _"),
        ("NO_DESCRIPTION", "its 'description' must be text (got None)."),
        ("NUMBER_HINT", "its 'input_hint' must be text (got 5)."),
        ("WORDY_FLAG", "its 'read_only' must be True or False (got 'yes')."),
        ("ZERO_LIMIT", "its 'max_input' must be a positive whole number (got 0)."),
        ("TRUE_LIMIT", "its 'max_input' must be a positive whole number (got True)."),
        ("TEXT_RUN", "its 'run' must be a function"),
        ("TEXT_TIMEOUT", "its 'timeout_s' must be None or a positive number of seconds"),
        ("LIST_SCHEMA", "its 'parameters' must be a JSON schema (a dict) (got [])."),
        (
            "TEXT_SCHEMA",
            "its 'parameters' is not a JSON schema of an object: its type is 'string', not "
            "'object' (a tool's input is an object).",
        ),
        (
            "NO_SCHEMA",
            "its 'parameters' is not a JSON schema of an object: at $.required, 'city' is not "
            "of type 'array'.",
        ),
        ("NoRun", "it has no 'run'"),
        ("NAMED_LIKE_A_BUILT_IN", "another tool is named 'calculator'."),
        ("ExplodingName", "SystemExit while checking it: reading the name exits"),
    ],
)
def test_a_plugin_with_a_bad_attribute_is_skipped_with_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch, entry: str, why: str
) -> None:
    found = _found(monkeypatch, entry, "Good")
    assert [tool.name for tool in found.tools] == ["good"]
    (line,) = found.problems
    assert line.startswith(f"Plugin '{entry.lower()}' ({__name__}:{entry}) was skipped: {why}")
    assert "\n" not in line


class Hangs(Good):
    name = "hangs"
    timeout_s = 0.05

    async def run(self, input: str) -> str:
        await asyncio.Event().wait()
        return "never"


class RaisesCancelled(Good):
    name = "raises_cancelled"

    async def run(self, input: str) -> str:
        raise asyncio.CancelledError


class Interrupted(Good):
    name = "interrupted"

    async def run(self, input: str) -> str:
        raise KeyboardInterrupt


def test_a_plugins_own_time_limit_still_stops_it_and_its_own_cancelled_error_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    router = ToolRouter(_found(monkeypatch, "Hangs", "RaisesCancelled").tools)

    async def observations() -> list[str]:
        return [(await router.run_tool(n, "x")).text for n in ("hangs", "raises_cancelled")]

    assert asyncio.run(observations()) == [
        "Error: tool timed out",
        "Error: the plugin tool raises_cancelled raised CancelledError.",
    ]


def test_ctrl_c_inside_a_plugin_still_stops_the_app(monkeypatch: pytest.MonkeyPatch) -> None:
    router = ToolRouter(_found(monkeypatch, "Interrupted").tools)
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(router.run_tool("interrupted", "x"))


def test_a_plugins_synchronous_run_waits_on_a_thread_so_stop_and_the_time_limit_act(
    installed_plugins: plugins.Plugins,
) -> None:
    """tests/plugin_hostile's sleeps blocks for as many seconds as it is told, with an ordinary
    ``def run``. On the event loop it would hold everything (the window's loop) for 30 s:
    on its own thread the time limit answers, Stop ends the wait, the loop ticks meanwhile,
    and the thread finishes in the background."""
    router = ToolRouter(installed_plugins.tools, timeout=0.5)

    def sleeping() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "plugin tool" and t.is_alive()]

    async def session() -> dict[str, Any]:
        seen: dict[str, Any] = {"quick": (await router.run_tool("sleeps", "0")).text}
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticker = asyncio.create_task(tick())
        seen["timed out"] = (await router.run_tool("sleeps", "30")).text
        seen["ticked"] = ticks
        asleep = set(sleeping())  # the timed-out call's thread among them, still asleep
        stopped = asyncio.create_task(router.run_tool("sleeps", "30"))
        await asyncio.sleep(0)  # one turn of the loop: the call has started its thread
        (thread,) = set(sleeping()) - asleep
        stopped.cancel()  # Stop
        seen["stop"] = await asyncio.gather(stopped, return_exceptions=True)
        seen["still sleeping"] = (bool(asleep), thread.is_alive())
        ticker.cancel()
        return seen

    seen = asyncio.run(session())
    assert seen["quick"] == "slept 0 s"
    assert seen["timed out"] == "Error: tool timed out"
    assert seen["ticked"] > 0  # the loop went on while the plugin slept
    assert isinstance(seen["stop"][0], asyncio.CancelledError)
    assert seen["still sleeping"] == (True, True)  # both finish in the background, unwaited


class SyncExits(Good):
    name = "sync_exits"

    def run(self, input: str) -> str:  # type: ignore[override]
        raise SystemExit(4)


class SyncAwaitable(Good):
    name = "sync_awaitable"

    def run(self, input: str) -> Any:  # type: ignore[override]
        return Good().run(input)  # an ordinary function handing back a coroutine


def test_what_a_synchronous_run_raises_or_hands_back_reaches_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    router = ToolRouter(_found(monkeypatch, "SyncExits", "SyncAwaitable").tools)

    async def observations() -> list[str]:
        return [(await router.run_tool(n, "x")).text for n in ("sync_exits", "sync_awaitable")]

    assert asyncio.run(observations()) == [
        "Error: the plugin tool sync_exits raised SystemExit: 4.",
        "got x",
    ]
