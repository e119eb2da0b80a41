"""The window's side of the history database: which file (a setting), opened when first
needed (not before the first frame), its one-line problem in the status bar, and View →
History….

The file: the one chosen in the History view (setting ``history/database``); else, for an
INI settings file (tests, portable set-ups), beside it; else the app's data folder, the one
``react-sandbox eval`` writes to (core/history/history_schema.py ``default_path``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtWidgets import QStatusBar, QWidget

if TYPE_CHECKING:
    from sandbox_app.application.history import History
    from sandbox_app.core.history.history_db import HistoryStore
    from sandbox_app.ui.history.history_view import HistoryView

# A past evaluation into the Test set grid: its title, lanes, and where its runs are read.
ShowInGrid = Callable[[str, list[str], "HistoryStore", int], bool]

SETTING = "history/database"


def database_path(settings: QSettings) -> Path | None:
    """The file the settings choose (None: the default, application/history.py's)."""
    chosen = settings.value(SETTING, "")
    if isinstance(chosen, str) and chosen:
        return Path(chosen)
    if settings.format() == QSettings.Format.IniFormat and settings.fileName():
        ini = Path(settings.fileName())
        return ini.with_name(ini.stem + ".history.sqlite3")
    return None


class HistoryActions(QObject):
    """Signals: said(str) — history's problem, in one line (from any thread: queued);
    stored() — a run is in the database now (from any thread: queued)."""

    said = Signal(str)
    stored = Signal()

    def __init__(
        self,
        window: QWidget,
        settings: QSettings,
        status: QStatusBar,
        grid: ShowInGrid | None = None,
    ) -> None:
        super().__init__(window)
        self.window, self.settings = window, settings
        # Prompt version ids → the names the scenario being edited gives them (set by the
        # window): a comparison says a version's name first.
        self.version_names: Callable[[], Mapping[str, str]] = dict
        self._history: History | None = None
        self.view: HistoryView | None = None
        # A past evaluation into the Test set grid (the window's: it owns the tab).
        self.grid: ShowInGrid = grid or (lambda _title, _labels, _store, _id: False)
        self.said.connect(lambda line: status.showMessage(line, 15000))

    def current(self) -> History:
        """The history (opened now if not yet: its problem, if any, said once)."""
        if self._history is None:
            from sandbox_app.application.history import History

            self._history = History(database_path(self.settings), self.said.emit, self.stored.emit)
        return self._history

    def choose(self, path: Path) -> History:
        """Use ``path`` from now on (kept in the settings); the old file is closed."""
        self.settings.setValue(SETTING, str(path))
        if self._history is not None:
            self._history.close()
        self._history = None
        return self.current()

    def show_in_grid(
        self, title: str, labels: list[str], store: HistoryStore, evaluation: int
    ) -> bool:
        return self.grid(title, labels, store, evaluation)

    def open_view(self) -> HistoryView:
        """View → History…: past evaluations (one window, refreshed when open already)."""
        from sandbox_app.ui.history.history_view import HistoryView

        if self.view is None:
            self.view = HistoryView(self, self.window)
        self.view.refresh()
        self.view.show()
        return self.view
