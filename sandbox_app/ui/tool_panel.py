"""Tool toggles, the search documents, the max-steps slider and the dialect picker.

They edit the workspace's ``enabled_tools``, ``documents``, ``max_steps`` and ``dialect``.
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.core.dialects import DIALECTS
from sandbox_app.core.metrics import plural
from sandbox_app.core.scenario import MAX_STEPS_RANGE, DialectChoice
from sandbox_app.core.tools import builtin_tools
from sandbox_app.core.workspace import Change
from sandbox_app.ui.workspace_signals import QtWorkspace


class ToolPanel(QWidget):
    """What the model may use and how long it may try."""

    def __init__(self, workspace: QtWorkspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.workspace = workspace
        self.checkboxes: dict[str, QCheckBox] = {}
        toggles = QHBoxLayout()
        for tool in builtin_tools():
            box = QCheckBox(tool.name)
            box.setToolTip(tool.description)
            box.toggled.connect(self._on_tool_toggled)
            self.checkboxes[tool.name] = box
            toggles.addWidget(box)
        toggles.addStretch(1)
        self.documents_edit = QPlainTextEdit()
        self.documents_edit.setPlaceholderText("Documents for the search tool, one per line")
        self.documents_edit.setFixedHeight(self.fontMetrics().lineSpacing() * 5)
        self.documents_edit.setTabChangesFocus(True)  # one document per line; Tab moves on
        self.documents_edit.textChanged.connect(self._on_documents_edit_text_changed)
        self.max_steps_slider = QSlider(Qt.Orientation.Horizontal)
        self.max_steps_slider.setRange(*MAX_STEPS_RANGE)
        self.max_steps_label = QLabel()
        self.max_steps_label.setMinimumWidth(self.fontMetrics().horizontalAdvance("50 steps"))
        self.max_steps_slider.valueChanged.connect(self._on_max_steps_slider_value_changed)
        self.dialect_combo = QComboBox()
        self.dialect_combo.addItems(["auto", *DIALECTS])
        self.dialect_combo.currentTextChanged.connect(self._on_dialect_combo_text_changed)

        steps_row = QHBoxLayout()
        steps_row.addWidget(self.max_steps_slider, 1)
        steps_row.addWidget(self.max_steps_label)
        form = QFormLayout()
        form.addRow("Max steps", steps_row)
        form.addRow("Dialect", self.dialect_combo)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("<b>Tools</b>"))
        layout.addLayout(toggles)
        layout.addWidget(self.documents_edit)
        layout.addLayout(form)
        workspace.changed.connect(self._on_workspace_changed)

    def _on_workspace_changed(self, change: Change) -> None:
        if not change.loaded:
            return
        s = self.workspace.model.scenario
        widgets = [*self.checkboxes.values(), self.documents_edit, self.max_steps_slider]
        blockers = [QSignalBlocker(w) for w in (*widgets, self.dialect_combo)]
        for name, box in self.checkboxes.items():
            box.setChecked(name in s.enabled_tools)
        self.documents_edit.setPlainText("\n".join(s.documents))
        self.max_steps_slider.setValue(s.max_steps)
        self.dialect_combo.setCurrentText(s.dialect)
        for blocker in blockers:
            blocker.unblock()
        self._show_max_steps(s.max_steps)
        self.documents_edit.setEnabled(self.checkboxes["search"].isChecked())

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
