"""Add to test set…: a run on screen (the Run tab's or any compare lane's) made into a case of
the scenario's test set — the way a failure seen once becomes a regression case.

The dialog is filled from the run: its question as asked, its final answer as the expected
answer (with a match rule) — or, for a run judged wrong, the scenario's expected answer, never
the wrong one —, and the tools it called, in order, as a trajectory check; all editable. OK
checks the case by the scenario file's rules (one line naming the field, and the dialog
stays), appends it to the test set through the workspace, an edit like the test set editor's
(the document is modified; Save writes it), and says so in the window's status bar.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QMainWindow,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.core.results.trajectory import tool_calls
from sandbox_app.core.results.verdict import verdict
from sandbox_app.core.running.events import RunStarted
from sandbox_app.core.running.records import RunRecord
from sandbox_app.core.scenarios.scenario import MATCH_RULES, EvalCase, Expected
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.test_set import cases_from_list
from sandbox_app.core.scenarios.trajectory_spec import ORDERS, names_in
from sandbox_app.ui.common.plain import plain_label
from sandbox_app.ui.common.workspace_signals import QtWorkspace


def asked(record: RunRecord) -> str:
    """The question the run was asked (its {{variables}} filled)."""
    started = next((e for e in record.events if isinstance(e, RunStarted)), None)
    return started.question if started is not None else record.settings.question


def expected_of(record: RunRecord) -> tuple[str, str]:
    """The expected answer and match rule a run suggests: its answer, unless the scenario's
    expected answer judged it wrong — then that expected answer (a wrong answer is no
    regression case's truth)."""
    answer = (record.finished.answer if record.finished else None) or ""
    expected: Expected | None = record.scenario.expected if record.scenario else None
    if expected is not None and verdict(answer, expected) is False:
        return expected.answer, expected.match
    return answer, "contains"


class AddToTestSet(QDialog):
    """The case a run makes, editable; after Accept, :attr:`case` holds it, checked."""

    def __init__(self, record: RunRecord, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Add to test set")
        self.resize(560, 0)
        answer, match = expected_of(record)
        tools = [call.tool for call in tool_calls(record.events)]
        self.question = QLineEdit(asked(record))
        self.answer = QLineEdit(answer)
        self.match = QComboBox()
        self.match.addItems(MATCH_RULES)
        self.match.setCurrentText(match)
        self.tools = QLineEdit(", ".join(tools))
        self.tools.setToolTip("The tools the run must call, separated by commas")
        self.order = QComboBox()
        self.order.addItems(ORDERS)
        # The path this run took, in its order: another may call more tools between.
        self.order.setCurrentText("in_order" if len(tools) > 1 else "any")
        self.never = QLineEdit()
        self.never.setToolTip("Tools the run must never call, separated by commas")
        self.max_steps = QLineEdit()
        self.max_steps.setPlaceholderText("the scenario's")
        self.message = plain_label()
        self.message.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Question", self.question)
        form.addRow("Expected answer", self.answer)
        form.addRow("Match", self.match)
        form.addRow("Tools called", self.tools)
        form.addRow("Order", self.order)
        form.addRow("Never called", self.never)
        form.addRow("Max steps", self.max_steps)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self.case: EvalCase | None = None

    def item(self) -> dict[str, Any]:
        """The case as the scenario file holds it (checked when OK is pressed)."""
        checks: dict[str, Any] = {}
        tools, never = names_in(self.tools.text()), names_in(self.never.text())
        if tools:
            checks |= {"tools_called": tools, "order": self.order.currentText()}
        if never:
            checks["never"] = never
        steps = self.max_steps.text().strip()
        if steps:  # not a number: left as text, for the file's rule to refuse in one line
            checks["max_steps"] = int(steps) if steps.isdigit() else steps
        expected = {"answer": self.answer.text().strip(), "match": self.match.currentText()}
        item = {"question": self.question.text().strip(), "expected": expected}
        return item | ({"checks": checks} if checks else {})

    def accept(self) -> None:
        try:
            (self.case,) = cases_from_list([self.item()])
        except ScenarioError as err:  # '"test_set[0].expected.answer" is empty.'
            self.message.setText("⚠ " + str(err).replace('"test_set[0].', '"'))
            return
        super().accept()


def open_add_to_test_set(
    record: RunRecord, workspace: QtWorkspace, parent: QWidget
) -> AddToTestSet:
    """The dialog, open (not modal: runs elsewhere go on); OK appends its case to the test set
    of the scenario as it is then."""
    dialog = AddToTestSet(record, parent)

    def add() -> None:
        assert dialog.case is not None  # accepted only with a checked case
        cases = workspace.model.scenario.test_set
        workspace.update(dialog, test_set=(*cases, dialog.case))
        window = parent.window()
        if isinstance(window, QMainWindow):
            window.statusBar().showMessage(f"Added case {len(cases) + 1} to the test set.")

    dialog.accepted.connect(add)
    dialog.open()
    return dialog
