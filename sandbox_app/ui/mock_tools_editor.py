"""The scenario's own tools: add, edit and remove mock tools (core/tools/mock.py).

One dialog for the main view and every lane (they share the scenario). The list on the left
holds the tools, the form on the right the selected one: its name, what the prompt's
``{tools}`` says about it (description and input hint), whether it has side effects, and its
behaviour: canned rules (match, pattern, reply) and a default, ask me, or an error. OK checks
every tool by the scenario file's rules and names what is wrong in one line instead of
closing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.core.custom_tools import custom_tools_from_list, custom_tools_to_list
from sandbox_app.core.scenario_fields import ScenarioError
from sandbox_app.core.tools.mock import (
    BEHAVIOURS,
    MAX_LATENCY_S,
    PATTERN_KINDS,
    CannedRule,
    MockToolSpec,
)
from sandbox_app.ui.choice_delegate import ChoiceDelegate

MATCH, PATTERN, REPLY = range(3)
DEFAULT_LABELS = {"canned": "Otherwise", "ask": "Otherwise", "error": "Error text"}


class MockToolsEditor(QDialog):
    """Edit ``specs``; after Accept, :meth:`specs` holds the checked result. ``taken``: the
    names of the other tools (built-ins, plugins), which a mock tool may not reuse."""

    def __init__(
        self, specs: tuple[MockToolSpec, ...], taken: Iterable[str], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Your tools")
        self.resize(820, 520)
        self._taken = tuple(taken)
        self._drafts = list(specs)
        self._checked = specs
        self._shown: int | None = None  # the draft the form shows
        self.tool_list = QListWidget()
        self.add_button = QPushButton("Add tool")
        self.remove_button = QPushButton("Remove")
        self.name_edit = QLineEdit()
        self.description_edit = QPlainTextEdit()
        self.description_edit.setFixedHeight(self.fontMetrics().lineSpacing() * 3 + 12)
        self.description_edit.setTabChangesFocus(True)
        self.hint_edit = QLineEdit()
        self.hint_edit.setPlaceholderText("what goes between the brackets, e.g. city")
        self.side_effects_box = QCheckBox("Has side effects (asks before each run)")
        self.behaviour_combo = QComboBox()
        self.behaviour_combo.addItems(BEHAVIOURS)
        self.behaviour_combo.setToolTip(
            "canned: the first rule whose pattern matches answers; ask: you type the result "
            "when the model calls it; error: always the error text"
        )
        self.rules = QTableWidget(0, 3)
        self.rules.setHorizontalHeaderLabels(["Match", "Pattern", "Reply"])
        self.rules.setItemDelegateForColumn(MATCH, ChoiceDelegate(PATTERN_KINDS, self.rules))
        self.rules.horizontalHeader().setSectionResizeMode(REPLY, QHeaderView.ResizeMode.Stretch)
        self.add_rule_button = QPushButton("Add rule")
        self.remove_rule_button = QPushButton("Remove rule")
        self.default_edit = QLineEdit()
        self.default_label = QLabel(DEFAULT_LABELS["canned"])
        self.latency_spin = QDoubleSpinBox()
        self.latency_spin.setRange(0.0, MAX_LATENCY_S)
        self.latency_spin.setSingleStep(0.5)
        self.latency_spin.setSuffix(" s")
        self.message = QLabel()
        self.message.setWordWrap(True)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )

        left = QVBoxLayout()
        left.addWidget(self.tool_list, 1)
        row = QHBoxLayout()
        row.addWidget(self.add_button)
        row.addWidget(self.remove_button)
        left.addLayout(row)
        rule_buttons = QHBoxLayout()
        rule_buttons.addWidget(self.add_rule_button)
        rule_buttons.addWidget(self.remove_rule_button)
        rule_buttons.addStretch(1)
        self.form = QWidget()
        form = QFormLayout(self.form)
        form.addRow("Name", self.name_edit)
        form.addRow("Description", self.description_edit)
        form.addRow("Input", self.hint_edit)
        form.addRow("", self.side_effects_box)
        form.addRow("Behaviour", self.behaviour_combo)
        form.addRow("Rules", self.rules)
        form.addRow("", rule_buttons)
        form.addRow(self.default_label, self.default_edit)
        form.addRow("Latency", self.latency_spin)
        body = QHBoxLayout()
        body.addLayout(left, 1)
        body.addWidget(self.form, 3)
        layout = QVBoxLayout(self)
        layout.addLayout(body, 1)
        layout.addWidget(self.message)
        layout.addWidget(buttons)

        self.tool_list.currentRowChanged.connect(self._on_tool_list_current_row_changed)
        self.add_button.clicked.connect(self.add_tool)
        self.remove_button.clicked.connect(self._on_remove_button_clicked)
        self.add_rule_button.clicked.connect(self.add_rule)
        self.remove_rule_button.clicked.connect(self._on_remove_rule_button_clicked)
        self.behaviour_combo.currentTextChanged.connect(self._show_behaviour)
        self.name_edit.textEdited.connect(self._on_name_edit_text_edited)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        for spec in self._drafts:
            self.tool_list.addItem(spec.name)
        self.tool_list.setCurrentRow(0 if self._drafts else -1)
        self._show(self.tool_list.currentRow())

    def specs(self) -> tuple[MockToolSpec, ...]:
        return self._checked

    def add_tool(self) -> None:
        self._keep_form()
        taken = {*self._taken, *(d.name for d in self._drafts)}
        name = next(f"tool_{n}" for n in range(1, 100) if f"tool_{n}" not in taken)
        self._drafts.append(MockToolSpec(name, ""))
        self.tool_list.addItem(name)
        self.tool_list.setCurrentRow(len(self._drafts) - 1)
        self.name_edit.setFocus()
        self.name_edit.selectAll()

    def add_rule(self, kind: str = "contains", pattern: str = "", reply: str = "") -> None:
        row = self.rules.rowCount()
        self.rules.insertRow(row)
        for column, text in ((MATCH, kind), (PATTERN, pattern), (REPLY, reply)):
            self.rules.setItem(row, column, QTableWidgetItem(text))

    def accept(self) -> None:
        self._keep_form()
        try:
            self._checked = custom_tools_from_list(custom_tools_to_list(self._drafts), self._taken)
        except ScenarioError as err:
            self.message.setText(f"⚠ {_named(str(err), self._drafts)}")
            return
        super().accept()

    # ---- the form ---------------------------------------------------------------------

    def _show(self, index: int) -> None:
        self._shown = index if 0 <= index < len(self._drafts) else None
        self.form.setEnabled(self._shown is not None)
        spec = self._drafts[index] if self._shown is not None else MockToolSpec("", "")
        self.name_edit.setText(spec.name)
        self.description_edit.setPlainText(spec.description)
        self.hint_edit.setText(spec.input_hint)
        self.side_effects_box.setChecked(not spec.read_only)
        self.behaviour_combo.setCurrentText(spec.behaviour)
        self.rules.setRowCount(0)
        for rule in spec.rules:
            self.add_rule(rule.kind, rule.pattern, rule.reply)
        self.default_edit.setText(spec.default)
        self.latency_spin.setValue(spec.latency_s)
        self._show_behaviour(spec.behaviour)

    def _keep_form(self) -> None:
        """Write the form into the draft it shows."""
        if self._shown is None:
            return
        rules = []
        for row in range(self.rules.rowCount()):
            kind, pattern, reply = (self._text(row, column) for column in (MATCH, PATTERN, REPLY))
            rules.append(CannedRule(pattern, reply, kind))  # type: ignore[arg-type]  # a choice
        self._drafts[self._shown] = replace(
            self._drafts[self._shown],
            name=self.name_edit.text().strip(),
            description=self.description_edit.toPlainText().strip(),
            input_hint=self.hint_edit.text().strip() or "input",
            read_only=not self.side_effects_box.isChecked(),
            behaviour=self.behaviour_combo.currentText(),  # type: ignore[arg-type]
            rules=tuple(rules),
            default=self.default_edit.text(),
            latency_s=self.latency_spin.value(),
        )

    def _text(self, row: int, column: int) -> str:
        item = self.rules.item(row, column)
        return item.text() if item is not None else ""

    def _show_behaviour(self, behaviour: str) -> None:
        canned = behaviour == "canned"
        for widget in (self.rules, self.add_rule_button, self.remove_rule_button):
            widget.setEnabled(canned)
        self.default_label.setText(DEFAULT_LABELS.get(behaviour, "Otherwise"))
        self.default_edit.setEnabled(behaviour != "ask")

    def _on_tool_list_current_row_changed(self, row: int) -> None:
        if row != self._shown:
            self._keep_form()
            self._show(row)

    def _on_name_edit_text_edited(self, text: str) -> None:
        item = self.tool_list.currentItem()
        if item is not None:
            item.setText(text)

    def _on_remove_button_clicked(self) -> None:
        row = self.tool_list.currentRow()
        if row < 0:
            return
        self._shown = None  # the form's draft is going: nothing to keep
        del self._drafts[row]
        self.tool_list.takeItem(row)
        self._show(self.tool_list.currentRow())

    def _on_remove_rule_button_clicked(self) -> None:
        for row in sorted({i.row() for i in self.rules.selectedIndexes()}, reverse=True):
            self.rules.removeRow(row)


def _named(message: str, drafts: list[MockToolSpec]) -> str:
    """``"tools.custom[1].description" is empty…`` → ``weather: "description" is empty…``"""
    prefix = '"tools.custom['
    if message.startswith(prefix):
        number, _, rest = message[len(prefix) :].partition("].")
        if number.isdigit() and int(number) < len(drafts):
            return f'{drafts[int(number)].name or "a tool"}: "{rest}'
    return message
