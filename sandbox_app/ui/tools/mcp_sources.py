"""The window's MCP connections (the MCP servers dialog, ui/tools/mcp_servers.py, edits them).

A thin Qt layer over the application's :class:`~sandbox_app.application.mcp_set.McpSet`: the
signals, and the tools published to the workspace. A connection that ends by itself (its
server died) is reported from the network loop's thread; a queued signal brings it here. The
window builds this at start, before its first frame; the MCP client
(backends/mcp_client/mcp_tools.py,
with asyncio) is imported at the first connection.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import suppress
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal

from sandbox_app.application.mcp_set import McpSet, own_tool_names
from sandbox_app.application.workspace import Change
from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.core.tools.mcp_server import McpServerSpec
from sandbox_app.lazy_import import lazy_import
from sandbox_app.ui.common.workspace_signals import QtWorkspace

if TYPE_CHECKING:
    import asyncio

    from sandbox_app.backends.mcp_client.mcp_tools import McpConnection
else:
    asyncio = lazy_import("asyncio")

RECONNECT = "reconnect it in MCP servers…"


class McpSources(QObject):
    """The window's MCP connections: a thin Qt layer over the application's :class:`McpSet`.
    ``changed`` when one connects, fails, ends or closes; its tools go to the workspace."""

    changed = Signal()
    _ended = Signal(object)  # a connection whose session ended by itself, from any thread

    def __init__(self, workspace: QtWorkspace, keys: KeyStore) -> None:
        super().__init__(workspace)
        self.workspace = workspace
        self.keys = keys
        self.set = McpSet(
            keys, on_change=self._on_change, on_end=self._tell_ended, reconnect_hint=RECONNECT
        )
        self.status = self.set.status  # server name → one line
        self._closing: asyncio.Future[None] | None = None  # servers let go, being closed
        self._ended.connect(self._on_ended, Qt.ConnectionType.QueuedConnection)
        workspace.changed.connect(self._on_workspace_changed)

    def trusts(self, spec: McpServerSpec) -> bool:
        return self.set.trusts(spec)

    def trust_hints(self, spec: McpServerSpec, trusted: bool) -> None:
        """Believe (or stop believing) the read-only hints of the server ``spec`` starts or
        reaches, for this session."""
        self.set.trust_hints(spec, trusted)

    def connecting(self, name: str) -> bool:
        return self.set.connecting(name)

    def gone(self, name: str) -> bool:
        """Server ``name`` was connected and its session has ended by itself."""
        return self.set.gone(name)

    async def connect_server(self, spec: McpServerSpec) -> None:
        """(Re)connect ``spec``; its tools join the runs' tools, or its status says why not.
        A second Connect while one is under way is ignored (one process a server)."""
        await self.set.connect_server(spec, own_tool_names(self.workspace.model.scenario))

    async def keep_only(self, specs: Iterable[McpServerSpec]) -> None:
        """Close the connections of servers not in ``specs`` as they are (removed, renamed,
        or another program or URL under the same name); their trust goes with them."""
        await self.set.keep_only(specs)

    async def drop_server(self, name: str, *, quiet: bool = False) -> None:
        await self.set.drop_server(name, quiet=quiet)

    async def close_all(self) -> None:
        await self.set.close_all()

    def _tell_ended(self, connection: McpConnection) -> None:
        """On the network loop's thread: the signal takes it to this object's thread."""
        with suppress(RuntimeError):  # the window (and this object) is already gone
            self._ended.emit(connection)

    def _on_workspace_changed(self, change: Change) -> None:
        """Another file opened, or the list edited: a server it no longer names as it is goes
        at once (its tools and trust with it, before any run can use them), closed soon."""
        if not change.touches("mcp_servers"):
            return
        let_go = self.set.unlist(self.workspace.model.scenario.mcp_servers)
        if let_go:
            self._closing = asyncio.ensure_future(_close(let_go))

    def _on_ended(self, connection: McpConnection) -> None:
        self.set.ended(connection)

    def _on_change(self, tools_changed: bool) -> None:
        if tools_changed:  # the toggles redraw with the tools offered now
            self.workspace.model.set_sources(list(self.set.tools))
        self.changed.emit()


async def _close(connections: list[McpConnection]) -> None:
    for connection in connections:
        await connection.close()
