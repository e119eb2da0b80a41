"""The prompt editor: the system prompt template, its rendered form, its versions, the question
and the template variables.

It edits the workspace's ``system_prompt``, ``question`` and ``variables`` (a ``name = value``
line each: core/react_format/variables.py) and redraws the rendered prompt whenever anything it
depends on changes (template, tools, documents, dialect, variables); a ``{{name}}`` nothing
defines is flagged beside the System prompt heading, as a run would refuse it, and a bad
variables line beside the Variables heading: one line each (ui/common/notice_line.py), so
neither moves the boxes below it as the user types.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QSignalBlocker, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QPlainTextEdit, QStackedWidget, QTabWidget, QVBoxLayout, QWidget

from sandbox_app.application.workspace import Change
from sandbox_app.core.react_format.prompts import DEFAULT_TEMPLATE, PromptError, render_prompt
from sandbox_app.core.react_format.variables import VariableError, format_lines, parse_lines
from sandbox_app.lazy_import import lazy_import
from sandbox_app.ui.common.fitting import lines_tall, scrolling
from sandbox_app.ui.common.notice_line import NoticeLine, headed
from sandbox_app.ui.common.plain import rich_label
from sandbox_app.ui.common.tab_rule import types_tab
from sandbox_app.ui.common.workspace_signals import QtWorkspace
from sandbox_app.ui.trace.highlighter import LabelHighlighter
from sandbox_app.ui.versions.prompt_restore import PromptRestore

if TYPE_CHECKING:
    from sandbox_app.ui.history.history_actions import HistoryActions
    from sandbox_app.ui.versions import versions_panel
    from sandbox_app.ui.versions.versions_panel import VersionsPanel
else:  # the Versions tab (the history's counts, the diff): made when first shown
    versions_panel = lazy_import("sandbox_app.ui.versions.versions_panel")

# The question too: an undefined {{variable}} in it is flagged with the prompt's.
_RENDERED_FROM = ("system_prompt", "enabled_tools", "documents", "dialect", "variables", "question")


class PromptPanel(QWidget):
    """Template (editable, labels highlighted) beside the rendered prompt (read-only)."""

    # The Versions tab's panel, made (Improving wires its Improve prompt… button).
    versionsMade = Signal(QWidget)

    def __init__(
        self,
        workspace: QtWorkspace,
        history: HistoryActions | None = None,
        parent: QWidget | None = None,
    ) -> None:
        """``history``: where the Versions tab counts each version's runs (None: none)."""
        super().__init__(parent)
        self.workspace = workspace
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
        # The history beside the editor: a version restored is an edit of the template's.
        self.restorer = PromptRestore(self.template_edit, workspace)
        # The Versions tab is made when first shown (or first asked for: ``versions``).
        self._history = history
        self._versions: VersionsPanel | None = None
        self.versions_page = QStackedWidget()
        self.tabs.addTab(self.versions_page, "Versions")
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self.prompt_error = NoticeLine()
        self.prompt_error.setObjectName("promptError")
        self.question_edit = QPlainTextEdit()
        self.question_edit.setPlaceholderText("The question the model must answer")
        self.question_edit.setFixedHeight(lines_tall(self.question_edit, 3))
        self.variables_edit = QPlainTextEdit()
        self.variables_edit.setPlaceholderText(
            "name = value, one a line: {{name}} in the prompt or the question becomes the value "
            "(\\n for a line break)"
        )
        self.variables_edit.setFixedHeight(lines_tall(self.variables_edit, 2))
        self.variables_error = NoticeLine()  # a bad line: said here, the variables kept
        self.variables_error.setObjectName("variablesError")
        # The template keeps Tab for indenting examples; Ctrl+Tab and Ctrl+Shift+Tab leave it
        # (every other text box leaves on Tab: ui/common/tab_rule.py).
        types_tab(self.template_edit)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(headed(rich_label("<b>System prompt</b>"), self.prompt_error))
        layout.addWidget(self.tabs, 1)
        layout.addWidget(rich_label("<b>Question</b>"))
        layout.addWidget(self.question_edit)
        layout.addWidget(headed(rich_label("<b>Variables</b>"), self.variables_error))
        layout.addWidget(self.variables_edit)
        self.template_edit.textChanged.connect(self._on_template_edit_text_changed)
        self.question_edit.textChanged.connect(self._on_question_edit_text_changed)
        self.variables_edit.textChanged.connect(self._on_variables_edit_text_changed)
        workspace.changed.connect(self._on_workspace_changed)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # the system switched light/dark
            self.template_highlighter.set_palette(self.palette())
            self.rendered_highlighter.set_palette(self.palette())

    def _on_workspace_changed(self, change: Change) -> None:
        scenario = self.workspace.model.scenario
        if change.loaded:
            with QSignalBlocker(self.template_edit), QSignalBlocker(self.question_edit):
                self.template_edit.setPlainText(scenario.system_prompt or DEFAULT_TEMPLATE)
                self.question_edit.setPlainText(scenario.question)
            with QSignalBlocker(self.variables_edit):
                self.variables_edit.setPlainText(format_lines(scenario.variables))
            self.variables_error.say("")
        if change.touches(*_RENDERED_FROM):
            template = scenario.system_prompt or DEFAULT_TEMPLATE
            tools = self.workspace.model.tools()
            values = scenario.variables
            try:  # filled; an undefined {{name}} left as written, and named under it
                text = render_prompt(
                    template, tools, scenario.prompt_dialect, variables=values, keep_undefined=True
                )
            except PromptError as err:
                self.show_rendered("", str(err))
            else:
                self.show_rendered(text, scenario.undefined_variables() or "")

    def _on_template_edit_text_changed(self) -> None:
        template = self.template()
        self.workspace.update(
            self, system_prompt=None if template == DEFAULT_TEMPLATE else template
        )

    def _on_question_edit_text_changed(self) -> None:
        self.workspace.update(self, question=self.question())

    def _on_variables_edit_text_changed(self) -> None:
        try:
            values = parse_lines(self.variables_edit.toPlainText())
        except VariableError as err:  # the scenario keeps the variables it had
            self.variables_error.say(f"⚠ {err}")
            return
        self.variables_error.say("")
        self.workspace.update(self, variables=values)

    def show_versions(self) -> None:
        self.tabs.setCurrentWidget(self.versions_page)

    @property
    def versions(self) -> VersionsPanel:
        """The Versions tab's panel, made now if it was not yet shown."""
        if self._versions is None:
            made = versions_panel.VersionsPanel(self.workspace, self.restorer, self._history)
            self._versions = made
            # It scrolls when short: the tabs' least height is the template's, so the
            # editors fit beside the trace at 1280×720 (ui/window/editors_column.py).
            self.versions_page.addWidget(scrolling(made))
            self.versionsMade.emit(made)
        return self._versions

    def _on_tab_changed(self, _index: int) -> None:
        if self.tabs.currentWidget() is self.versions_page:
            self.versions  # noqa: B018 - made as it is first shown

    def undo(self) -> None:
        """Edit → Undo: the template's last edit (a restored version is one)."""
        self.template_edit.undo()

    def redo(self) -> None:
        self.template_edit.redo()

    def template(self) -> str:
        return self.template_edit.toPlainText()

    def question(self) -> str:
        return self.question_edit.toPlainText().strip()

    def show_rendered(self, text: str, error: str = "") -> None:
        self.rendered_view.setPlainText(text)
        self.prompt_error.say(f"⚠ {error}" if error else "")
