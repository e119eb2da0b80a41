"""File → Export as OpenTelemetry → Run / Comparison / Test set results…: the dialog.

An OTLP JSON file or an OTLP/HTTP endpoint (Phoenix, Langfuse, a collector) with its headers;
whether message content goes too (named in the dialog: off by default for an endpoint, on for
a file, which stays on this machine); live mode. A bad endpoint or header is one line in the
dialog, which stays open; nothing is kept or sent until it is right.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.application.otel_export import OtlpTarget, endpoint_url, parse_header
from sandbox_app.core.otel.otel_attributes import SpanPlan
from sandbox_app.ui.common.plain import plain_label

if TYPE_CHECKING:
    from collections.abc import Callable

    from sandbox_app.core.results.exports import Comparison, EvalResults
    from sandbox_app.core.scenarios.scenario import Scenario
    from sandbox_app.ui.lane.run_pane import RunPane
    from sandbox_app.ui.telemetry.otel_out import OtelOut


class Exportable(Protocol):
    """The comparison and the Test set tab's results (ui/window/run_tabs.py's RunTabs)."""

    def comparison(self) -> Comparison | None: ...

    def test_set_results(self) -> EvalResults | None: ...


class OtelTargets(Protocol):
    """What the dialog exports from (MainWindow is one)."""

    @property
    def otel(self) -> OtelOut: ...

    @property
    def run_tabs(self) -> Exportable: ...


class RunShown(Protocol):
    """The Run tab's pane, and the scenario being edited for a run kept without its own."""

    @property
    def run_pane(self) -> RunPane: ...

    def current_scenario(self) -> Scenario: ...


CONTENT_TEXT = (
    "Include message content: the system prompt, messages, thinking, tool inputs and results "
    "(may hold private data)"
)
LIVE_TEXT = "Live mode: send every run to this endpoint as it goes"
SUBJECTS = {"run": "Run", "comparison": "Comparison", "test set": "Test set results"}


class OtelDialog(QDialog):
    """``plans(content)`` makes the subject's spans (empty: nothing to export yet)."""

    def __init__(
        self,
        out: OtelOut,
        subject: str,
        plans: Callable[[bool], list[SpanPlan]],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.out, self.plans = out, plans
        self.setWindowTitle(f"Export {subject} as OpenTelemetry")
        self.to_file = QRadioButton("OTLP JSON file")
        self.to_endpoint = QRadioButton("OTLP/HTTP endpoint")
        self.endpoint = QLineEdit(out.endpoint)
        self.endpoint.setPlaceholderText("http://localhost:6006/v1/traces (Phoenix)")
        self.header_rows: list[tuple[QLineEdit, QLineEdit]] = []
        self.headers_box = QVBoxLayout()
        kept = out.headers()
        for name in out.header_names or [""]:
            self.add_header(name, kept.get(name, ""))
        add = QPushButton("Add header")
        add.clicked.connect(lambda: self.add_header("", ""))
        self.content = QCheckBox(CONTENT_TEXT)
        self.live = QCheckBox(LIVE_TEXT)
        self.live.setChecked(out.live)
        self.error = plain_label()
        self.error.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Endpoint", self.endpoint)
        form.addRow("Headers", self.headers_box)
        form.addRow("", add)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Export")
        buttons.accepted.connect(self._on_export)
        buttons.rejected.connect(self.reject)
        choice = QHBoxLayout()
        choice.addWidget(self.to_file)
        choice.addWidget(self.to_endpoint)
        layout = QVBoxLayout(self)
        layout.addLayout(choice)
        layout.addLayout(form)
        for widget in (self.content, self.live, self.error, buttons):
            layout.addWidget(widget)
        self.to_file.toggled.connect(self._on_target_changed)
        (self.to_endpoint if out.endpoint else self.to_file).setChecked(True)
        self._on_target_changed()

    def add_header(self, name: str, value: str) -> None:
        name_edit, value_edit = QLineEdit(name), QLineEdit(value)
        name_edit.setPlaceholderText("Authorization")
        value_edit.setPlaceholderText("value (kept in the system keyring)")
        value_edit.setEchoMode(QLineEdit.EchoMode.Password)
        row = QHBoxLayout()
        row.addWidget(name_edit)
        row.addWidget(value_edit, 1)
        self.headers_box.addLayout(row)
        self.header_rows.append((name_edit, value_edit))

    def _on_target_changed(self) -> None:
        """The content default follows the target: on for a file, as kept for an endpoint."""
        to_file = self.to_file.isChecked()
        self.content.setChecked(to_file or self.out.content)
        for widget in (self.endpoint, self.live, *(w for row in self.header_rows for w in row)):
            widget.setEnabled(not to_file)

    def headers(self) -> dict[str, str]:
        """The rows filled in (ValueError: one line, for a bad name or value)."""
        found: dict[str, str] = {}
        for name_edit, value_edit in self.header_rows:
            name, value = name_edit.text().strip(), value_edit.text()
            if name or value:
                key, text = parse_header(f"{name}={value}")
                found[key] = text
        return found

    def _on_export(self) -> None:
        if self.out.busy:
            self.error.setText("An export is still on its way: wait for its line.")
            return
        if self.to_file.isChecked():
            name, _ = QFileDialog.getSaveFileName(
                self, "Export as OpenTelemetry", "trace.otlp.json", "OTLP JSON (*.json)"
            )
            if name:
                self.export_to(OtlpTarget(file=Path(name), content=self.content.isChecked()))
            return
        try:
            url, headers = endpoint_url(self.endpoint.text()), self.headers()
        except ValueError as err:
            self.error.setText(f"⚠ {err}")
            return
        self.out.keep(url, headers, self.content.isChecked(), self.live.isChecked())
        self.export_to(self.out.target(self.content.isChecked()))

    def export_to(self, target: OtlpTarget) -> bool:
        """Export the subject to ``target`` (on the export's thread) and close; False, with
        the dialog's line saying why, when there is nothing to export yet."""
        plans = self.plans(target.with_content)
        if not plans and target.file is None and self.out.live:
            self.out.said.emit(f"OpenTelemetry: live mode on: each run goes to {target.where}")
            self.accept()
            return True
        if not plans:
            self.error.setText("Nothing to export yet: run it first.")
            return False
        self.out.export(plans, target)
        self.accept()
        return True


def open_otel_dialog(does: OtelTargets, tab: RunShown, subject: str) -> OtelDialog:
    """The dialog for ``subject`` ("run", "comparison" or "test set"), shown."""
    from sandbox_app.core.otel import otel_subjects

    def plans(content: bool) -> list[SpanPlan]:
        if subject == "run":
            record = tab.run_pane.shown_record()
            if record is None or not record.done:
                return []
            title = (record.scenario or tab.current_scenario()).title
            return otel_subjects.single_run(record, title, content=content)
        if subject == "comparison":
            comparison = does.run_tabs.comparison()
            return otel_subjects.comparison_spans(comparison, content=content) if comparison else []
        results = does.run_tabs.test_set_results()
        return otel_subjects.evaluation_spans(results, content=content) if results else []

    dialog = OtelDialog(does.otel, SUBJECTS[subject].lower(), plans, tab.run_pane.window())
    dialog.open()
    return dialog
