"""The window's side of Improve prompt… and Generate cases…: which models they offer, and
their dialogs opened from the buttons (ui/common/optimizing_buttons.py) of the Versions tab,
the Test set tab and the test set editor. Made by the window; the dialogs' modules imported
at the first click.

Offered: the Run tab's model, then the comparison's lanes (once the Compare tab was built),
each as the test-set runner takes it; the reflection and generating models also the offline
model, which plays the scenario's written replies (``script.reflections``,
``script.generated_cases``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QWidget

from sandbox_app.application.backend_choice import BackendChoice
from sandbox_app.application.workspace import Change
from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.backends.registry import SCRIPTED, config_for
from sandbox_app.core.scenarios.lane_settings import LaneSettings
from sandbox_app.ui.common.optimizing_buttons import generate_button
from sandbox_app.ui.common.workspace_signals import QtWorkspace

if TYPE_CHECKING:  # the runner (asyncio, the engine): imported at the first click
    from sandbox_app.application.backend_choice import BackendChoice
    from sandbox_app.core.history.history_db import HistoryStore
    from sandbox_app.ui.compare.eval_panel import EvalPanel
    from sandbox_app.ui.compare.test_set_editor import TestSetEditor
    from sandbox_app.ui.history.history_actions import HistoryActions
    from sandbox_app.ui.optimizing.cases_dialog import CasesDialog
    from sandbox_app.ui.optimizing.improve_dialog import ImproveDialog
    from sandbox_app.ui.versions.prompt_restore import PromptRestore
    from sandbox_app.ui.versions.versions_panel import VersionsPanel

OFFLINE = "Offline · the scenario's written replies"


def offline_lane() -> BackendChoice:
    from sandbox_app.application.backend_choice import BackendChoice

    return BackendChoice(config_for(SCRIPTED), LaneSettings(), label=OFFLINE)


class Improving(QObject):
    """``run_tab``: the Run tab's model now; ``lanes``: the comparison's (none before it is
    built)."""

    def __init__(
        self,
        workspace: QtWorkspace,
        keys: KeyStore,
        history: HistoryActions,
        restorer: PromptRestore,
        run_tab: Callable[[], BackendChoice],
        lanes: Callable[[], list[BackendChoice]],
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self.workspace, self.keys, self.history, self.restorer = workspace, keys, history, restorer
        self._run_tab, self._lanes, self._parent = run_tab, lanes, parent
        self.dialog: ImproveDialog | None = None
        self.cases_dialog: CasesDialog | None = None
        workspace.changed.connect(self._on_workspace_changed)

    def wire(self, versions: VersionsPanel) -> None:
        """The Versions tab's Improve prompt… button, once the tab is made (first shown)."""
        versions.improve_button.clicked.connect(self.open_improve)

    def _on_workspace_changed(self, change: Change) -> None:
        dialog = self.dialog
        if change.loaded and dialog is not None:
            # Another scenario: its candidates and winner are not this one's (stopped, the
            # optimization can be resumed on its own file).
            self.dialog = None
            dialog.close()  # stops it
            if not dialog.running:
                dialog.deleteLater()

    async def finish(self) -> None:
        """Stop the optimization, if one runs, and wait for its end (the window closing)."""
        if self.dialog is not None:
            await self.dialog.finish()

    def attach(self, panel: EvalPanel) -> None:
        """The Test set tab's button, and Generate cases… in each editor it opens."""
        panel.improve_button.clicked.connect(self.open_improve)
        panel.editorOpened.connect(self._offer_generate)

    def offered(self) -> list[BackendChoice]:
        from sandbox_app.application.backend_choice import BackendChoice
        from sandbox_app.application.eval_runner import lane_label

        choice = self._run_tab()
        name = lane_label(f"Run tab · {choice.model or choice.config.kind.name}", choice.settings)
        return [BackendChoice(choice.config, choice.settings, label=name), *self._lanes()]

    def open_improve(self) -> ImproveDialog:
        """One dialog a window: opened again, it shows the last optimization (its Resume)."""
        from sandbox_app.ui.optimizing.improve_dialog import ImproveDialog

        arms = self.offered()
        document = self.workspace.model.document
        place = str(document.path.resolve()) if document.path else _untitled(document.title)
        if self.dialog is None:
            self.dialog = ImproveDialog(
                self.workspace, self._store, self.restorer, self.keys, self._parent
            )
        dialog = self.dialog
        dialog.offer(arms, [*arms, offline_lane()], place)  # running: kept as they are
        dialog.show()
        return dialog

    def _store(self) -> tuple[HistoryStore | None, str]:
        history = self.history.current()
        return history.store, history.problem or "it cannot be opened"

    def _offer_generate(self, editor: TestSetEditor) -> None:
        button = generate_button(editor.buttons_row, editor.buttons_row.count() - 1)
        button.clicked.connect(lambda: self.open_generate(editor))

    def open_generate(self, editor: TestSetEditor) -> CasesDialog:
        from sandbox_app.ui.optimizing.cases_dialog import CasesDialog

        model = self.workspace.model
        dialog = self.cases_dialog = CasesDialog(
            model.scenario,
            model.tools(),
            editor.shown_cases(),
            [*self.offered(), offline_lane()],
            self.keys,
            editor.known_tools,
            editor,
        )
        dialog.accepted.connect(lambda: editor.add_cases(dialog.chosen()))
        dialog.open()
        return dialog


def _untitled(title: str) -> str:
    """Where an unsaved scenario's optimizations are found again (no file: its title)."""
    return str(Path("untitled") / title)
