"""Step-through in a run pane (the Run tab and every lane): the Step button and the pause panel.

Step with no run going starts one that pauses at each point core/running/stepping.py names; at a
pause
the panel shows the turn's text (before its tool runs) or the observation (before the next
model call) to edit, then **Step** goes on to the next pause and **Run to end** goes on without
pausing; Stop ends the run. Space in the trace steps too, and the window gives the Run tab F10.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.core.running.stepping import Pause
from sandbox_app.lazy_import import lazy_import
from sandbox_app.ui.common.plain import plain_label

if TYPE_CHECKING:
    import asyncio

    from sandbox_app.ui.lane.run_controller import RunController
else:
    asyncio = lazy_import("asyncio")

WHERE = {
    "turn": "Step {step}: the model's turn, before its tool runs. Edit it (the Action line "
    "too: it is read again), then Step or Run to end.",
    "observation": "Step {step}: the observation, before the model reads it. Edit it, then "
    "Step or Run to end.",
}


class Stepper:
    """The Step button and pause panel of one pane: ``trace`` answers Space, ``controller``
    runs the pane's runs, ``start`` starts one there (the pane's owner decides how)."""

    def __init__(
        self, trace: QWidget, controller: RunController, start: Callable[[], None]
    ) -> None:
        self.controller = controller
        self._start = start
        self.stepping = False  # this run pauses at each point
        self.button = QToolButton()
        self.button.setText("Step")
        self.button.setToolTip("Run one pause at a time (Space in the trace; F10 in the Run tab)")
        self.panel = QFrame()
        self.panel.setFrameShape(QFrame.Shape.StyledPanel)
        self.label = plain_label()
        self.label.setWordWrap(True)
        self.edit = QPlainTextEdit()
        self.edit.setMaximumHeight(self.edit.fontMetrics().lineSpacing() * 6 + 12)
        self.next_button = QPushButton("Step")
        self.run_button = QPushButton("Run to end")
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.next_button)
        row.addWidget(self.run_button)
        layout = QVBoxLayout(self.panel)
        layout.addWidget(self.label)
        layout.addWidget(self.edit)
        layout.addLayout(row)
        self.panel.hide()
        self._waiting: asyncio.Future[str] | None = None
        self.button.clicked.connect(self.step)
        self.next_button.clicked.connect(self.step)
        self.run_button.clicked.connect(self.run_to_end)
        space = QShortcut(QKeySequence(Qt.Key.Key_Space), trace)
        space.setContext(Qt.ShortcutContext.WidgetShortcut)
        space.setWhatsThis("Step through a run (in a trace)")  # Help → Keyboard shortcuts
        space.activated.connect(self.step)
        controller.runningChanged.connect(self._on_running_changed)

    @property
    def paused(self) -> bool:
        return self._waiting is not None and not self._waiting.done()

    def step(self) -> None:
        """At a pause: on to the next. With no run going: start one, step by step."""
        if self.paused:
            self._go_on()
        elif not self.controller.running:
            self.stepping = True
            self._start()

    def run_to_end(self) -> None:
        self.stepping = False
        if self.paused:
            self._go_on()

    async def pause(self, at: Pause) -> str:
        """The engine's pause: the text as the user leaves it (at once when not stepping)."""
        if not self.stepping:
            return at.text
        self.label.setText(WHERE[at.point].format(step=at.step))
        self.edit.setPlainText(at.text)
        self.panel.show()
        waiting = self._waiting = asyncio.get_running_loop().create_future()
        try:
            text: str = await waiting
            return text
        finally:
            self._waiting = None
            self.panel.hide()

    def _go_on(self) -> None:
        assert self._waiting is not None
        self._waiting.set_result(self.edit.toPlainText())

    def _on_running_changed(self, running: bool) -> None:
        if not running:
            self.stepping = False  # the next Run runs to the end
