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
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from sandbox_app.core.scenarios.custom_tools import custom_tools_from_list, custom_tools_to_list
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.tools.mock import (
    BEHAVIOURS,
    MAX_LATENCY_S,
    PATTERN_KINDS,
    CannedRule,
    MockToolSpec,
)
from sandbox_app.ui.common.choice_delegate import ChoiceDelegate
from sandbox_app.ui.common.plain import plain_label
from sandbox_app.ui.tools.drafts_dialog import DraftsDialog

MATCH, PATTERN, REPLY = range(3)
DEFAULT_LABELS = {"canned": "Otherwise", "ask": "Otherwise", "error": "Error text"}


class MockToolsEditor(DraftsDialog[MockToolSpec]):
    """Edit ``specs``; after Accept, :meth:`specs` holds the checked result. ``taken``: the
    names of the other tools (built-ins, plugins), which a mock tool may not reuse."""

    def __init__(
        self, specs: tuple[MockToolSpec, ...], taken: Iterable[str], parent: QWidget | None = None
    ) -> None:
        super().__init__("Your tools", specs, "Add tool", parent)
        self.resize(820, 520)
        self._taken = tuple(taken)
        self._checked = specs
        self.tool_list = self.item_list
        self.description_edit = QPlainTextEdit()
        self.description_edit.setFixedHeight(self.fontMetrics().lineSpacing() * 3 + 12)
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
        self.default_label = plain_label(DEFAULT_LABELS["canned"])
        self.latency_spin = QDoubleSpinBox()
        self.latency_spin.setRange(0.0, MAX_LATENCY_S)
        self.latency_spin.setSingleStep(0.5)
        self.latency_spin.setSuffix(" s")
        rule_buttons = QHBoxLayout()
        rule_buttons.addWidget(self.add_rule_button)
        rule_buttons.addWidget(self.remove_rule_button)
        rule_buttons.addStretch(1)
        form = self.form_layout
        form.addRow("Description", self.description_edit)
        form.addRow("Input", self.hint_edit)
        form.addRow("", self.side_effects_box)
        form.addRow("Behaviour", self.behaviour_combo)
        form.addRow("Rules", self.rules)
        form.addRow("", rule_buttons)
        form.addRow(self.default_label, self.default_edit)
        form.addRow("Latency", self.latency_spin)
        self.add_button.clicked.connect(self.add_tool)
        self.add_rule_button.clicked.connect(self.add_rule)
        self.remove_rule_button.clicked.connect(self._on_remove_rule_button_clicked)
        self.behaviour_combo.currentTextChanged.connect(self._show_behaviour)
        self.fill()

    def specs(self) -> tuple[MockToolSpec, ...]:
        return self._checked

    def add_tool(self) -> None:
        self.add_draft(MockToolSpec(self.free_name("tool", self._taken), ""))

    def add_rule(self, kind: str = "contains", pattern: str = "", reply: str = "") -> None:
        row = self.rules.rowCount()
        self.rules.insertRow(row)
        for column, text in ((MATCH, kind), (PATTERN, pattern), (REPLY, reply)):
            self.rules.setItem(row, column, QTableWidgetItem(text))

    def accept(self) -> None:
        self.keep_form()
        try:
            self._checked = custom_tools_from_list(custom_tools_to_list(self.drafts), self._taken)
        except ScenarioError as err:
            self.message.setText(f"⚠ {_named(str(err), self.drafts)}")
            return
        super().accept()

    # ---- the form ---------------------------------------------------------------------

    def show_draft(self, draft: MockToolSpec | None) -> None:
        spec = draft or MockToolSpec("", "")
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

    def form_draft(self, draft: MockToolSpec) -> MockToolSpec:
        rules = []
        for row in range(self.rules.rowCount()):
            kind, pattern, reply = (self._text(row, column) for column in (MATCH, PATTERN, REPLY))
            rules.append(CannedRule(pattern, reply, kind))  # type: ignore[arg-type]  # a choice
        return replace(
            draft,
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
