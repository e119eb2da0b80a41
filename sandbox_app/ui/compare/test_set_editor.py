"""The test set editor: the scenario's cases as an editable table, plus CSV/JSONL import.

Each row is a case's question, expected answer and match rule, its trajectory checks (tools
called, in the order given; order; tools never called; max steps — an empty cell: the
scenario's default) and its rubric (what a judge grades its answer by; empty: the scenario's,
set with the rest of the judge in **Judge…**, ui/compare/judge_dialog.py). The tolerance, a
case's own documents, scripted replies and other checks are kept as they are (the file holds
them). OK checks every row by the scenario file's own rules (core/scenarios/test_set.py) and
says what is wrong in one line, naming the row, instead of closing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.core.scenarios.judge_spec import JudgeSpec
from sandbox_app.core.scenarios.scenario import MATCH_RULES, EvalCase, Expected, Scenario
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.test_set import cases_from_list, cases_to_list, import_file
from sandbox_app.core.scenarios.trajectory_spec import ORDERS, names_in, unknown_tools
from sandbox_app.core.tools import Tool, tool_names
from sandbox_app.ui.common.choice_delegate import ChoiceDelegate
from sandbox_app.ui.common.plain import plain_label, tip
from sandbox_app.ui.compare.judge_dialog import JudgeDialog

QUESTION, ANSWER, MATCH, TOOLS, ORDER, NEVER, STEPS, RUBRIC = range(8)
HEADERS = [
    *("Question", "Expected answer", "Match"),
    *("Tools called", "Order", "Never", "Max steps", "Rubric"),
]
KEPT = Qt.ItemDataRole.UserRole  # on a row's question: the case as the file has it


class TestSetEditor(QDialog):
    """Edit ``cases``; after Accept, :meth:`cases` holds the checked result."""

    __test__ = False  # a widget, not a pytest class

    def __init__(
        self,
        cases: tuple[EvalCase, ...],
        parent: QWidget | None = None,
        rubric: str = "",
        judge: JudgeSpec | None = None,
    ) -> None:
        super().__init__(parent)
        self._rubric, self._judge = rubric, judge  # the scenario's: Judge… edits them
        self.known_tools: list[str] | None = None  # every tool a run could have; None: unchecked
        self.setWindowTitle("Test set")
        self.resize(1100, 480)
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.setItemDelegateForColumn(MATCH, ChoiceDelegate(MATCH_RULES, self.table))
        self.table.setItemDelegateForColumn(ORDER, ChoiceDelegate(("", *ORDERS), self.table))
        for column, text in _TIPS.items():
            header_item = self.table.horizontalHeaderItem(column)
            assert header_item is not None  # made by setHorizontalHeaderLabels
            header_item.setToolTip(tip(text))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QUESTION, QHeaderView.ResizeMode.Stretch)
        header.setDefaultSectionSize(160)
        self.add_button = QPushButton("Add case")
        self.remove_button = QPushButton("Remove")
        self.import_button = QPushButton("Import CSV or JSONL…")
        self.judge_button = QPushButton("Judge…")
        self.judge_button.setToolTip("The rubric every case is graded by, and the judge model")
        self.judge_dialog: JudgeDialog | None = None
        self.message = plain_label()
        self.message.setWordWrap(True)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        row = self.buttons_row = QHBoxLayout()  # Generate cases… joins it (ui/optimizing)
        for button in (self.add_button, self.remove_button, self.import_button, self.judge_button):
            row.addWidget(button)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self.add_button.clicked.connect(self.add_case)
        self.remove_button.clicked.connect(self._on_remove_button_clicked)
        self.import_button.clicked.connect(self._on_import_button_clicked)
        self.judge_button.clicked.connect(self.edit_judge)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self._checked: tuple[EvalCase, ...] = cases
        self._append(cases)

    def cases(self) -> tuple[EvalCase, ...]:
        return self._checked

    def judging(self) -> tuple[str, JudgeSpec | None]:
        """The scenario's rubric and judge, as Judge… left them."""
        return self._rubric, self._judge

    def edit_judge(self) -> JudgeDialog:
        dialog = self.judge_dialog = JudgeDialog(self._rubric, self._judge, self)
        dialog.accepted.connect(lambda: self._judged(dialog.rubric(), dialog.judge()))
        dialog.open()
        return dialog

    def _judged(self, rubric: str, judge: JudgeSpec | None) -> None:
        self._rubric, self._judge = rubric, judge

    @classmethod
    def of(
        cls, scenario: Scenario, sources: Sequence[Tool], parent: QWidget | None = None
    ) -> TestSetEditor:
        """The editor of ``scenario``'s cases, its rubric and judge; an imported case naming a
        tool that none of its tools (``sources``: the MCP servers' too) has is said."""
        editor = cls(scenario.test_set, parent, scenario.rubric, scenario.judge)
        editor.known_tools = tool_names(scenario.custom_tools, sources=sources)
        return editor

    def add_case(self) -> None:
        self._append((EvalCase("", Expected("")),))
        last = self.table.rowCount() - 1
        self.table.setCurrentCell(last, QUESTION)
        self.table.editItem(self._cell(last, QUESTION))

    def shown_cases(self) -> tuple[EvalCase, ...]:
        """Each row's question and answer as they read now, unchecked (what Generate
        cases… shows the model, and finds duplicates among)."""
        rows = range(self.table.rowCount())
        return tuple(
            EvalCase(self._cell(r, QUESTION).text().strip(), Expected(self._cell(r, ANSWER).text()))
            for r in rows
        )

    def add_cases(self, cases: tuple[EvalCase, ...]) -> None:
        """Generated cases as rows; OK keeps them, checked like any other."""
        self._append(cases)
        self.message.setText(f"Added {len(cases)} generated cases: OK keeps them.")

    def import_file(self, path: Path) -> bool:
        """Add the cases of a CSV or JSONL file; False (and one line why) if it cannot."""
        try:
            imported = import_file(path)
        except ScenarioError as err:  # one line naming the file (and the row)
            self.message.setText(f"⚠ {err}")
            return False
        self._append(imported)
        said = f"Imported {len(imported)} cases from {path.name}."
        if self.known_tools is not None:
            unknown = unknown_tools((case.checks for case in imported), self.known_tools)
            if unknown:  # a typo, or names run together: the check would fail every run
                names = ", ".join(f'"{name}"' for name in unknown[:3])
                more = f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""
                said += f" ⚠ No tool is named {names}{more}."
        self.message.setText(said)
        return True

    def accept(self) -> None:
        try:
            self._checked = cases_from_list(self._rows())
        except ScenarioError as err:
            # "test_set[2].question is empty" → the row number the user sees.
            self.message.setText(f"⚠ {_row_named(str(err))}")
            return
        super().accept()

    def _rows(self) -> list[dict[str, Any]]:
        rows = []
        for row in range(self.table.rowCount()):
            kept: EvalCase = self._cell(row, QUESTION).data(KEPT)
            expected = {
                "answer": self._cell(row, ANSWER).text().strip(),
                "match": self._cell(row, MATCH).text(),
                "tolerance": kept.expected.tolerance,
            }
            (item,) = cases_to_list((kept,))
            question = self._cell(row, QUESTION).text()
            rubric = self._cell(row, RUBRIC).text().strip()
            item |= {"question": question, "expected": expected, "rubric": rubric}
            checks = self._checks(row, dict(item.get("checks", {})))
            item.pop("checks", None)
            rows.append(item | ({"checks": checks} if checks else {}))
        return rows

    def _checks(self, row: int, checks: dict[str, Any]) -> dict[str, Any]:
        """The case's checks with the row's cells over them (an empty cell: none said)."""
        for column, key in ((TOOLS, "tools_called"), (NEVER, "never")):
            checks[key] = names_in(self._cell(row, column).text()) or None
        checks["order"] = self._cell(row, ORDER).text().strip() or None
        steps = self._cell(row, STEPS).text().strip()
        # Not a number: left as text, for the file's rule to refuse in one line.
        checks["max_steps"] = (int(steps) if steps.isdigit() else steps) if steps else None
        return {key: value for key, value in checks.items() if value is not None}

    def _cell(self, row: int, column: int) -> QTableWidgetItem:
        item = self.table.item(row, column)
        assert item is not None  # every cell is made by _append
        return item

    def _append(self, cases: tuple[EvalCase, ...]) -> None:
        for case in cases:
            row = self.table.rowCount()
            self.table.insertRow(row)
            question = QTableWidgetItem(case.question)
            question.setData(KEPT, case)
            self.table.setItem(row, QUESTION, question)
            self.table.setItem(row, ANSWER, QTableWidgetItem(case.expected.answer))
            self.table.setItem(row, MATCH, QTableWidgetItem(case.expected.match))
            checks = case.checks
            cells = {
                TOOLS: ", ".join(checks.tools_called or ()),
                ORDER: checks.order or "",
                NEVER: ", ".join(checks.never or ()),
                STEPS: "" if checks.max_steps is None else str(checks.max_steps),
            }
            for column, text in cells.items():
                self.table.setItem(row, column, QTableWidgetItem(text))
            self.table.setItem(row, RUBRIC, QTableWidgetItem(case.rubric))

    def _on_remove_button_clicked(self) -> None:
        for row in sorted({i.row() for i in self.table.selectedIndexes()}, reverse=True):
            self.table.removeRow(row)

    def _on_import_button_clicked(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self, "Import test cases", "", "Test cases (*.csv *.jsonl *.json);;All files (*)"
        )
        if name:
            self.import_file(Path(name))


_TIPS = {
    TOOLS: "Tools the run must call, separated by commas or spaces (empty: the scenario's default)",
    ORDER: "any: each called at least once · in_order: in this order · exact: exactly these",
    NEVER: "Tools the run must never call, separated by commas or spaces",
    STEPS: "The most steps the run may take",
}


def _row_named(message: str) -> str:
    """``"test_set[2].question" is empty.`` → ``Row 3: "question" is empty.``"""
    if message.startswith('"test_set['):
        number, _, rest = message[len('"test_set[') :].partition("].")
        if number.isdigit():
            return f'Row {int(number) + 1}: "{rest}'
    return message
