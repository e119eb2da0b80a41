"""Tool toggles with each tool's policy, the search documents, max steps and the dialect.

They edit the workspace's ``enabled_tools``, ``policies``, ``custom_tools`` (through the
"Your tools…" editor), ``documents``, ``max_steps`` and ``dialect``. A row per tool: the
built-ins, the scenario's own and the installed plugins', each a toggle and an auto / ask /
deny choice. A tool with side effects is set to auto only after a confirmation that names the
risk, and a scenario file that says auto for one is asked about once when it is opened
(core/tools/policy.py): the answer lives in the workspace's ``trusted``, never in a file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QSignalBlocker, Qt, QTimer
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.application.workspace import Change
from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.core.react_format.dialects import DIALECTS
from sandbox_app.core.running.metrics import plural
from sandbox_app.core.scenarios.scenario import MAX_STEPS_RANGE, DialectChoice
from sandbox_app.core.tools import TOOL_NAMES, Tool, tools_for
from sandbox_app.core.tools.plugins import installed
from sandbox_app.core.tools.policy import POLICIES, default_policy
from sandbox_app.ui.common.fitting import lines_tall
from sandbox_app.ui.common.plain import message_box, plain_label, rich_label, tip
from sandbox_app.ui.common.workspace_signals import QtWorkspace
from sandbox_app.ui.tools.mcp_sources import McpSources

if TYPE_CHECKING:  # the dialogs are imported when first opened (not on the first frame's path)
    from sandbox_app.ui.tools.mcp_servers import McpServersDialog
    from sandbox_app.ui.tools.mock_tools_editor import MockToolsEditor

RISK = (
    "{tool} has side effects. Set to auto, it runs whenever the model decides to call it, "
    "with whatever input the model writes, without asking you first."
)


class ToolPanel(QWidget):
    """What the model may use, on what terms, and how long it may try."""

    def __init__(
        self, workspace: QtWorkspace, keys: KeyStore, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.workspace = workspace
        self.mcp = McpSources(workspace, keys)  # the window's MCP connections
        self.mcp_dialog: McpServersDialog | None = None
        self.checkboxes: dict[str, QCheckBox] = {}
        self.policy_combos: dict[str, QComboBox] = {}
        self.editor: MockToolsEditor | None = None
        self.question: QMessageBox | None = None  # a confirmation being asked
        self.toggles = QGridLayout()
        self.toggles.setColumnStretch(2, 1)
        self.edit_button = QPushButton("Your tools…")
        self.edit_button.setToolTip("Add mock tools: canned replies, ask me, or an error")
        self.mcp_button = QPushButton("MCP servers…")
        self.mcp_button.setToolTip("Tools from MCP servers (stdio or HTTP)")
        self.documents_edit = QPlainTextEdit()
        self.documents_edit.setPlaceholderText("Documents for the search tool, one per line")
        self.documents_edit.setFixedHeight(lines_tall(self.documents_edit, 3))
        self.documents_edit.textChanged.connect(self._on_documents_edit_text_changed)
        self.max_steps_slider = QSlider(Qt.Orientation.Horizontal)
        self.max_steps_slider.setRange(*MAX_STEPS_RANGE)
        self.max_steps_label = plain_label()
        self.max_steps_label.setMinimumWidth(self.fontMetrics().horizontalAdvance("50 steps"))
        self.max_steps_slider.valueChanged.connect(self._on_max_steps_slider_value_changed)
        self.dialect_combo = QComboBox()
        self.dialect_combo.addItems(["auto", *DIALECTS])
        self.dialect_combo.currentTextChanged.connect(self._on_dialect_combo_text_changed)
        self.edit_button.clicked.connect(self.edit_tools)
        self.mcp_button.clicked.connect(self.edit_servers)

        heading = QHBoxLayout()
        heading.addWidget(rich_label("<b>Tools</b>"))
        heading.addStretch(1)
        heading.addWidget(self.edit_button)
        heading.addWidget(self.mcp_button)
        steps_row = QHBoxLayout()
        steps_row.addWidget(self.max_steps_slider, 1)
        steps_row.addWidget(self.max_steps_label)
        form = QFormLayout()
        form.addRow("Max steps", steps_row)
        form.addRow("Dialect", self.dialect_combo)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(heading)
        layout.addLayout(self.toggles)
        layout.addWidget(self.documents_edit)
        layout.addLayout(form)
        workspace.changed.connect(self._on_workspace_changed)
        self._build_rows()

    def all_tools(self) -> list[Tool]:
        """Every tool that can be toggled: built-ins, the scenario's own, plugins'."""
        s = self.workspace.model.scenario
        own = (spec.name for spec in s.custom_tools)
        sources = self.workspace.model.sources
        names = (*TOOL_NAMES, *own, *(t.name for t in (*installed().tools, *sources)))
        return tools_for(names, s.documents, s.custom_tools, sources=sources)

    def _build_rows(self) -> None:
        """One row per tool: made again when the tools themselves change, else only set."""
        s = self.workspace.model.scenario
        tools = self.all_tools()
        # Trust goes with a tool that is there: one removed takes it along, so a new tool of
        # the same name (another server's) is asked about afresh.
        self.workspace.model.trusted &= {tool.name for tool in tools}
        if [t.name for t in tools] == list(self.checkboxes):
            for tool in tools:
                box, combo = self.checkboxes[tool.name], self.policy_combos[tool.name]
                with QSignalBlocker(box), QSignalBlocker(combo):
                    box.setChecked(tool.name in s.enabled_tools)
                    combo.setCurrentText(s.policies.get(tool.name, default_policy(tool)))
            self.documents_edit.setEnabled("search" in s.enabled_tools)
            return
        while self.toggles.count():
            item = self.toggles.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.checkboxes.clear()
        self.policy_combos.clear()
        for row, tool in enumerate(tools):
            box = QCheckBox(tool.name)
            box.setToolTip(tip(tool.description))
            box.setChecked(tool.name in s.enabled_tools)
            box.toggled.connect(self._on_tool_toggled)
            combo = QComboBox()
            combo.addItems(POLICIES)
            combo.setCurrentText(s.policies.get(tool.name, default_policy(tool)))
            combo.setToolTip("auto: runs on its own · ask: you approve each call · deny: never")
            combo.currentTextChanged.connect(
                lambda policy, t=tool: self._on_policy_combo_changed(t, policy)
            )
            self.toggles.addWidget(box, row, 0)
            self.toggles.addWidget(combo, row, 1)
            if not tool.read_only:
                self.toggles.addWidget(plain_label("side effects"), row, 2)
            self.checkboxes[tool.name] = box
            self.policy_combos[tool.name] = combo
        self.documents_edit.setEnabled("search" in s.enabled_tools)

    def _on_workspace_changed(self, change: Change) -> None:
        # enabled_tools and dialect too: a restored prompt version sets them from elsewhere.
        theirs = change.source is not self
        if change.touches("custom_tools", "policies", "sources", "enabled_tools") and theirs:
            self._build_rows()
        if not change.loaded:
            if change.touches("dialect") and theirs:
                with QSignalBlocker(self.dialect_combo):
                    self.dialect_combo.setCurrentText(self.workspace.model.scenario.dialect)
            return
        s = self.workspace.model.scenario
        widgets = [self.documents_edit, self.max_steps_slider, self.dialect_combo]
        blockers = [QSignalBlocker(w) for w in widgets]
        self.documents_edit.setPlainText("\n".join(s.documents))
        self.max_steps_slider.setValue(s.max_steps)
        self.dialect_combo.setCurrentText(s.dialect)
        for blocker in blockers:
            blocker.unblock()
        self._show_max_steps(s.max_steps)
        QTimer.singleShot(0, self._ask_about_file_policies)

    # ---- the scenario's own tools ------------------------------------------------------

    def edit_tools(self) -> MockToolsEditor:
        from sandbox_app.ui.tools.mock_tools_editor import MockToolsEditor

        s = self.workspace.model.scenario
        taken = [t.name for t in self.all_tools() if t.name not in {c.name for c in s.custom_tools}]
        editor = self.editor = MockToolsEditor(s.custom_tools, taken, self)
        editor.accepted.connect(lambda: self._tools_edited(editor))
        editor.open()
        return editor

    def edit_servers(self) -> McpServersDialog:
        from sandbox_app.ui.tools.mcp_servers import McpServersDialog

        dialog = self.mcp_dialog = McpServersDialog(self.mcp, self)
        dialog.open()
        return dialog

    def _tools_edited(self, editor: MockToolsEditor) -> None:
        s = self.workspace.model.scenario
        before = {spec.name for spec in s.custom_tools}
        specs = editor.specs()
        names = {spec.name for spec in specs}
        gone = before - names
        # A new tool is enabled (it was made to be tried); a removed one leaves no trace.
        enabled = (*(n for n in s.enabled_tools if n not in gone), *sorted(names - before))
        policies = {n: p for n, p in s.policies.items() if n not in gone}
        self.workspace.update(editor, custom_tools=specs, enabled_tools=enabled, policies=policies)

    # ---- policies -----------------------------------------------------------------------

    def _on_policy_combo_changed(self, tool: Tool, policy: str) -> None:
        trusted = self.workspace.model.trusted
        if policy == "auto" and not tool.read_only and tool.name not in trusted:
            self._confirm([tool.name], lambda yes: self._set_policy(tool, "auto" if yes else "ask"))
            return
        self._set_policy(tool, policy)

    def _set_policy(self, tool: Tool, policy: str) -> None:
        if policy == "auto" and not tool.read_only:
            self.workspace.model.trusted.add(tool.name)
        combo = self.policy_combos.get(tool.name)
        if combo is not None and combo.currentText() != policy:
            with QSignalBlocker(combo):
                combo.setCurrentText(policy)
        policies = dict(self.workspace.model.scenario.policies)
        policies[tool.name] = policy  # type: ignore[assignment]  # one of POLICIES
        self.workspace.update(self, policies=policies)

    def _ask_about_file_policies(self) -> None:
        """A file that lets side-effecting tools run unasked: ask once, on opening it."""
        s = self.workspace.model.scenario
        trusted = self.workspace.model.trusted
        risky = [
            t for t in self.all_tools() if not t.read_only and s.policies.get(t.name) == "auto"
        ]
        names = [t.name for t in risky if t.name not in trusted]
        if names and self.question is None:
            self._confirm(names, lambda yes: self._file_policies_answered(risky, yes))

    def _file_policies_answered(self, risky: list[Tool], yes: bool) -> None:
        for tool in risky:
            self._set_policy(tool, "auto" if yes else "ask")

    def _confirm(self, names: list[str], answered: Callable[[bool], None]) -> None:
        """Ask whether tools with side effects may run unasked; Keep asking is the default."""
        box = self.question = message_box(
            QMessageBox.Icon.Warning,
            "Run without asking?",
            "\n\n".join(RISK.format(tool=name) for name in names),
            parent=self,
        )
        allow = box.addButton("Allow without asking", QMessageBox.ButtonRole.AcceptRole)
        keep = box.addButton("Keep asking", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(keep)
        box.setEscapeButton(keep)

        def on_finished(_: int) -> None:
            self.question = None
            answered(box.clickedButton() is allow)

        box.finished.connect(on_finished)
        box.open()

    # ---- the rest -----------------------------------------------------------------------

    def enabled_tools(self) -> tuple[str, ...]:
        return tuple(name for name, box in self.checkboxes.items() if box.isChecked())

    def documents(self) -> tuple[str, ...]:
        lines = self.documents_edit.toPlainText().splitlines()
        return tuple(line.strip() for line in lines if line.strip())

    def max_steps(self) -> int:
        return self.max_steps_slider.value()

    def dialect(self) -> DialectChoice:
        return self.dialect_combo.currentText()  # type: ignore[return-value]  # from the list

    def _on_tool_toggled(self) -> None:
        self.documents_edit.setEnabled(self.checkboxes["search"].isChecked())
        self.workspace.update(self, enabled_tools=self.enabled_tools())

    def _on_documents_edit_text_changed(self) -> None:
        self.workspace.update(self, documents=self.documents())

    def _on_dialect_combo_text_changed(self) -> None:
        self.workspace.update(self, dialect=self.dialect())

    def _on_max_steps_slider_value_changed(self, value: int) -> None:
        self._show_max_steps(value)
        self.workspace.update(self, max_steps=value)

    def _show_max_steps(self, value: int) -> None:
        self.max_steps_label.setText(plural(value, "step"))
