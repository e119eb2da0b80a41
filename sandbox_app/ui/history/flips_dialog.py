"""Compare with…: two evaluations arm by arm (core/comparing/): each pair of arms' verdict in
words (the difference with its 95 % interval), then the cases whose pass rate moved, k/N →
k/N, largest change first; arms without a counterpart are named. Show traces opens a moved
case's runs side by side (ui/trace/trace_diff_dialog.py): one that passed before and one that
failed after for a case that fell, the other way round for one that rose.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.application.history import record_of
from sandbox_app.core.comparing.arm_diff import ArmComparison, CaseChange, Cell, EvaluationDiff
from sandbox_app.core.comparing.evaluations import diff_evaluations, version_names
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.running.records import RunRecord
from sandbox_app.ui.common.plain import plain_label
from sandbox_app.ui.trace.trace_diff_dialog import TraceDiffDialog, open_diff

COLUMNS = ("Arms", "Case", "Before", "After", "Change", "Question")


class FlipsDialog(QDialog):
    """Raises HistoryError (one line) when either evaluation is not in ``store``."""

    def __init__(
        self,
        store: HistoryStore,
        first: int,
        second: int,
        names: Mapping[str, str] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        """``names``: prompt version ids → names, beside those of the scenario files."""
        super().__init__(parent)
        self.setWindowTitle(f"Evaluation #{first} → #{second}")
        self.resize(960, 520)
        self.store, self.first, self.second = store, first, second
        paths = tuple(store.evaluation(e, tallied=False).scenario_path for e in (first, second))
        known = {**version_names(*paths), **(names or {})}
        self.diff: EvaluationDiff = diff_evaluations(store, first, second, known)
        self.rows_shown: list[tuple[ArmComparison, CaseChange]] = [
            (c, change) for c in self.diff.comparisons for change in c.changes
        ]
        self.trace_diff: TraceDiffDialog | None = None
        self.summary = plain_label(_summary(self.diff, f"#{first}", f"#{second}"))
        self.summary.setWordWrap(True)
        self.table = QTableWidget(len(self.rows_shown), len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        for r, (comparison, change) in enumerate(self.rows_shown):
            sign = "+" if change.change > 0 else ""
            cells = (
                comparison.title,
                f"{change.case + 1}",
                change.a.text(),
                change.b.text(),
                f"{sign}{round(change.change * 100)} points",
                change.b.question,
            )
            for c, text in enumerate(cells):
                self.table.setItem(r, c, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()
        self.traces_button = QPushButton("Show traces")
        self.traces_button.setToolTip("A run of this case in each evaluation, side by side")
        self.traces_button.setEnabled(bool(self.rows_shown))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(self.traces_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        if self.rows_shown:
            self.table.selectRow(0)
        self.traces_button.clicked.connect(lambda: self.show_traces(self.table.currentRow()))
        self.table.cellDoubleClicked.connect(lambda row, _column: self.show_traces(row))

    def rows(self) -> list[tuple[str, ...]]:
        """What the table shows, row by row."""
        return [
            tuple(
                (self.table.item(r, c) or QTableWidgetItem()).text()
                for c in range(self.table.columnCount())
            )
            for r in range(self.table.rowCount())
        ]

    def show_traces(self, row: int) -> TraceDiffDialog | None:
        """A run of moved case ``row`` in each evaluation, side by side: the verdict that
        changed (a pass before and a fail after for a case that fell)."""
        if not 0 <= row < len(self.rows_shown):
            return None
        change = self.rows_shown[row][1]
        fell = change.change < 0
        runs = [
            self._run(self.first, change.a, passed=fell),
            self._run(self.second, change.b, passed=not fell),
        ]
        self.trace_diff = open_diff(runs, 0, 1, self)
        return self.trace_diff

    def _run(self, evaluation: int, cell: Cell, passed: bool) -> tuple[str, RunRecord]:
        repeats = self.store.evaluation(evaluation, tallied=False).repeats
        keys = [(cell.lane, cell.case, r) for r in range(repeats)]
        found = list(self.store.results(evaluation, keys))
        chosen = next((r for r in found if r.passed == passed), found[0] if found else None)
        if chosen is None:
            return f"#{evaluation} · no run", record_of(())
        key = [(chosen.lane, chosen.case, chosen.repeat)]
        full = list(self.store.results(evaluation, key, events=True))
        state = "passed" if chosen.passed else "failed"
        title = f"#{evaluation} · {chosen.lane} · repeat {chosen.repeat + 1} · {state}"
        return title, record_of(full[0].events or () if full else ())


def _summary(diff: EvaluationDiff, first: str, second: str) -> str:
    lines = [f"{c.title}: {c.sentence(first, second)}" for c in diff.comparisons]
    if not diff.comparisons:
        lines.append(f"{first} and {second} have no arm in common")
    for where, names in ((first, diff.only_first), (second, diff.only_second)):
        if names:
            lines.append(f"Only in {where} (no counterpart): " + "; ".join(names))
    return "\n".join(lines)
