"""The File menu's work for one window: New, Open, Save, Save as, recent files, and the edits
kept while the user types (restored next time as what they were: see core/scenarios/document.py;
each
window keeps its own, on disk half a second after a change and at least every second while
the user types without a pause: ui/window/kept_edits.py).

Unsaved edits are never dropped without the user's word: New, Open, a recent file and a file
named on the command line all ask first (Save / Discard / Cancel), and saving can fail only
with a one-line message that leaves the edits on screen.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QSettings, QTimer
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox, QStatusBar, QWidget

from sandbox_app.core.scenarios.document import KeptEdits, ScenarioDocument
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.scenario_file import SaveRefused, default_scenario
from sandbox_app.ui.common.plain import message_box, tip
from sandbox_app.ui.common.workspace_signals import QtWorkspace
from sandbox_app.ui.window.kept_edits import KeptEditsFile, kept_edits_folder

MAX_RECENT = 8
# Where kept edits lived before each window had a file of its own: read once, then removed.
OLD_KEPT_EDITS_KEY = "session/unsaved"
KEEP_AFTER_MS = 500  # kept this long after the last change…
# …and at most this long after the first change not kept, however steadily the user types:
# the pause above never comes while typing, and a crash then lost everything typed since.
KEEP_WITHIN_MS = 1000


class FileActions(QObject):
    """Opens and saves the workspace's scenario on behalf of ``window``."""

    def __init__(
        self, window: QWidget, workspace: QtWorkspace, settings: QSettings, status: QStatusBar
    ) -> None:
        super().__init__(window)
        self.window = window
        self.workspace = workspace
        self.settings = settings
        self.status = status
        self.recent_menu = QMenu("&Recent", window)
        self.confirm_dialog: QMessageBox | None = None
        self.error_dialog: QMessageBox | None = None
        self.kept = KeptEditsFile(kept_edits_folder(settings))
        self._keep_timer = self._timer(KEEP_AFTER_MS)  # restarted by every change
        self._keep_deadline = self._timer(KEEP_WITHIN_MS)  # started by the first one only
        workspace.changed.connect(self._on_workspace_changed)

    def _timer(self, interval_ms: int) -> QTimer:
        timer = QTimer(self)
        timer.setSingleShot(True)
        timer.setInterval(interval_ms)
        timer.timeout.connect(self.keep_edits)
        return timer

    def _on_workspace_changed(self) -> None:
        self._keep_timer.start()
        if not self._keep_deadline.isActive():
            self._keep_deadline.start()

    @property
    def document(self) -> ScenarioDocument:
        return self.workspace.model.document

    # ---- replacing the scenario ------------------------------------------------------------

    def replace_scenario(
        self, then: Callable[[], object], question: str = "", keep_label: str = ""
    ) -> None:
        """Run ``then`` (New, Open…) once unsaved edits are saved or knowingly discarded."""
        if not self.workspace.model.modified:
            then()
            return
        buttons = QMessageBox.StandardButton
        dialog = self.confirm_dialog = message_box(
            QMessageBox.Icon.Question,
            "Unsaved edits",
            question or f"Save the edits to “{self.document.title}” first?",
            buttons.Save | buttons.Discard | buttons.Cancel,
            self.window,
        )
        dialog.setDefaultButton(buttons.Save)
        if keep_label:
            dialog.button(buttons.Cancel).setText(keep_label)

        def on_finished(_: int) -> None:
            choice = dialog.standardButton(dialog.clickedButton())
            if choice == buttons.Discard or (choice == buttons.Save and self.save()):
                then()

        dialog.finished.connect(on_finished)
        dialog.open()  # window-modal, and runs keep streaming meanwhile

    def new_scenario(self) -> None:
        self.replace_scenario(self.workspace.model.new)

    def open_scenario(self, path: str | Path) -> bool:
        """Load a scenario; a bad file leaves everything as it was and says why."""
        try:
            self.workspace.model.open(path)
        except ScenarioError as err:
            self.show_error("Cannot open the scenario", str(err))
            return False
        self._remember(Path(path))
        return True

    def ask_to_open(self, path: str | Path) -> None:
        """Open from the menus: unsaved edits are offered for saving first."""
        self.replace_scenario(lambda: self.open_scenario(path))

    def open_from_command_line(self, path: str | Path) -> None:
        """Open the file named at start-up; edits kept from last time are offered first."""
        question = (
            f"You have unsaved edits to “{self.document.title}” from last time. "
            f"Save them before opening {Path(path).name}?"
        )
        self.replace_scenario(lambda: self.open_scenario(path), question, "Keep editing them")

    def open_dialog(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self.window, "Open scenario", "", "Scenarios (*.json)"
        )
        if name:
            self.ask_to_open(name)

    # ---- saving ------------------------------------------------------------------------

    def save(self) -> bool:
        if self.document.needs_name:
            return self.save_as()
        return self.save_to(None)

    def save_as(self) -> bool:
        path = self.document.path
        # A built-in example is never overwritten: suggest its name in the home folder.
        suggested = Path.home() / path.name if path and self.document.needs_name else path
        name, _ = QFileDialog.getSaveFileName(
            self.window, "Save scenario", str(suggested or "scenario.json"), "Scenarios (*.json)"
        )
        return bool(name) and self.save_to(Path(name))

    def save_to(self, path: Path | None) -> bool:
        """Save to ``path``, or to the document's own file; a failure says why in one line."""
        try:
            self.workspace.model.save(path)
        except SaveRefused as err:
            self.show_error("Cannot save the scenario", str(err))
            return False
        except OSError as err:
            name = (path or self.document.path or Path("scenario")).name
            self.show_error("Cannot save the scenario", f"{name}: {err.strerror or err}.")
            return False
        assert self.document.path is not None
        self._remember(self.document.path)
        self.keep_edits()  # edits kept from an earlier session are saved now: forget them
        return True

    def show_error(self, title: str, message: str) -> None:
        """A window-modal message that does not block the event loop (runs keep streaming)."""
        self.error_dialog = message_box(
            QMessageBox.Icon.Warning, title, message, parent=self.window
        )
        self.error_dialog.open()

    # ---- across restarts ---------------------------------------------------------------

    def restore(self) -> None:
        """Edits a closed (or killed) window kept, as what they were; else the last file; else
        the demo."""
        self._fill_recent_menu()
        kept = self.kept.claim() or self._old_kept_edits()
        if kept is not None:
            document, notice = ScenarioDocument.restore(kept)
            self.workspace.model.show(document, kept.edited)
            if self.kept.left_behind:
                more = self.kept.left_behind
                notice += (" · " if notice else "") + (
                    f"{more} more set{'s' if more > 1 else ''} of unsaved edits from another "
                    "window: open a new window to get them back"
                )
            if notice:
                self.status.showMessage(notice)
            return
        last = self.settings.value("last_scenario")
        if isinstance(last, str) and Path(last).is_file():
            try:
                self.workspace.model.open(last)
                return
            except ScenarioError:
                pass  # changed or damaged since: start on the demo instead
        self.workspace.model.show(ScenarioDocument(default_scenario()))

    def _old_kept_edits(self) -> KeptEdits | None:
        text = self.settings.value(OLD_KEPT_EDITS_KEY)
        self.settings.remove(OLD_KEPT_EDITS_KEY)  # from now on in this window's own file
        return KeptEdits.from_json(text) if isinstance(text, str) else None

    def keep_edits(self) -> None:
        """Set unsaved edits aside on disk (an editor's "hot exit"), or forget them when
        there are none; a disk that refuses is one line in the status bar."""
        self._keep_timer.stop()
        self._keep_deadline.stop()
        try:
            self.kept.write(self.workspace.model.keep())
        except OSError as err:
            self.status.showMessage(f"⚠ Cannot keep unsaved edits: {err.strerror or err}.")

    def close(self) -> None:
        """The window closes: keep its edits now, and let the next window take them."""
        self.keep_edits()
        self.kept.release()

    def _remember(self, path: Path) -> None:
        recent = [str(path.resolve())]
        recent += [p for p in self._recent_files() if p != recent[0]]
        self.settings.setValue("recent_files", recent[:MAX_RECENT])
        self.settings.setValue("last_scenario", recent[0])
        self._fill_recent_menu()

    def _recent_files(self) -> list[str]:
        value = self.settings.value("recent_files", [])
        # QSettings' INI format gives back a lone string for a one-item list.
        items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        return [str(item) for item in items]

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        for name in self._recent_files():
            action = self.recent_menu.addAction(Path(name).name)
            action.setToolTip(tip(name))
            action.triggered.connect(lambda _=False, n=name: self.ask_to_open(n))
        self.recent_menu.setEnabled(bool(self._recent_files()))
