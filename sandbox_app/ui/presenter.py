"""Presenter mode and zoom, for a room that reads the screen from the back.

View → Presenter mode (F11): the editors collapse to a one-line summary (the scenario's
title, question, model and tools), the trace, the answer and the compare lanes fill the
window, fonts grow by half, and every trace takes the high-contrast colours (theme.py: 7:1
against the background, so a washed-out projector still shows each role). Zoom (Ctrl+= /
Ctrl+- / Ctrl+0) scales the traces, the answers and the prompt editor, in or out of presenter
mode, and is remembered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel, QToolBar, QWidget

from sandbox_app.core.file_reader import stored_number
from sandbox_app.ui import theme
from sandbox_app.ui.plain import plain_label
from sandbox_app.ui.trace_view import TraceView

if TYPE_CHECKING:
    from sandbox_app.ui.main_window import MainWindow

ZOOM_STEPS = (0.8, 0.9, 1.0, 1.15, 1.3, 1.5, 1.75, 2.0, 2.5, 3.0)
PRESENTER_SCALE = 1.5
BASE_SIZE = "baseFontSize"  # a widget property: its font's size at zoom 1


class Presenter:
    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.on = False
        # Whatever the settings file holds: a zoom outside the steps is the default.
        stored = window.settings.value("zoom", 1.0)
        self.zoom = stored_number(stored, 1.0, ZOOM_STEPS[0], ZOOM_STEPS[-1])
        self.summary = plain_label()
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.bar = QToolBar("Presenter")
        self.bar.setMovable(False)
        self.bar.addWidget(self.summary)
        self.bar.hide()
        window.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.bar)

    @property
    def scale(self) -> float:
        return self.zoom * (PRESENTER_SCALE if self.on else 1.0)

    def set_on(self, on: bool) -> None:
        window = self.window
        if on == self.on:
            return
        self.on = on
        editors = window.splitter.widget(0)
        if editors is not None:
            editors.setVisible(not on)
        self.summary.setText(self._summary())
        self.bar.setVisible(on)
        theme.high_contrast = on
        self.apply()

    def zoom_in(self) -> None:
        self._zoom_to(next((z for z in ZOOM_STEPS if z > self.zoom + 1e-6), ZOOM_STEPS[-1]))

    def zoom_out(self) -> None:
        below = [z for z in ZOOM_STEPS if z < self.zoom - 1e-6]
        self._zoom_to(below[-1] if below else ZOOM_STEPS[0])

    def zoom_reset(self) -> None:
        self._zoom_to(1.0)

    def _zoom_to(self, zoom: float) -> None:
        self.zoom = zoom
        self.window.settings.setValue("zoom", zoom)
        self.apply()

    def apply(self) -> None:
        """Size every trace, answer and the prompt editor, and colour the traces; lanes made
        later are sized when the Compare tab shows them (MainWindow calls this then)."""
        window = self.window
        traces = window.findChildren(TraceView)
        answers = [w for w in window.findChildren(QLabel) if w.objectName() == "finalAnswer"]
        for widget in (*traces, *answers, window.prompt_panel.template_edit):
            _scale(widget, self.scale)
        for trace in traces:
            trace.highlighter.set_palette(trace.palette())
        self.summary.setText(self._summary())

    def _summary(self) -> str:
        s = self.window.workspace.model.scenario
        model = self.window.backend_panel.choice().model
        tools = ", ".join(s.enabled_tools) or "no tools"
        return f"{s.title} · {s.question} · {model} · {tools} · {s.max_steps} steps"


def _scale(widget: QWidget, scale: float) -> None:
    base = widget.property(BASE_SIZE)
    if not isinstance(base, float):
        base = widget.font().pointSizeF()
        widget.setProperty(BASE_SIZE, base)
    font = QFont(widget.font())
    font.setPointSizeF(base * scale)
    widget.setFont(font)
