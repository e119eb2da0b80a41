"""The Versions tab beside the template: the scenario's prompt history
(core/scenarios/prompt_versions.py), newest first, each version's name then its short id,
when it was first run, and a row per model it ran on with its runs and the pass rate its
checked answers give — never one rate pooled over models. The runs are the history
database's (core/comparing/version_runs.py: the Run tab's and lanes', the test set's,
``react-sandbox run`` and ``eval``'s), read when the tab is shown, a moment after runs are
stored or the history changes (one read for a burst) and on **Refresh**, never while the tab
is hidden or as the template is typed; with
no database the scenario file's pooled counts stand, as "all models". **Diff** of two (or of
one and the editor), **Restore** into the editor (ui/versions/prompt_restore.py: one edit,
undone by Edit → Undo), **Name…** (and a note) and **Star** (a starred version is never
dropped from the history); **Improve prompt…** (ui/optimizing/).

Names and notes can come from a file: the list shows them as one line of printable text and
the note's tooltip through ``tip``; the diff is drawn as plain text (version_diff_view.py).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFont, QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.application.workspace import Change
from sandbox_app.core.comparing.version_runs import VersionRuns, version_runs
from sandbox_app.core.history.history_schema import HistoryError
from sandbox_app.core.scenarios.prompt_diff import diff_versions
from sandbox_app.core.scenarios.prompt_versions import (
    SHORT_ID,
    PromptEntry,
    PromptVersion,
    edited,
    version_of,
)
from sandbox_app.ui.common.fitting import tool_button
from sandbox_app.ui.common.optimizing_buttons import improve_button
from sandbox_app.ui.common.plain import message_box, plain_label, tip
from sandbox_app.ui.common.workspace_signals import QtWorkspace
from sandbox_app.ui.versions.prompt_restore import PromptRestore
from sandbox_app.ui.versions.version_diff_view import VersionDiffView
from sandbox_app.ui.versions.version_rows import COLUMNS, MAX_NAME, rows_of, shown

if TYPE_CHECKING:
    from sandbox_app.ui.history.history_actions import HistoryActions

ID_ROLE = Qt.ItemDataRole.UserRole  # a row's version id (a version has a row per model)
NOT_COUNTED = "Runs not counted: "
SETTLE_MS = 200  # the history changed: counted again once it has been still this long
# What the model is told: the editor's current version changes when any of these does.
_PROMPT_FIELDS = ("system_prompt", "dialect", "enabled_tools", "custom_tools", "model", "sources")


class VersionsPanel(QWidget):
    """The history as a list with its four actions; ``restorer`` puts a version in the
    editor; ``history`` is where the runs are counted (None, or the history off: the file's
    pooled counts)."""

    def __init__(
        self,
        workspace: QtWorkspace,
        restorer: PromptRestore,
        history: HistoryActions | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.workspace, self.restorer, self.history = workspace, restorer, history
        self._counts: dict[str, list[VersionRuns]] | None = None  # None: no database
        self._stale = True  # the counts are read again when next shown
        # Runs starting and ending in several lanes at once: one read for the burst.
        self._settle = QTimer(self, singleShot=True, interval=SETTLE_MS)
        self._settle.timeout.connect(self._refresh)
        if history is not None:  # a run stored (the window's, a test set's): count again
            history.stored.connect(self._on_stored)
        self.confirm_dialog: QMessageBox | None = None
        self.name_dialog: QDialog | None = None
        self.list = QTreeWidget()
        self.list.setHeaderLabels(list(COLUMNS))
        self.list.setRootIsDecorated(False)
        self.list.setSelectionMode(QTreeWidget.SelectionMode.ExtendedSelection)
        self.list.setToolTip("Select one version to restore, name or star; two to diff")
        self.diff_button = tool_button("Diff")
        self.diff_button.setToolTip("What changed: two selected versions, or one and the editor")
        self.restore_button = tool_button("Restore")
        self.restore_button.setToolTip("Put the selected version in the editor (Edit → Undo)")
        self.name_button = tool_button("Name…")
        self.name_button.setToolTip("Name the selected version and write a note")
        self.star_button = tool_button("Star")
        self.star_button.setToolTip("Star or unstar: a starred version is always kept")
        self.refresh_button = tool_button("Refresh")
        self.refresh_button.setToolTip("Count the runs again (runs made elsewhere: eval, run)")
        self.notice = plain_label()
        self.notice.setWordWrap(True)
        self.diff_view = VersionDiffView()
        self._diffed: tuple[str, str | None] | None = None  # the ids diffed (None: the editor)
        buttons = QHBoxLayout()
        for button in (self.diff_button, self.restore_button, self.name_button, self.star_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        self.improve_button = improve_button(buttons)  # its dialog: the window's Improving
        buttons.addWidget(self.refresh_button)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.list, 1)
        top_layout.addLayout(buttons)
        top_layout.addWidget(self.notice)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(self.diff_view)
        split.setStretchFactor(1, 1)
        split.setSizes([140, 260])  # the diff is what is read; the list scrolls
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)
        self.diff_button.clicked.connect(self.diff)
        self.restore_button.clicked.connect(self.restore)
        self.name_button.clicked.connect(self.ask_name)
        self.star_button.clicked.connect(self.toggle_star)
        self.refresh_button.clicked.connect(self.refresh)
        self.list.itemSelectionChanged.connect(self._on_selection_changed)
        workspace.changed.connect(self._on_workspace_changed)
        self._refresh()

    # ---- the list ------------------------------------------------------------------------

    def entries(self) -> tuple[PromptEntry, ...]:
        """The history, newest (most recently used) first, as the list shows it."""
        return tuple(reversed(self.workspace.model.scenario.prompt_history))

    def selected(self) -> list[PromptEntry]:
        """The selected versions (any of their rows), oldest first (a diff reads older →
        newer)."""
        ids = {item.data(0, ID_ROLE) for item in self.list.selectedItems()}
        return [e for e in reversed(self.entries()) if e.id in ids]

    def select(self, *ids: str) -> None:
        """Select the versions of these ids, every row of each (tests, and the selection kept
        on a redraw)."""
        for row in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(row)
            if item is not None:
                item.setSelected(item.data(0, ID_ROLE) in ids)

    def refresh(self) -> None:
        """Count the runs again now (Refresh: runs ``eval`` or ``run`` made meanwhile)."""
        self._stale = True
        self._refresh()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self._refresh()

    def _read_counts(self) -> None:
        """Every version in the history counted at once (core/comparing/version_runs.py: its
        cost in its words)."""
        self._stale = False
        store = self.history.current().store if self.history is not None else None
        if store is None:
            self._counts = None
            return
        try:
            self._counts = version_runs(store, [e.id for e in self.entries()])
            if self.notice.text().startswith(NOT_COUNTED):
                self.notice.clear()
        except HistoryError as err:
            self._counts = None
            self.notice.setText(f"{NOT_COUNTED}{err}")

    def editor_version(self) -> PromptVersion:
        model = self.workspace.model
        return version_of(model.scenario, model.tools())

    def _on_stored(self) -> None:
        self._stale = True
        self._settle.start()  # one read for a burst of runs ending (lanes, a test set)

    def _on_workspace_changed(self, change: Change) -> None:
        if change.touches("prompt_history"):  # a run started or ended, a file opened
            self._stale = True
            self._settle.start()
        if change.touches("prompt_history", *_PROMPT_FIELDS):
            self._redraw()  # at once, with the counts read last (typing never reads them)
        if change.loaded:
            self.diff_view.show_note("")
            self._diffed = None
            self.notice.clear()
        elif change.touches("prompt_history") and self._diffed is not None:
            self.diff_view.retitle(self._diff_title(*self._diffed))  # a version named since

    def _refresh(self) -> None:
        if self._stale and self.isVisible():  # hidden: read when shown
            self._read_counts()
        self._redraw()

    def _redraw(self) -> None:
        kept = {e.id for e in self.selected()}
        current = self.editor_version().id
        self.list.clear()
        for entry in self.entries():
            for texts in rows_of(entry, self._counts):
                item = QTreeWidgetItem(self.list, texts)
                item.setData(0, ID_ROLE, entry.id)
                if entry.note:
                    item.setToolTip(1, tip(entry.note))
                if entry.id == current:  # what the editor holds now: its name and id
                    font = QFont(item.font(1))
                    font.setBold(True)
                    item.setFont(1, font)
                    item.setFont(2, font)
        for column in range(len(COLUMNS)):
            self.list.resizeColumnToContents(column)
        self.select(*kept)
        self._on_selection_changed()

    def _on_selection_changed(self) -> None:
        n = len(self.list.selectedItems())
        self.diff_button.setEnabled(n in (1, 2))
        for button in (self.restore_button, self.name_button, self.star_button):
            button.setEnabled(n == 1)
        chosen = self.selected()
        starred = len(chosen) == 1 and chosen[0].starred
        self.star_button.setText("Unstar" if starred else "Star")  # what a click does

    # ---- the actions ---------------------------------------------------------------------

    def diff(self) -> None:
        chosen = self.selected()
        if len(chosen) == 2:
            old, new = chosen
            self._diffed = (old.id, new.id)
            diff = diff_versions(old.version, new.version)
        elif len(chosen) == 1:
            self._diffed = (chosen[0].id, None)
            diff = diff_versions(chosen[0].version, self.editor_version())
        else:
            self.notice.setText("Select two versions to diff (or one, to diff with the editor).")
            return
        self.diff_view.show_diff(self._diff_title(*self._diffed), diff)

    def _diff_title(self, old: str, new: str | None) -> str:
        """The diff's header, "old → new", by the names the history has now (an unnamed
        version by its short id)."""
        labels = {entry.id: shown(entry.label) for entry in self.entries()}
        after = labels.get(new, new[:SHORT_ID]) if new else "the editor"
        return f"{labels.get(old, old[:SHORT_ID])} → {after}"

    def restore(self) -> None:
        chosen = self.selected()
        if len(chosen) != 1:
            self.notice.setText("Select one version to restore.")
            return
        entry = chosen[0]
        current = self.editor_version()
        if current.id == entry.id:
            self.notice.setText(f"The editor already holds {shown(entry.label)}.")
            return
        if self._unkept(current):
            self._ask_then_restore(entry)
        else:
            self._restore(entry)

    def _unkept(self, current: PromptVersion) -> bool:
        """The editor holds words no version and no save holds: Restore would bury them."""
        model = self.workspace.model
        if any(e.id == current.id for e in model.scenario.prompt_history):
            return False
        saved = model.document.saved
        return version_of(saved, model.tools(saved)).id != current.id

    def _ask_then_restore(self, entry: PromptEntry) -> None:
        buttons = QMessageBox.StandardButton
        dialog = self.confirm_dialog = message_box(
            QMessageBox.Icon.Question,
            "Replace the prompt?",
            f"The editor's prompt has edits that are in no version and not saved. Restore "
            f"{shown(entry.label)} over them? (Edit → Undo brings them back.)",
            buttons.Yes | buttons.Cancel,
            self,
        )
        dialog.setDefaultButton(buttons.Cancel)

        def on_finished(_: int) -> None:
            if dialog.standardButton(dialog.clickedButton()) == buttons.Yes:
                self._restore(entry)

        dialog.finished.connect(on_finished)
        dialog.open()

    def _restore(self, entry: PromptEntry) -> None:
        problem = self.restorer.restore(entry.version)
        self.notice.setText(
            problem or f"Restored {shown(entry.label)}: Edit → Undo (Ctrl+Z) takes it back."
        )

    def toggle_star(self) -> None:
        chosen = self.selected()
        if len(chosen) == 1:
            self._edit(chosen[0], starred=not chosen[0].starred)

    def ask_name(self) -> None:
        chosen = self.selected()
        if len(chosen) != 1:
            return
        entry = chosen[0]
        dialog = self.name_dialog = QDialog(self)
        dialog.setWindowTitle(f"Name version {entry.short}")
        name = QLineEdit(entry.name)
        name.setMaxLength(MAX_NAME)
        name.setObjectName("versionName")
        note = QPlainTextEdit(entry.note)
        note.setObjectName("versionNote")
        box = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        form = QFormLayout(dialog)
        form.addRow("Name", name)
        form.addRow("Note", note)
        form.addRow(box)
        box.accepted.connect(dialog.accept)
        box.rejected.connect(dialog.reject)
        dialog.accepted.connect(
            lambda: self._edit(entry, name=shown(name.text()), note=note.toPlainText().strip())
        )
        dialog.open()

    def _edit(self, entry: PromptEntry, **changes: object) -> None:
        history = self.workspace.model.scenario.prompt_history
        changed = edited(history, entry.id, lambda e: replace(e, **changes))  # type: ignore[arg-type]
        self.workspace.update(self, prompt_history=changed)
