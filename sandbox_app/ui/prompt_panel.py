"""The prompt editor: the system prompt template, its rendered form, and the question."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QFontDatabase, QKeyEvent
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTabWidget, QVBoxLayout, QWidget

from sandbox_app.ui.highlighter import LabelHighlighter


class PromptPanel(QWidget):
    """Template (editable, labels highlighted) beside the rendered prompt (read-only).

    Signals:
        changed(): the template or the question was edited.
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.template_edit = QPlainTextEdit()
        self.template_edit.setFont(mono)
        self.template_edit.setPlaceholderText("System prompt; {tools} and {format} are filled in.")
        self.template_highlighter = LabelHighlighter(self.template_edit.document(), self.palette())
        self.rendered_view = QPlainTextEdit()
        self.rendered_view.setFont(mono)
        self.rendered_view.setReadOnly(True)
        self.rendered_highlighter = LabelHighlighter(self.rendered_view.document(), self.palette())
        self.tabs = QTabWidget()
        self.tabs.addTab(self.template_edit, "Template")
        self.tabs.addTab(self.rendered_view, "Rendered prompt")
        self.prompt_error = QLabel()
        self.prompt_error.setObjectName("promptError")
        self.prompt_error.setWordWrap(True)
        self.prompt_error.hide()
        self.question_edit = QPlainTextEdit()
        self.question_edit.setPlaceholderText("The question the model must answer")
        self.question_edit.setFixedHeight(self.fontMetrics().lineSpacing() * 4)
        # A question never needs a tab character: Tab moves on, as in any form.
        self.question_edit.setTabChangesFocus(True)
        # The template keeps Tab for indenting examples; Ctrl+Tab and Ctrl+Shift+Tab leave it.
        self.template_edit.installEventFilter(self)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("<b>System prompt</b>"))
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.prompt_error)
        layout.addWidget(QLabel("<b>Question</b>"))
        layout.addWidget(self.question_edit)
        self.template_edit.textChanged.connect(self.changed)
        self.question_edit.textChanged.connect(self.changed)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.template_edit and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            ctrl = event.modifiers() & Qt.KeyboardModifier.ControlModifier
            if ctrl and event.key() in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab):
                forward = event.key() == Qt.Key.Key_Tab and not (
                    event.modifiers() & Qt.KeyboardModifier.ShiftModifier
                )
                self.focusNextPrevChild(forward)
                return True
        return super().eventFilter(watched, event)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # the system switched light/dark
            self.template_highlighter.set_palette(self.palette())
            self.rendered_highlighter.set_palette(self.palette())

    def set_values(self, template: str, question: str) -> None:
        self.template_edit.setPlainText(template)
        self.question_edit.setPlainText(question)

    def template(self) -> str:
        return self.template_edit.toPlainText()

    def question(self) -> str:
        return self.question_edit.toPlainText().strip()

    def show_rendered(self, text: str, error: str = "") -> None:
        self.rendered_view.setPlainText(text)
        self.prompt_error.setText(f"⚠ {error}")
        self.prompt_error.setVisible(bool(error))
