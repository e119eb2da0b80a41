"""The judge of a test set's answers, in the window: the scenario's rubric (each case may have its
own, in the test set editor's Rubric column) and the judge — its backend, model and URL, its
mode (pass/fail, or a 1–5 score with a threshold), how many times it is asked, and the prompt
it is sent, shown in full and editable ({{question}}, {{answer}}, {{expected}}, {{rubric}},
{{trajectory}}: the run's steps, bounded).

OK checks the judge by the scenario file's own rules (core/scenarios/judge_file.py) and says
what is wrong in one line instead of closing. The offline judge's written verdicts and the
judge's other settings are kept as the file has them.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.backends.registry import backend_ids, display_name
from sandbox_app.core.scenarios.judge_file import judge_from_dict, judge_to_dict
from sandbox_app.core.scenarios.judge_spec import (
    DEFAULT_JUDGE_PROMPT,
    JUDGE_MODES,
    MAX_REPEATS,
    SCORE_RANGE,
    JudgeSpec,
)
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.ui.common.plain import plain_label

MODE_NAMES = {"pass_fail": "Pass or fail", "score": "Score 1–5"}


class JudgeDialog(QDialog):
    """Edit a rubric and a judge; after Accept, :meth:`rubric` and :meth:`judge` hold them."""

    def __init__(
        self,
        rubric: str,
        judge: JudgeSpec | None,
        parent: QWidget | None = None,
        agreement: str = "",
    ) -> None:
        """``agreement``: the judge's agreement with the human grades, said above the form
        (ui/grading/judge_agreement.py; "": not known)."""
        super().__init__(parent)
        self.setWindowTitle("Judge")
        self.resize(640, 560)
        self._kept = judge or JudgeSpec()  # what the dialog does not show stays as it was
        self._judge: JudgeSpec | None = judge
        self.rubric_edit = QPlainTextEdit(rubric)
        self.rubric_edit.setPlaceholderText(
            "What a good answer does, graded for every case without a rubric of its own"
        )
        self.backend_combo = QComboBox()  # by name, as the lanes list them; known by id
        for backend in backend_ids():
            self.backend_combo.addItem(display_name(backend), backend)
        if self.backend_combo.findData(self._kept.backend) < 0:  # one the app does not know:
            self.backend_combo.addItem(self._kept.backend, self._kept.backend)  # kept, by id
        self.backend_combo.setCurrentIndex(self.backend_combo.findData(self._kept.backend))
        self.model_edit = QLineEdit(self._kept.model)
        self.url_edit = QLineEdit(self._kept.base_url)
        self.url_edit.setPlaceholderText("the backend's own")
        self.mode_combo = QComboBox()
        for mode in JUDGE_MODES:
            self.mode_combo.addItem(MODE_NAMES[mode], mode)
        self.mode_combo.setCurrentIndex(JUDGE_MODES.index(self._kept.mode))
        self.threshold_spin = QSpinBox()
        self.threshold_spin.setRange(*SCORE_RANGE)
        self.threshold_spin.setValue(self._kept.threshold)
        self.threshold_spin.setPrefix("passes at ")
        self.repeats_spin = QSpinBox()
        self.repeats_spin.setRange(1, MAX_REPEATS)
        self.repeats_spin.setValue(self._kept.repeats)
        self.repeats_spin.setSuffix(" × (the majority decides)")
        self.prompt_edit = QPlainTextEdit(self._kept.prompt)
        self.default_button = QPushButton("Default prompt")
        self.message = plain_label()
        self.message.setWordWrap(True)
        self.agreement = plain_label(agreement)
        self.agreement.setWordWrap(True)
        self.agreement.setVisible(bool(agreement))
        form = QFormLayout()
        form.addRow(self.agreement)
        form.addRow("Rubric", self.rubric_edit)
        form.addRow("Judge backend", self.backend_combo)
        form.addRow("Model", self.model_edit)
        form.addRow("URL", self.url_edit)
        form.addRow("Verdict", self.mode_combo)
        form.addRow("Threshold", self.threshold_spin)
        form.addRow("Ask", self.repeats_spin)
        form.addRow("Prompt", self.prompt_edit)
        form.addRow("", self.default_button)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        layout = QVBoxLayout(self)
        layout.addLayout(form, 1)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self.default_button.clicked.connect(
            lambda: self.prompt_edit.setPlainText(DEFAULT_JUDGE_PROMPT)
        )
        self.mode_combo.currentIndexChanged.connect(self._on_mode_changed)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self._on_mode_changed()

    def rubric(self) -> str:
        return self.rubric_edit.toPlainText().strip()

    def judge(self) -> JudgeSpec | None:
        return self._judge

    def accept(self) -> None:
        shown = replace(
            self._kept,
            backend=self.backend_combo.currentData(),
            model=self.model_edit.text().strip(),
            base_url=self.url_edit.text().strip(),
            mode=self.mode_combo.currentData(),
            threshold=self.threshold_spin.value(),
            repeats=self.repeats_spin.value(),
            prompt=self.prompt_edit.toPlainText(),
        )
        try:  # the file's rules: what OK keeps is what a saved file reads back
            self._judge = judge_from_dict(judge_to_dict(shown))
        except ScenarioError as err:
            self.message.setText(f"⚠ {err}")
            return
        super().accept()

    def _on_mode_changed(self) -> None:
        self.threshold_spin.setEnabled(self.mode_combo.currentData() == "score")
