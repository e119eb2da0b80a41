"""The MCP servers connected now: one set for the window and for ``react-sandbox run``.

:class:`McpSet` holds each server's connection (backends/mcp_client/mcp_tools.py), the tools it
offers, one status line a server ("connecting…", "connected: 7 tools" with its skipped and
renamed lines, or "⚠ why not"), the connects under way and the servers whose read-only hints
the user trusts. A tool named like one already taken (the built-ins, the scenario's own tools,
another server's) is offered as ``SERVER_NAME``; each such line is also a notice, said once.

Lines are shown by the server's name, but trust and a live connection follow what the server
is (``McpServerSpec.identity``: its program and arguments, or its URL): a scenario that names
another program like a trusted one gets neither the old connection nor its trust
(:meth:`McpSet.keep_only`, which the window calls whenever the scenario's list changes, and
on opening another file).

It is Qt-free: whoever holds it hears through two callbacks. ``on_change(tools_changed)`` after
any change, on the caller's thread (``tools_changed``: the tools offered, or whether their
hints are believed, changed, so whoever runs them should take :attr:`tools` again).
``on_end(connection)`` when a connected session ends by itself (its server died), on the
network loop's thread: the holder takes it to its own thread (the window through a queued
signal, an asyncio caller with ``call_soon_threadsafe``) and calls :meth:`ended` there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING

from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.core.scenarios.run_input import RunInput
from sandbox_app.core.tools import TOOL_NAMES
from sandbox_app.core.tools.mcp_server import McpServerSpec

if TYPE_CHECKING:  # the MCP client (with asyncio): imported at the first connection
    from sandbox_app.backends.mcp_client.mcp_tools import McpConnection, McpTool

CONNECTING = "connecting…"


def own_tool_names(scenario: RunInput) -> tuple[str, ...]:
    """The names an MCP tool may not take as they are: the built-ins and the scenario's own."""
    return (*TOOL_NAMES, *(c.name for c in scenario.custom_tools))


class McpSet:
    """MCP connections, with their tools, status lines (by server name) and notices."""

    def __init__(
        self,
        keys: KeyStore | None = None,
        *,
        on_change: Callable[[bool], None] | None = None,
        on_end: Callable[[McpConnection], None] | None = None,
        on_notice: Callable[[str], None] | None = None,
        reconnect_hint: str = "",
    ) -> None:
        self.keys = keys or KeyStore()
        self.on_change = on_change
        self.on_end = on_end
        self.on_notice = on_notice  # each skipped or renamed line, as its server connects
        self.reconnect_hint = reconnect_hint  # how to bring a gone server back, in its line
        self.status: dict[str, str] = {}  # server name → one line (several for the notices)
        # The servers (their identities, never names) whose read-only hints are believed.
        self.trusted: set[tuple[object, ...]] = set()
        self._specs: dict[str, McpServerSpec] = {}  # the server each status line is about
        self._connections: dict[str, McpConnection] = {}
        self._tools: dict[str, list[McpTool]] = {}
        self._pending: dict[str, McpConnection] = {}
        self._abandoned: set[McpConnection] = set()  # connects under way, for servers unlisted
        self._closed = False

    @property
    def tools(self) -> list[McpTool]:
        """Every connected server's tools, in the order the servers connected."""
        return [t for tools in self._tools.values() for t in tools]

    def names(self) -> list[str]:
        """The servers connected now (gone ones included, until dropped or reconnected)."""
        return list(self._connections)

    def connecting(self, name: str) -> bool:
        return name in self._pending

    def gone(self, name: str) -> bool:
        """Server ``name`` was connected and its session has ended by itself."""
        connection = self._connections.get(name)
        return connection is not None and connection.gone

    def notices(self, name: str) -> list[str]:
        """Server ``name``'s skipped and renamed lines, from its last connect."""
        connection = self._connections.get(name)
        return [*connection.skipped, *connection.renamed] if connection is not None else []

    def trusts(self, spec: McpServerSpec) -> bool:
        """Whether the server ``spec`` starts or reaches has its read-only hints believed."""
        return spec.identity in self.trusted

    def trust_hints(self, spec: McpServerSpec, trusted: bool) -> None:
        """Believe (or stop believing) the read-only hints of the server ``spec`` is, for this
        session: its connection's tools if that same server is connected, and after its next
        connect. A connection of another program under the same name is left as it is."""
        if trusted:
            self.trusted.add(spec.identity)
        else:
            self.trusted.discard(spec.identity)
        connection = self._connections.get(spec.name)
        if connection is not None and connection.spec.identity == spec.identity:
            connection.trust_hints = trusted
            for tool in self._tools.get(spec.name, []):
                tool.read_only = trusted and tool.hinted_read_only
        self._changed(True)

    async def connect_server(self, spec: McpServerSpec, taken: Iterable[str] = ()) -> None:
        """(Re)connect ``spec``; its tools join :attr:`tools`, or its status says why not.
        ``taken``: the names other than the servers' (:func:`own_tool_names`). A second
        connect while one is under way is ignored (one process a server)."""
        from sandbox_app.backends.mcp_client.mcp_tools import McpError

        with suppress(McpError):  # its status says why
            await self._connect(spec, taken)

    async def connect_all(
        self, specs: Sequence[McpServerSpec], taken: Iterable[str] = ()
    ) -> list[McpTool]:
        """Connect each server in turn (the command line); McpError for the first that fails,
        the ones connected before it stay until :meth:`close_all`."""
        taken = tuple(taken)
        for spec in specs:
            await self._connect(spec, taken)
        return self.tools

    async def keep_only(self, specs: Iterable[McpServerSpec]) -> None:
        """Only the servers listed in ``specs`` stay: see :meth:`unlist`, then the connections
        it let go are closed."""
        for connection in self.unlist(specs):
            await connection.close()

    def unlist(self, specs: Iterable[McpServerSpec]) -> list[McpConnection]:
        """At once, forget every server not in ``specs`` as it is (removed, renamed, or the
        same name now starting another program or reaching another URL): its tools, status
        line and trust go, a connect under way for it is dropped when it ends. The
        connections let go, for the caller to close (closing takes the network loop)."""
        listed = {(s.name, s.identity) for s in specs}
        self.trusted &= {identity for _, identity in listed}
        for name, connection in self._pending.items():
            if (name, connection.spec.identity) not in listed:
                self._abandoned.add(connection)
        stale = [n for n, s in self._specs.items() if (n, s.identity) not in listed]
        let_go = [self._connections.pop(n) for n in stale if n in self._connections]
        for name in stale:
            self.status.pop(name, None)
            self._specs.pop(name, None)
            self._tools.pop(name, None)
        if stale:
            self._changed(True)
        return let_go

    async def drop_server(self, name: str, *, quiet: bool = False) -> None:
        """Close server ``name``'s connection; its tools and status go (said unless quiet)."""
        connection = self._connections.pop(name, None)
        self._tools.pop(name, None)
        if connection is not None:
            await connection.close()
        self.status.pop(name, None)
        self._specs.pop(name, None)
        if not quiet:
            self._changed(True)

    async def close_all(self) -> None:
        self._closed = True  # a connect under way closes itself when it ends
        for name in list(self._connections):
            await self.drop_server(name, quiet=True)
        self._changed(True)

    def ended(self, connection: McpConnection) -> bool:
        """On the holder's thread, after ``on_end``: the status of ``connection``'s server says
        it is gone, unless another connection has replaced it since. Whether it did."""
        name = connection.spec.name
        if self._connections.get(name) is not connection:
            return False
        self.status[name] = f"⚠ {connection.ended}"
        self._changed(False)
        return True

    async def _connect(self, spec: McpServerSpec, taken: Iterable[str]) -> None:
        from sandbox_app.backends.mcp_client.mcp_tools import McpConnection, McpError

        if spec.name in self._pending:
            return
        self._pending[spec.name] = connection = McpConnection(
            spec,
            self.keys,
            trust_hints=self.trusts(spec),
            on_end=self.on_end,
            reconnect_hint=self.reconnect_hint,
        )
        failure: McpError | None = None
        try:
            await self.drop_server(spec.name, quiet=True)
            self._specs[spec.name] = spec
            self.status[spec.name] = CONNECTING
            self._changed(False)
            others = [t.name for t in self.tools]  # a name already taken is SERVER_NAME
            try:
                tools = await connection.connect((*taken, *others))
            except McpError as err:
                self.status[spec.name] = f"⚠ {err}"
                failure = err
            else:
                self._connections[spec.name] = connection
                self._tools[spec.name] = tools
                notices = [*connection.skipped, *connection.renamed]
                # (gone already: it ended before its on_end could be taken to find it here)
                gone = connection.gone
                lines = [f"connected: {len(tools)} tools", *notices]
                self.status[spec.name] = f"⚠ {connection.ended}" if gone else "\n".join(lines)
                for notice in notices:
                    if self.on_notice is not None:
                        self.on_notice(notice)
        finally:
            del self._pending[spec.name]
            # Closed, or its server unlisted, while this was connecting.
            if self._closed or connection in self._abandoned:
                self._abandoned.discard(connection)
                await self.drop_server(spec.name, quiet=True)
        self._changed(True)
        if failure is not None:
            raise failure

    def _changed(self, tools_changed: bool) -> None:
        if self.on_change is not None:
            self.on_change(tools_changed)
