"""The workspace as Qt sees it: its change notices as a signal.

Panels and views connect to :attr:`QtWorkspace.changed` instead of subscribing to the core
model directly, so a connection ends with the widget that made it (a removed compare lane
never hears of a change again), and edits go through :meth:`QtWorkspace.update`.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from sandbox_app.application.workspace import Workspace


class QtWorkspace(QObject):
    """A thin adapter: ``model`` is the Qt-free workspace.

    Signals:
        changed(Change): the scenario, its document or the prices changed.
    """

    changed = Signal(object)

    def __init__(self, model: Workspace, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.model = model
        model.subscribe(self.changed.emit)

    def update(self, source: object | None = None, **changes: Any) -> None:
        self.model.update(source, **changes)
