"""Generate cases…, from the test set editor: a chosen model (any kind; the offline one plays
the scenario's ``script.generated_cases``) proposes ``n`` new cases from the prompt, the
tools and the cases the editor holds (application/case_generator.py); they are listed with a
tick each, their question and expected answer editable, their trajectory checks shown.
A duplicate of a case there is (or of an earlier proposal) is flagged and left unticked;
**Add ticked** hands only the ticked ones to the editor, whose OK keeps them.

The model's reply is data, read by core/optimizing/generated_cases.py; what it wrote shows
as plain text in table cells and labels.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.application.backend_choice import BackendChoice
from sandbox_app.application.case_generator import generate_cases
from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.core.optimizing.generated_cases import (
    DEFAULT_COUNT,
    MAX_COUNT,
    Proposals,
    normalized,
)
from sandbox_app.core.running.backend import BackendError
from sandbox_app.core.scenarios.lane_settings import SettingError
from sandbox_app.core.scenarios.scenario import EvalCase, Scenario
from sandbox_app.core.tools import Tool
from sandbox_app.core.untrusted.file_reader import ReadError
from sandbox_app.ui.common.plain import plain_label

QUESTION, ANSWER, CHECKS, NOTE = range(4)
HEADERS = ("Question", "Expected answer", "Trajectory checks", "Note")
CASE = Qt.ItemDataRole.UserRole  # on a row's question: the case as proposed
ORDERS = {"any": "", "in_order": ", in this order", "exact": ", exactly these"}


class CasesDialog(QDialog):
    def __init__(
        self,
        scenario: Scenario,
        tools: Sequence[Tool],
        existing: Sequence[EvalCase],
        models: Sequence[BackendChoice],
        keys: KeyStore,
        known_tools: Iterable[str] | None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Generate cases")
        self.resize(1000, 460)
        self.scenario, self.tools, self.keys = (
            scenario.with_changes(test_set=tuple(existing)),
            tools,
            keys,
        )
        self._models = list(models)
        self._known = list(known_tools) if known_tools is not None else None
        self._requests = 0  # the offline model plays its written replies in turn
        self.task: asyncio.Task[None] | None = None
        self.model_combo = QComboBox()
        self.model_combo.addItems([lane.label for lane in self._models])
        if scenario.script.generated_cases:  # the offline model has replies for this scenario
            self.model_combo.setCurrentIndex(len(self._models) - 1)
        self.count_spin = QSpinBox(minimum=1, maximum=MAX_COUNT, value=DEFAULT_COUNT)
        self.generate_button = QPushButton("Generate")
        self.status = plain_label()
        self.status.setWordWrap(True)
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setHorizontalHeaderLabels(list(HEADERS))
        self.table.horizontalHeader().setSectionResizeMode(QUESTION, QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setDefaultSectionSize(180)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.add_button = self.buttons.addButton(
            "Add ticked", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.add_button.setEnabled(False)
        form = QFormLayout()
        form.addRow("Model", self.model_combo)
        row = QHBoxLayout()
        row.addWidget(self.count_spin)
        row.addWidget(self.generate_button)
        row.addStretch(1)
        form.addRow("New cases", row)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.buttons)
        self.generate_button.clicked.connect(self.generate)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.table.itemChanged.connect(self._on_item_changed)

    def generate(self) -> None:
        if self.task is not None:
            return
        self._requests += 1
        lane = self._models[self.model_combo.currentIndex()]
        self.status.setText(f"Asking {lane.label} for {self.count_spin.value()} cases…")
        self.generate_button.setEnabled(False)
        self.task = asyncio.ensure_future(self._generate(lane, self.count_spin.value()))

    async def _generate(self, lane: BackendChoice, n: int) -> None:
        try:
            proposals = await generate_cases(
                self.scenario,
                self.tools,
                lane,
                n,
                self.keys,
                request=self._requests,
                known_tools=self._known,
            )
        except (BackendError, ReadError, SettingError) as err:  # ScenarioError is a ReadError
            self.status.setText(f"⚠ {err}")
        else:
            self._show(proposals)
        finally:
            self.task = None
            self.generate_button.setEnabled(True)

    def _show(self, proposals: Proposals) -> None:
        self.table.blockSignals(True)
        for proposed in proposals.cases:
            row = self.table.rowCount()
            self.table.insertRow(row)
            case = proposed.case
            question = QTableWidgetItem(case.question)
            question.setData(CASE, case)
            question.setFlags(question.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            ticked = Qt.CheckState.Unchecked if proposed.duplicate else Qt.CheckState.Checked
            question.setCheckState(ticked)
            self.table.setItem(row, QUESTION, question)
            self.table.setItem(row, ANSWER, QTableWidgetItem(case.expected.answer))
            checks = QTableWidgetItem(_checks_text(case))
            checks.setFlags(checks.flags() & ~Qt.ItemFlag.ItemIsEditable)
            self.table.setItem(row, CHECKS, checks)
            note = QTableWidgetItem()
            note.setFlags(note.flags() & ~Qt.ItemFlag.ItemIsEditable)
            self.table.setItem(row, NOTE, note)
        self.table.blockSignals(False)
        self._flag()
        n, left = len(proposals.cases), proposals.problems
        said = f"{n} cases proposed: tick the ones to add, edit a question or answer first."
        if left:
            said += f" Left out: {left[0]}" + (
                f" (and {len(left) - 1} more)" if len(left) > 1 else ""
            )
        self.status.setText(said)
        self.add_button.setEnabled(self.table.rowCount() > 0)

    def _flag(self) -> None:
        """Each row's note: the case or earlier row its question repeats ("" when none)."""
        seen = {
            normalized(c.question): f"case {i}" for i, c in enumerate(self.scenario.test_set, 1)
        }
        self.table.blockSignals(True)
        for row in range(self.table.rowCount()):
            key = normalized(self._item(row, QUESTION).text())
            repeated = seen.get(key)
            self._item(row, NOTE).setText(f"duplicate of {repeated}" if repeated else "")
            seen.setdefault(key, f"row {row + 1}")
        self.table.blockSignals(False)

    def _on_item_changed(self, item: QTableWidgetItem) -> None:
        if item.column() == QUESTION:
            self._flag()  # an edited question may repeat another, or no longer

    def chosen(self) -> tuple[EvalCase, ...]:
        """The ticked rows' cases, their question and answer as edited."""
        out = []
        for row in range(self.table.rowCount()):
            item = self._item(row, QUESTION)
            if item.checkState() != Qt.CheckState.Checked:
                continue
            case: EvalCase = item.data(CASE)
            answer = self._item(row, ANSWER).text().strip()
            expected = replace(case.expected, answer=answer)
            out.append(replace(case, question=item.text().strip(), expected=expected))
        return tuple(out)

    def ticked(self, row: int) -> bool:
        return self._item(row, QUESTION).checkState() == Qt.CheckState.Checked

    def note(self, row: int) -> str:
        return self._item(row, NOTE).text()

    def _item(self, row: int, column: int) -> QTableWidgetItem:
        item = self.table.item(row, column)
        assert item is not None  # every cell is made by _show
        return item

    def reject(self) -> None:
        if self.task is not None:
            self.task.cancel()
        super().reject()


def _checks_text(case: EvalCase) -> str:
    checks = case.checks
    parts = []
    if checks.tools_called:
        parts.append(f"calls {', '.join(checks.tools_called)}{ORDERS[checks.order or 'any']}")
    if checks.never:
        parts.append(f"never {', '.join(checks.never)}")
    if checks.max_steps is not None:
        parts.append(f"at most {checks.max_steps} steps")
    return "; ".join(parts)
