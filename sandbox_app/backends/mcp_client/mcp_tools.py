"""MCP servers as tool sources, through the official SDK (``mcp``): connect, list, call.

A connection lives on the network loop (network_loop.py), in a task of its own that holds the
SDK's session open (the SDK's contexts must be entered and left in one task); a run's calls go
there through ``network_loop.call``, so a slow or stuck server never holds the window. Every
failure is one line: a server that cannot start or be reached, one that dies (it is gone: every
call says so at once, ``on_end`` hears of it), a call that hangs (the server's timeout), a tool
that errors (its own message). The run goes on with the line as the observation.

Over streamable HTTP the SDK sees a dead server at once (the POST cannot connect, its task
group fails and ends the task holding the session) but leaves the request pending forever (the
session's reader is cancelled before it fails its waiters). So a call waits for its answer *or*
the end of that task: the session's own life, exact where a probe of the port is not (another
process may hold the port) and free. A ping every WATCH_EVERY_S finds an idle server gone.

Each listed tool becomes a :class:`McpTool`: its description is the server's (cleaned and
capped, core/tools/outside.py; a tool whose name is not a safe word is skipped with one line in
``skipped``), its input described from its JSON schema. A server's annotations are its own
claims: a tool is side-effecting (the router asks) unless its server says read-only *and* the
user chose to trust that server's hints (``trust_hints``, for the session; never from a file).
In a ``tool[input]`` dialect the model writes a JSON object, or for a tool with one string
parameter the bare string.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, suppress
from dataclasses import dataclass
from typing import Any

from sandbox_app.backends.catalogue.keys import KeyAccount, KeyStore
from sandbox_app.backends.transport import network_loop
from sandbox_app.backends.transport.errors import sentence
from sandbox_app.core.tools.mcp_server import McpServerSpec
from sandbox_app.core.tools.outside import clean_description, name_problem
from sandbox_app.core.untrusted.file_reader import parse_json_text
from sandbox_app.core.untrusted.outside_text import scrub, secrets_of

CONNECT_TIMEOUT_S = 30.0
CLOSE_TIMEOUT_S = 5.0
WATCH_EVERY_S = 10.0  # so the dialog says an idle server is gone before a run's call finds out


class McpError(Exception):
    """One line about a server or a call that failed."""


@dataclass(frozen=True)
class McpToolInfo:
    name: str
    description: str
    schema: dict[str, Any]
    read_only: bool  # what the server claims (readOnlyHint)


def secrets_for(spec: McpServerSpec, keys: KeyStore) -> dict[str, str]:
    """``spec.secret_env`` from the environment or the keyring (account ``mcp:SERVER:VAR``)."""
    found = {}
    for var in spec.secret_env:
        value, _ = keys.resolve(KeyAccount(f"mcp:{spec.name}:{var}", var, preset_host=False))
        if value:
            found[var] = value
    return found


class McpConnection:
    """One server: :meth:`connect` lists its tools, :meth:`call` runs one, :meth:`close`."""

    def __init__(
        self,
        spec: McpServerSpec,
        keys: KeyStore | None = None,
        *,
        trust_hints: bool = False,
        on_end: Callable[[McpConnection], None] | None = None,
        reconnect_hint: str = "",
    ) -> None:
        self.spec = spec
        self.trust_hints = trust_hints  # its read-only hints let tools run unasked
        self.skipped: list[str] = []  # one line per listed tool not offered (an unsafe name)
        self.renamed: list[str] = []  # one line per tool offered under another name
        self.on_end = on_end  # once a connected session ends by itself (network loop's thread)
        self.reconnect_hint = reconnect_hint  # how to bring it back, added to "is gone"
        self._secrets = secrets_for(spec, keys or KeyStore())
        self._keys = secrets_of(*self._secrets.values())  # never in what it says back
        self._session: Any = None
        self._task: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self.ended = ""  # why the session ended, once it has
        self.gone = False  # it ended by itself after connecting (not closed, never failed)

    async def connect(self, taken: Iterable[str] = ()) -> list[McpTool]:
        """Start or reach the server and list its tools. A tool named like one in ``taken``
        (the built-ins, the scenario's own, plugins', other servers') is offered as
        ``SERVER_NAME``, and called by its own name."""
        infos = await network_loop.call(self._connect())
        used = {name.casefold() for name in taken}
        tools = []
        self.skipped, self.renamed = [], []
        for info in infos:
            problem = name_problem(info.name)
            if problem:
                self.skipped.append(f"A tool of {self.spec.name} was skipped: {problem}.")
                continue
            tool = McpTool(self, info)
            if tool.name.casefold() in used:
                tool.name = f"{self.spec.name}_{info.name}"
                self.renamed.append(
                    f"Tool {info.name} of {self.spec.name} is offered as {tool.name} "
                    f"({info.name} is taken)."
                )
            used.add(tool.name.casefold())
            tools.append(tool)
        return tools

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """The call's text and whether the tool said it failed; McpError for the server."""
        try:
            text, failed = await network_loop.call(self._call(tool, arguments))
        except McpError as err:
            raise McpError(scrub(str(err), self._keys)) from None
        return scrub(text, self._keys), failed

    async def close(self) -> None:
        await network_loop.call(self._close())

    # ---- on the network loop ------------------------------------------------------------

    async def _connect(self) -> list[McpToolInfo]:
        ready: asyncio.Future[list[McpToolInfo]] = asyncio.get_running_loop().create_future()
        self._closing = asyncio.Event()
        self._task = asyncio.create_task(self._hold(ready, self._closing))
        try:
            return await asyncio.wait_for(asyncio.shield(ready), CONNECT_TIMEOUT_S)
        except TimeoutError:
            await self._close()
            raise McpError(
                f"MCP server {self.spec.name} ({self.spec.where}) did not answer within "
                f"{CONNECT_TIMEOUT_S:g} s."
            ) from None

    async def _hold(self, ready: asyncio.Future[list[McpToolInfo]], closing: asyncio.Event) -> None:
        from mcp import ClientSession

        try:
            async with self._transport() as streams, ClientSession(streams[0], streams[1]) as s:
                await s.initialize()
                listed = await s.list_tools()
                self._session = s
                ready.set_result([_info(tool) for tool in listed.tools])
                await self._watch(s, closing)
        except Exception as err:  # whatever the transport or the server does
            if not ready.done():
                self.ended = self._failed(err)
                ready.set_exception(McpError(self.ended))
            else:  # it was connected: gone
                self._end(err)
        finally:
            self._session = None
            if not self.ended:
                self.ended = f"MCP server {self.spec.name} was closed."

    async def _watch(self, session: Any, closing: asyncio.Event) -> None:
        """Until closed, a ping every WATCH_EVERY_S; a closed connection ends the session."""
        from mcp.shared.exceptions import McpError as ProtocolError
        from mcp.types import CONNECTION_CLOSED

        while True:
            with suppress(TimeoutError):
                await asyncio.wait_for(closing.wait(), WATCH_EVERY_S)
                return
            try:
                async with asyncio.timeout(self.spec.timeout_s):
                    await session.send_ping()
            except TimeoutError:
                continue  # busy is not gone: its calls have their own timeout
            except ProtocolError as err:
                if err.error.code == CONNECTION_CLOSED:
                    raise
                # any other error is an answer: a server that does not know ping is alive

    def _transport(self) -> AbstractAsyncContextManager[Any]:
        spec = self.spec
        if spec.url:
            from mcp.client.streamable_http import streamable_http_client

            return streamable_http_client(spec.url)  # each call has its own timeout (_call)
        from mcp.client.stdio import StdioServerParameters, stdio_client

        env = {**spec.env, **self._secrets}
        params = StdioServerParameters(command=spec.command, args=list(spec.args), env=env)
        return stdio_client(params)

    def _failed(self, err: BaseException) -> str:
        err = _leaf(err)
        if isinstance(err, FileNotFoundError):
            what = f"cannot start {self.spec.command!r} (not found)"
        else:
            what = sentence(str(err) or type(err).__name__).rstrip(".")
        return scrub(f"MCP server {self.spec.name} ({self.spec.where}) failed: {what}.", self._keys)

    def _end(self, err: BaseException) -> None:
        """The session ended by itself: say why once, for this call and every later one."""
        self._session = None
        if self.ended:
            return
        hint = f"; {self.reconnect_hint}" if self.reconnect_hint else "."
        where = f"{self.spec.name} ({self.spec.where})"
        self.ended = scrub(f"MCP server {where} is gone: {_reason(err)}{hint}", self._keys)
        self.gone = True
        if self.on_end is not None:
            self.on_end(self)

    async def _call(self, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        session, holding = self._session, self._task
        if session is None or holding is None:
            raise McpError(self.ended or f"MCP server {self.spec.name} is not connected.")
        answer = asyncio.ensure_future(session.call_tool(tool, arguments))
        try:
            async with asyncio.timeout(self.spec.timeout_s):
                # The answer, or the session's end (over HTTP the SDK may never fail the call)
                await asyncio.wait({answer, holding}, return_when=asyncio.FIRST_COMPLETED)
        except TimeoutError:
            raise McpError(
                f"MCP server {self.spec.name} did not answer {tool} within "
                f"{self.spec.timeout_s:g} s."
            ) from None
        finally:
            if not answer.done():  # timed out, the session ended, or the run was stopped
                answer.cancel()
        if answer.cancelled() or not answer.done():  # the session ended first
            raise McpError(self.ended or f"MCP server {self.spec.name} is not connected.")
        try:
            result = answer.result()
        except Exception as err:  # the server died or broke the protocol: it stays so
            self._end(err)
            raise McpError(self.ended) from None
        texts = [part.text for part in result.content if getattr(part, "type", "") == "text"]
        if not texts and result.structuredContent is not None:
            texts = [json.dumps(result.structuredContent, ensure_ascii=False)]
        return "\n".join(texts), bool(result.isError)

    async def _close(self) -> None:
        if self._closing is not None:
            self._closing.set()
        if self._task is not None:
            task, self._task = self._task, None
            try:
                await asyncio.wait_for(task, CLOSE_TIMEOUT_S)
            except (TimeoutError, Exception):
                task.cancel()


def _leaf(err: BaseException) -> BaseException:
    while isinstance(err, BaseExceptionGroup) and err.exceptions:  # anyio's task groups
        err = err.exceptions[0]
    return err


def _reason(err: BaseException) -> str:
    """Why a session ended, in a few words: "connection refused", "connection closed"…"""
    from anyio import BrokenResourceError, ClosedResourceError, EndOfStream

    err = _leaf(err)
    cause: BaseException | None = err
    while cause is not None:  # httpx wraps the socket's own error twice
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, ConnectionResetError):
            return "connection reset"
        closed = (BrokenPipeError, ClosedResourceError, BrokenResourceError, EndOfStream)
        if isinstance(cause, closed):  # a stdio server's pipes, after its process ended
            return "connection closed"
        cause = cause.__cause__ or cause.__context__
    if not str(err):
        return type(err).__name__
    text = sentence(str(err)).rstrip(".")
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def _info(tool: Any) -> McpToolInfo:
    annotations = getattr(tool, "annotations", None)
    read_only = bool(getattr(annotations, "readOnlyHint", False))
    schema = tool.inputSchema if isinstance(tool.inputSchema, dict) else {}
    name = tool.name if isinstance(tool.name, str) else ""
    description = clean_description(tool.description) or clean_description(name, 64)
    return McpToolInfo(name, description, schema, read_only)


class McpTool:
    """A server's tool as the router runs it (core/tools/base.py's Tool, with ``parameters``:
    its JSON schema, which native tool calling sends as it is)."""

    max_input = 20_000

    def __init__(self, connection: McpConnection, info: McpToolInfo) -> None:
        self.connection = connection
        self.remote_name = info.name  # what the server calls it
        self.name = info.name
        self.description = info.description
        self.hinted_read_only = info.read_only  # the server's claim…
        self.read_only = info.read_only and connection.trust_hints  # …believed if trusted
        self.parameters = info.schema
        # The server's own limit answers first, with its clearer line; this only backs it up.
        self.timeout_s = connection.spec.timeout_s + 5.0
        names = list(_properties(info.schema))
        hint = (
            names[0]
            if _one_string(info.schema)
            else ("JSON object" + (f" with {', '.join(names)}" if names else ""))
        )
        self.input_hint = clean_description(hint, 200)  # the schema's names are the server's

    async def run(self, input: str) -> str:
        arguments, problem = arguments_for(self.parameters, input)
        if problem:
            return problem
        try:
            text, failed = await self.connection.call(self.remote_name, arguments)
        except McpError as err:
            return f"Error: {err}"
        if failed:
            return text if text.startswith("Error") else f"Error: {text or self.name + ' failed.'}"
        return text


def _properties(schema: Mapping[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties")
    return properties if isinstance(properties, dict) else {}


def _one_string(schema: Mapping[str, Any]) -> bool:
    properties = _properties(schema)
    if len(properties) != 1:
        return False
    (only,) = properties.values()
    return isinstance(only, dict) and only.get("type") == "string"


def arguments_for(schema: Mapping[str, Any], text: str) -> tuple[dict[str, Any], str]:
    """A call's input as the tool's arguments: a JSON object, or the bare string of a tool
    with one string parameter; else an error for the model that says what it takes."""
    text = text.strip()
    if text.startswith("{"):
        try:
            value = parse_json_text(text, "the input")  # no RecursionError on deep nesting
        except ValueError:
            return {}, f"Error: the input is not valid JSON: {text[:80]}"
        if isinstance(value, dict):
            return value, ""
    properties = _properties(schema)
    if _one_string(schema):
        return {next(iter(properties)): text}, ""
    if not properties and not text:
        return {}, ""
    wanted = ", ".join(properties) or "no arguments"
    return {}, f"Error: write the input as a JSON object ({wanted})."
