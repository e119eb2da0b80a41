"""Tool toggles, the search documents, the max-steps slider and the dialect picker."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
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

from sandbox_app.core.parser import DIALECTS
from sandbox_app.core.scenario import MAX_STEPS_RANGE, DialectChoice
from sandbox_app.core.tools import builtin_tools


class ToolPanel(QWidget):
    """What the model may use and how long it may try.

    Signals:
        changed(): a tool, the documents, the step limit or the dialect changed.
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
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
        self.documents_edit.textChanged.connect(self.changed)
        self.max_steps_slider = QSlider(Qt.Orientation.Horizontal)
        self.max_steps_slider.setRange(*MAX_STEPS_RANGE)
        self.max_steps_label = QLabel()
        self.max_steps_label.setMinimumWidth(self.fontMetrics().horizontalAdvance("50 steps"))
        self.max_steps_slider.valueChanged.connect(self._on_max_steps_slider_value_changed)
        self.dialect_combo = QComboBox()
        self.dialect_combo.addItems(["auto", *DIALECTS])
        self.dialect_combo.currentTextChanged.connect(self.changed)

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

    def set_values(
        self, enabled: tuple[str, ...], documents: tuple[str, ...], max_steps: int, dialect: str
    ) -> None:
        for name, box in self.checkboxes.items():
            box.setChecked(name in enabled)
        self.documents_edit.setPlainText("\n".join(documents))
        self.max_steps_slider.setValue(max_steps)
        self._on_max_steps_slider_value_changed(max_steps)
        self.dialect_combo.setCurrentText(dialect)
        self._on_tool_toggled()

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
        self.changed.emit()

    def _on_max_steps_slider_value_changed(self, value: int) -> None:
        self.max_steps_label.setText(f"{value} step{'s' * (value != 1)}")
        self.changed.emit()
