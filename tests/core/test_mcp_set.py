"""The one MCP connection set the window and ``react-sandbox run --mcp`` share
(application/mcp_set.py), without Qt: real servers (tests/mcp_test_server.py) connected,
renamed, dropped, kept, closed, and one that dies reported through ``on_end`` from the network
loop's thread."""

from __future__ import annotations

import asyncio
import sys
import threading
from dataclasses import replace
from typing import Any

import pytest

from sandbox_app.application.mcp_set import CONNECTING, McpSet, own_tool_names
from sandbox_app.backends.mcp_client.mcp_tools import McpConnection, McpError
from sandbox_app.core.tools.mcp_server import McpServerSpec
from tests.core.test_mcp import SERVER
from tests.helpers import builtin

CLASH = McpServerSpec("evaltools", sys.executable, (str(SERVER), "--clash"), timeout_s=5.0)
PLAIN = McpServerSpec("test", sys.executable, (str(SERVER),), timeout_s=5.0)
RENAMED = "Tool calculator of evaltools is offered as evaltools_calculator (calculator is taken)."


def test_connect_rename_ignore_a_second_connect_drop_keep_only_and_close_all() -> None:
    changes: list[bool] = []
    notices: list[str] = []
    own = own_tool_names(builtin("brightgrid"))  # the built-ins: calculator is taken

    async def session() -> dict[str, Any]:
        started = asyncio.Event()

        def changed(tools_changed: bool) -> None:
            changes.append(tools_changed)
            if mcp.connecting("evaltools"):
                started.set()

        mcp = McpSet(on_change=changed, on_notice=notices.append)
        seen: dict[str, Any] = {}
        try:
            first = asyncio.create_task(mcp.connect_server(CLASH, own))
            await asyncio.wait_for(started.wait(), 10)  # it says "connecting…"
            await mcp.connect_server(CLASH, own)  # one is under way: this returns at once
            seen["during second"] = mcp.status["evaltools"]
            await first
            seen["evaltools"] = mcp.status["evaltools"]
            by_name = {t.name: t for t in mcp.tools}
            seen["sum"] = await by_name["evaltools_calculator"].run("two plus two")
            # Another server's tools are taken too: its capital is offered as test_capital.
            await mcp.connect_server(PLAIN, own)
            seen["test"] = mcp.status["test"]
            seen["names"] = sorted(t.name for t in mcp.tools)
            seen["capital"] = await {t.name: t for t in mcp.tools}["test_capital"].run("Japan")
            capital = by_name["capital"]
            mcp.trust_hints(CLASH, True)
            seen["trusted"] = capital.read_only
            await mcp.drop_server("evaltools")
            seen["after drop"] = (mcp.names(), sorted(mcp.status), "capital" in mcp.tools)
            seen["dropped call"] = await capital.run("France")
            await mcp.connect_server(CLASH, own)
            await mcp.keep_only([CLASH])  # "test" was removed from the list
            seen["after keep_only"] = (mcp.names(), sorted(mcp.status))
            kept = mcp.tools[0]
        finally:
            await mcp.close_all()
        seen["after close_all"] = (mcp.names(), mcp.status, mcp.tools)
        seen["closed call"] = await kept.run("x")
        return seen

    seen = asyncio.run(session())
    assert seen["during second"] == CONNECTING
    assert seen["evaltools"] == f"connected: 8 tools\n{RENAMED}"
    assert seen["sum"] == "four"
    # Every tool of the second server is named like one of the first's: each is renamed.
    test_lines = seen["test"].splitlines()
    assert test_lines[0] == "connected: 7 tools"
    assert "Tool capital of test is offered as test_capital (capital is taken)." in test_lines
    assert {"test_capital", "capital"} <= set(seen["names"])
    assert seen["capital"] == "Tokyo"
    assert seen["trusted"] is True  # its server's read-only hint, believed once trusted
    assert seen["after drop"] == (["test"], ["test"], False)
    assert seen["dropped call"] == "Error: MCP server evaltools was closed."
    assert seen["after keep_only"] == (["evaltools"], ["evaltools"])
    assert seen["after close_all"] == ([], {}, [])
    assert str(seen["closed call"]).startswith("Error: MCP server evaltools was closed")
    # Each renamed tool is said once each time its server connects (evaltools twice here),
    # never for the connect that was ignored; every change told the holder.
    assert notices == [RENAMED, *test_lines[1:], RENAMED]
    assert set(changes) == {True, False}  # the tools changed, or only a status did


def test_a_server_that_dies_is_reported_through_on_end() -> None:
    async def session() -> tuple[list[bool], str, bool, bool, str, bool]:
        loop = asyncio.get_running_loop()
        told = asyncio.Event()
        on_network_thread: list[bool] = []
        ended: list[McpConnection] = []

        def on_end(connection: McpConnection) -> None:
            on_network_thread.append(threading.current_thread() is not threading.main_thread())
            ended.append(connection)
            # The holder takes it to its own thread, as the window does with a queued signal.
            loop.call_soon_threadsafe(lambda: (mcp.ended(connection), told.set()))

        mcp = McpSet(on_end=on_end, reconnect_hint="reconnect it.")
        try:
            await mcp.connect_server(PLAIN)
            await {t.name: t for t in mcp.tools}["die"].run("1")
            await asyncio.wait_for(told.wait(), 10)
            status, gone = mcp.status["test"], mcp.gone("test")
            await mcp.connect_server(PLAIN)  # Reconnect: a new connection, the old end is old
            stale = mcp.ended(ended[0])
            return on_network_thread, status, gone, stale, mcp.status["test"], mcp.gone("test")
        finally:
            await mcp.close_all()

    on_network_thread, status, gone, stale, reconnected, still_gone = asyncio.run(session())
    assert on_network_thread == [True]
    assert status.startswith("⚠ MCP server test (")
    assert status.endswith(") is gone: connection closed; reconnect it.")
    assert gone
    assert not stale
    assert (reconnected, still_gone) == ("connected: 7 tools", False)


def test_connect_all_stops_at_the_first_server_that_fails() -> None:
    """The command line's way: a failure is McpError, the servers before it stay to close."""
    nope = McpServerSpec("nope", "/no/such/program")

    async def session() -> tuple[list[str], str]:
        mcp = McpSet()
        try:
            with pytest.raises(McpError) as info:
                await mcp.connect_all([PLAIN, nope, CLASH])
            return mcp.names(), str(info.value)
        finally:
            await mcp.close_all()

    names, error = asyncio.run(session())
    assert names == ["test"]
    assert (
        error
        == "MCP server nope (/no/such/program) failed: cannot start '/no/such/program' (not found)."
    )


def test_trust_and_a_connection_follow_what_the_server_is_not_its_name() -> None:
    """A file naming another program like the trusted one gets neither the old connection nor
    its trust: the trusted "hostile" is this test server; the next file's "hostile" is the same
    server with --hostile, whose wipe says it is read-only and is not."""
    trusted = McpServerSpec("hostile", sys.executable, (str(SERVER),), timeout_s=5.0)
    other = McpServerSpec("hostile", sys.executable, (str(SERVER), "--hostile"), timeout_s=5.0)

    async def session() -> dict[str, Any]:
        mcp = McpSet()
        seen: dict[str, Any] = {}
        try:
            await mcp.connect_server(trusted)
            mcp.trust_hints(trusted, True)
            old = {t.name: t for t in mcp.tools}
            seen["trusted capital"] = old["capital"].read_only
            # The same program under another name is the same server: trusted too.
            seen["renamed"] = mcp.trusts(replace(trusted, name="geo"))
            seen["other env"] = mcp.trusts(replace(trusted, env={"MODE": "write"}))
            await mcp.keep_only([other])  # the next file: same name, another program
            seen["after"] = (mcp.names(), dict(mcp.status), mcp.tools)
            seen["old call"] = await old["capital"].run("France")
            seen["trusts"] = (mcp.trusts(trusted), mcp.trusts(other))
            await mcp.connect_server(other)
            new = {t.name: t for t in mcp.tools}
            seen["new hints"] = (new["wipe"].read_only, new["capital"].read_only)
            # Trusting the old program (its form, before OK) leaves this one asking.
            mcp.trust_hints(trusted, True)
            seen["still asks"] = new["wipe"].read_only
            # A connect under way for a server the list no longer names is dropped when done.
            task = asyncio.create_task(mcp.connect_server(trusted))
            await asyncio.sleep(0)  # the task starts: its connect is under way
            seen["was connecting"] = mcp.connecting("hostile")
            await mcp.keep_only([other])
            await task
            seen["abandoned"] = (mcp.names(), dict(mcp.status))
        finally:
            await mcp.close_all()
        return seen

    seen = asyncio.run(session())
    assert seen["trusted capital"] is True
    assert (seen["renamed"], seen["other env"]) == (True, False)
    assert seen["after"] == ([], {}, [])
    assert str(seen["old call"]).startswith("Error: MCP server hostile was closed")
    assert seen["trusts"] == (False, False)  # the old one's trust went with it
    assert seen["new hints"] == (False, False)  # the new program's hints ask again
    assert seen["still asks"] is False
    assert seen["was connecting"] is True
    assert seen["abandoned"] == ([], {})
