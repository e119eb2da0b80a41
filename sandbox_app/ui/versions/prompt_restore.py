"""Restoring a prompt version into the editor, as one edit that Undo takes back.

The template editor's own undo stack is how the prompt's edits are undone (Ctrl+Z in the
Template tab, Edit → Undo): a restore goes onto that stack as one edit block replacing the
template, so Undo and Redo step over it like any typing. What a version holds besides the
template (the dialect, the enabled tools with their words, the tool-calling mode) is not
text; each restore keeps a *mark* of those fields before and after it and the undo depth it
left, and when Undo goes below that depth the fields go back (Redo: forward again). A mark
whose redo is lost (the user typed after undoing) is dropped, as the editor drops its redo.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from sandbox_app.application.workspace import Change
from sandbox_app.core.scenarios.prompt_versions import PromptVersion
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.tools import tool_names
from sandbox_app.core.tools.mock import MockToolSpec
from sandbox_app.ui.common.workspace_signals import QtWorkspace


@dataclass(frozen=True)
class PromptFields:
    """A version's fields that are not the template, as the scenario holds them."""

    dialect: str
    enabled_tools: tuple[str, ...]
    custom_tools: tuple[MockToolSpec, ...]
    tool_calling: str

    @staticmethod
    def of(scenario: Scenario) -> PromptFields:
        return PromptFields(
            scenario.dialect,
            scenario.enabled_tools,
            scenario.custom_tools,
            scenario.model.tool_calling,
        )


@dataclass
class _Mark:
    depth: int  # the editor's undo depth just after the restore
    before: PromptFields
    after: PromptFields
    applied: bool = True


class PromptRestore:
    """Restores versions into ``editor`` (the Template tab) and the workspace."""

    def __init__(self, editor: QPlainTextEdit, workspace: QtWorkspace) -> None:
        self.editor, self.workspace = editor, workspace
        self._marks: list[_Mark] = []
        self._restoring = False
        editor.textChanged.connect(self._follow_undo)
        workspace.changed.connect(self._on_workspace_changed)

    def restore(self, version: PromptVersion) -> str:
        """Put ``version`` in the editor; returns a one-line notice ("" when all of it came
        back): a tool the scenario no longer has is left off, never enabled by name alone."""
        model = self.workspace.model
        current = model.scenario
        target = current.with_prompt(version)
        known = set(tool_names(target.custom_tools, sources=model.sources))
        known |= {t.name for t in model.extra_tools}
        missing = [name for name in target.enabled_tools if name not in known]
        kept = tuple(name for name in target.enabled_tools if name in known)
        before, after = PromptFields.of(current), PromptFields.of(target)
        after = PromptFields(after.dialect, kept, after.custom_tools, after.tool_calling)
        document = self.editor.document()
        self._restoring = True
        try:
            cursor = QTextCursor(document)
            cursor.beginEditBlock()
            cursor.select(QTextCursor.SelectionType.Document)
            cursor.insertText(version.template)
            # A format command closes the block: typing after a restore is an edit of its
            # own, never merged into the restore (one Undo would take both back).
            cursor.setBlockFormat(cursor.blockFormat())
            cursor.endEditBlock()
        finally:
            self._restoring = False
        self._marks.append(_Mark(document.availableUndoSteps(), before, after))
        self._apply(after)
        if missing:
            return f"Restored without {', '.join(missing)}: this scenario has no such tool now"
        return ""

    def _apply(self, fields: PromptFields) -> None:
        model = self.workspace.model.scenario.model
        self.workspace.update(
            None,  # every panel redraws (the tool toggles, the dialect, the model panel)
            dialect=fields.dialect,
            enabled_tools=fields.enabled_tools,
            custom_tools=fields.custom_tools,
            model=model.replace(tool_calling=fields.tool_calling),
        )

    def _follow_undo(self) -> None:
        if self._restoring or not self._marks:
            return
        document = self.editor.document()
        depth = document.availableUndoSteps()
        for mark in reversed(self._marks):  # undone: the newest restore goes back first
            if mark.applied and depth < mark.depth:
                mark.applied = False
                self._apply(mark.before)
        for mark in self._marks:  # redone: the oldest comes forward first
            if not mark.applied and depth >= mark.depth:
                mark.applied = True
                self._apply(mark.after)
        if document.availableRedoSteps() == 0:  # typed after an Undo: no Redo to follow
            self._marks = [m for m in self._marks if m.applied]

    def _on_workspace_changed(self, change: Change) -> None:
        if change.loaded:  # another scenario: the editor's undo stack starts again
            self._marks.clear()
