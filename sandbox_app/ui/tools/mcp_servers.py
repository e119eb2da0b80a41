"""MCP servers in the window: the scenario's list of servers, and their connections.

:class:`~sandbox_app.ui.tools.mcp_sources.McpSources` holds the MCP connections for the whole
window: the main view and every lane run with the tools of the servers connected now (its own
module: the window builds it at start, the dialog is imported when first opened). A server starts or
is reached only when the user presses **Connect**, which shows its command line or URL: a
scenario never starts a program by being opened. :class:`McpServersDialog` edits the list
(saved in the scenario, never with a secret: ``secret_env`` names variables the keyring or
the environment fills) and connects.

The connections themselves, their status lines and trusted hints are the application's
:class:`~sandbox_app.application.mcp_set.McpSet` (the command line's ``run --mcp`` uses the same);
:class:`McpSources` adds the signals and publishes the tools to the workspace. A connection that
ends by itself (its server died) says so in its status at once, even with the dialog open: the
set's ``on_end`` comes from the network loop's thread and a queued signal brings it here. Its
tools stay, failing at once with that line, until **Reconnect**.

A server's read-only hints are its own claims: its tools ask before running until the user
ticks "Trust this server's read-only hints" for it. That trust lasts for the session and is
never read from or written to a file (a scenario cannot vouch for the server it names); it
belongs to the program and arguments (or the URL) the form names, not to the name, so editing
the command line unticks it, and a file naming another program alike is not trusted.
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QSignalBlocker
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QWidget,
)

from sandbox_app.core.scenarios.custom_tools import mcp_servers_from_list, mcp_servers_to_list
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.tools.mcp_server import McpServerSpec
from sandbox_app.lazy_import import lazy_import
from sandbox_app.ui.common.plain import plain_label
from sandbox_app.ui.tools.drafts_dialog import DraftsDialog
from sandbox_app.ui.tools.mcp_sources import RECONNECT as RECONNECT
from sandbox_app.ui.tools.mcp_sources import McpSources as McpSources  # where callers look

if TYPE_CHECKING:
    import asyncio
else:
    asyncio = lazy_import("asyncio")


class McpServersDialog(DraftsDialog[McpServerSpec]):
    """The scenario's MCP servers: add, edit, remove, connect. OK saves the list."""

    def __init__(self, sources: McpSources, parent: QWidget | None = None) -> None:
        specs = sources.workspace.model.scenario.mcp_servers
        super().__init__("MCP servers", specs, "Add server", parent)
        self.resize(760, 420)
        self.sources = sources
        self.server_list = self.item_list
        self.where_edit = QLineEdit()
        self.where_edit.setPlaceholderText(
            "python my_server.py --flag   or   http://127.0.0.1:8000/mcp"
        )
        self.env_edit = QPlainTextEdit()
        self.env_edit.setPlaceholderText("NAME=value, one per line (no secrets here)")
        self.env_edit.setFixedHeight(self.fontMetrics().lineSpacing() * 3 + 12)
        self.secrets_edit = QLineEdit()
        self.secrets_edit.setPlaceholderText("GITHUB_TOKEN, …: from the keyring or the environment")
        self.timeout_spin = QDoubleSpinBox()
        self.timeout_spin.setRange(0.5, 300.0)
        self.timeout_spin.setSuffix(" s per call")
        self.connect_button = QPushButton("Connect")
        self.connect_button.setToolTip("Start the command (or reach the URL) and list its tools")
        self.trust_box = QCheckBox("Trust this server's read-only hints")
        self.trust_box.setToolTip(
            "Its tools marked read-only run without asking (for this session only)"
        )
        self.status = plain_label()
        self.status.setWordWrap(True)
        form = self.form_layout
        form.addRow("Command or URL", self.where_edit)
        form.addRow("Environment", self.env_edit)
        form.addRow("Secrets", self.secrets_edit)
        form.addRow("Timeout", self.timeout_spin)
        form.addRow("", self.trust_box)
        form.addRow(self.connect_button, self.status)
        self.add_button.clicked.connect(self.add_server)
        self.connect_button.clicked.connect(self._on_connect_button_clicked)
        self.trust_box.toggled.connect(self._on_trust_box_toggled)
        # What the server is changes with these: the box says whether that one is trusted.
        for edit in (self.where_edit, self.secrets_edit):
            edit.textChanged.connect(self._on_server_edited)
        self.env_edit.textChanged.connect(self._on_server_edited)
        sources.changed.connect(self._show_status)
        self.connecting: asyncio.Task[None] | None = None
        self.pruning: asyncio.Task[None] | None = None  # closing removed servers, after OK
        self.fill()

    def add_server(self) -> None:
        self.add_draft(McpServerSpec(self.free_name("server"), command="python"))

    def checked(self) -> tuple[McpServerSpec, ...]:
        """The drafts by the scenario file's rules; ScenarioError names what is wrong."""
        self.keep_form()
        return mcp_servers_from_list(mcp_servers_to_list(self.drafts))

    def accept(self) -> None:
        try:
            specs = self.checked()
        except ScenarioError as err:
            self.message.setText(f"⚠ {err}")
            return
        self.sources.workspace.update(self, mcp_servers=specs)
        self.pruning = asyncio.ensure_future(self.sources.keep_only(specs))
        super().accept()

    def connect_current(self) -> asyncio.Task[None] | None:
        """Connect the server the form shows (checked first); the task, to wait on in tests."""
        try:
            specs = self.checked()
        except ScenarioError as err:
            self.message.setText(f"⚠ {err}")
            return None
        if self.shown is None:
            return None
        self.message.setText("")
        self.connecting = asyncio.ensure_future(self.sources.connect_server(specs[self.shown]))
        return self.connecting

    # ---- the form ---------------------------------------------------------------------

    def show_draft(self, draft: McpServerSpec | None) -> None:
        spec = draft or McpServerSpec("")
        self.name_edit.setText(spec.name)
        self.where_edit.setText(
            spec.url or (shlex.join((spec.command, *spec.args)) if spec.command else "")
        )
        self.env_edit.setPlainText("\n".join(f"{k}={v}" for k, v in spec.env.items()))
        self.secrets_edit.setText(", ".join(spec.secret_env))
        self.timeout_spin.setValue(spec.timeout_s)
        self._show_trust(spec)
        self._show_status()

    def _show_trust(self, spec: McpServerSpec) -> None:
        """Ticked when the server the form names (its program or URL) is trusted."""
        with QSignalBlocker(self.trust_box):
            self.trust_box.setChecked(self.sources.trusts(spec))

    def form_draft(self, draft: McpServerSpec) -> McpServerSpec:
        where = self.where_edit.text().strip()
        words = [] if where.startswith(("http://", "https://")) else _split(where)
        env = dict(
            line.split("=", 1) for line in self.env_edit.toPlainText().splitlines() if "=" in line
        )
        secrets = tuple(s.strip() for s in self.secrets_edit.text().split(",") if s.strip())
        return replace(
            draft,
            name=self.name_edit.text().strip(),
            command=words[0] if words else "",
            args=tuple(words[1:]),
            url=where if not words else "",
            env={k.strip(): v.strip() for k, v in env.items()},
            secret_env=secrets,
            timeout_s=self.timeout_spin.value(),
        )

    def _show_status(self) -> None:
        name = self.drafts[self.shown].name if self.shown is not None else ""
        self.status.setText(self.sources.status.get(name, "not connected"))
        self.connect_button.setEnabled(not self.sources.connecting(name))
        self.connect_button.setText("Reconnect" if self.sources.gone(name) else "Connect")

    def _on_connect_button_clicked(self) -> None:
        self.connect_current()

    def _on_server_edited(self) -> None:
        if self.shown is not None:
            self._show_trust(self.form_draft(self.drafts[self.shown]))

    def _on_trust_box_toggled(self, trusted: bool) -> None:
        if self.shown is not None:
            self.keep_form()  # trust goes to the server the form names now
            self.sources.trust_hints(self.drafts[self.shown], trusted)


def _split(command_line: str) -> list[str]:
    try:
        return shlex.split(command_line)
    except ValueError:  # an unclosed quote: the file's rules will say what is wrong
        return command_line.split()
