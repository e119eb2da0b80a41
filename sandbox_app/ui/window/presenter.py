"""Presenter mode and zoom, for a room that reads the screen from the back.

View → Presenter mode (F11): the editors collapse to a summary line (the scenario's title,
question, model and tools, wrapped, never cut), the trace, the answer and the compare lanes
fill the window, everything grows by half, and every trace takes the high-contrast colours
(theme.py: 7:1 against the background, so a washed-out projector still shows each role).
With three or four lanes (two in a window under 1,200 px) it shows one lane at a time, full
width, above the table (View → One lane at a time): side by side, four lanes at projector
sizes leave each a dozen characters a line; stacked, 720 px leave each two or three lines;
one at a time keeps the whole trace
readable, and the table beneath still compares every lane at a glance.

Zoom (Ctrl+= / Ctrl+- / Ctrl+0) scales the whole window, in or out of presenter mode, and is
remembered: one application font scale for the buttons, labels, tables, menus and the status
bar, and the same scale on the few fonts set on their own (the traces and the prompt editor's
fixed-width font, the answers' larger type). The status bar shows it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QFont
from PySide6.QtWidgets import QApplication, QFrame, QLabel, QMainWindow, QVBoxLayout, QWidget

from sandbox_app.core.untrusted.file_reader import stored_number
from sandbox_app.ui.common import theme
from sandbox_app.ui.common.fitting import FONT_FACTOR
from sandbox_app.ui.common.plain import plain_label
from sandbox_app.ui.trace.trace_view import TraceView

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings

    from sandbox_app.core.scenarios.scenario import Scenario
    from sandbox_app.ui.lane.backend_panel import BackendPanel
    from sandbox_app.ui.window.prompt_panel import PromptPanel
    from sandbox_app.ui.window.run_tabs import RunTabs

ZOOM_STEPS = (0.8, 0.9, 1.0, 1.15, 1.3, 1.5, 1.75, 2.0, 2.5, 3.0)
PRESENTER_SCALE = 1.5
ONE_LANE_FROM = 3  # lanes: presenter mode shows them one at a time from this many
# ... and two in a window narrower than this: side by side at presenter sizes, two lanes in
# 800 px left each a dozen characters a line and three lines of trace.
TWO_SIDE_BY_SIDE_FROM = 1200
BASE_SIZE = "baseFontSize"  # a widget property: its font's size at zoom 1
_app_base: list[float] = []  # the application font's size before any zoom: one per process


def app_base_size() -> float:
    if not _app_base:
        _app_base.append(QApplication.font().pointSizeF())
    return _app_base[0]


def set_app_scale(scale: float) -> None:
    """Every widget without a font of its own follows the application's font."""
    font = QFont(QApplication.font())
    font.setPointSizeF(app_base_size() * scale)
    QApplication.setFont(font)


class Shown(Protocol):
    """What presenter mode needs of the window (MainWindow is one): the settings the zoom is
    kept in, what the summary names (the scenario being edited, the Run tab's model), the
    prompt editor's own fonts and the compare lanes."""

    @property
    def settings(self) -> QSettings: ...

    @property
    def prompt_panel(self) -> PromptPanel: ...

    @property
    def backend_panel(self) -> BackendPanel: ...

    @property
    def run_tabs(self) -> RunTabs: ...

    def current_scenario(self) -> Scenario: ...


class Presenter:
    def __init__(self, window: QMainWindow, editors: QWidget, shown: Shown) -> None:
        """``window``: the Qt window it lays out, scales and adds its zoom to the status bar
        of; ``editors``: what collapses to the summary line."""
        self.window, self.editors, self.shown = window, editors, shown
        self.on = False
        app_base_size()
        # Whatever the settings file holds: a zoom outside the steps is the default.
        stored = shown.settings.value("zoom", 1.0)
        self.zoom = stored_number(stored, 1.0, ZOOM_STEPS[0], ZOOM_STEPS[-1])
        self.summary = plain_label()
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)  # a long question wraps: never cut, never widening
        # Above the editors and runs, not a tool bar: a tool bar cannot wrap its label.
        self.bar = QFrame()
        self.bar.setFrameShape(QFrame.Shape.StyledPanel)
        QVBoxLayout(self.bar).addWidget(self.summary)
        self.bar.hide()
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.bar)
        runs = window.takeCentralWidget()  # the editors and runs, kept (set would delete it)
        if runs is not None:
            layout.addWidget(runs, 1)
        window.setCentralWidget(central)
        self.zoom_label = plain_label()
        self.zoom_label.setToolTip("View → Zoom in / out / Actual size (Ctrl+= / Ctrl+- / Ctrl+0)")
        window.statusBar().addPermanentWidget(self.zoom_label)
        self.one_lane_action: QAction | None = None  # View → One lane at a time (menus.py)
        self._one_lane_by_presenter = False  # presenter mode turned it on, and turns it off
        self._show_zoom()

    @property
    def scale(self) -> float:
        return self.zoom * (PRESENTER_SCALE if self.on else 1.0)

    def set_on(self, on: bool) -> None:
        if on == self.on:
            return
        self.on = on
        self.editors.setVisible(not on)
        self.summary.setText(self._summary())
        self.bar.setVisible(on)
        theme.high_contrast = on
        self._lay_out_lanes()
        self.apply()

    def _lay_out_lanes(self) -> None:
        action = self.one_lane_action
        if action is None:
            return
        if self.on and not action.isChecked():
            least = ONE_LANE_FROM if self.window.width() >= TWO_SIDE_BY_SIDE_FROM else 2
            if self.shown.run_tabs.lane_count() >= least:
                self._one_lane_by_presenter = True
                action.setChecked(True)
        elif not self.on and self._one_lane_by_presenter:
            self._one_lane_by_presenter = False
            action.setChecked(False)

    def zoom_in(self) -> None:
        self._zoom_to(next((z for z in ZOOM_STEPS if z > self.zoom + 1e-6), ZOOM_STEPS[-1]))

    def zoom_out(self) -> None:
        below = [z for z in ZOOM_STEPS if z < self.zoom - 1e-6]
        self._zoom_to(below[-1] if below else ZOOM_STEPS[0])

    def zoom_reset(self) -> None:
        self._zoom_to(1.0)

    def _zoom_to(self, zoom: float) -> None:
        self.zoom = zoom
        self.shown.settings.setValue("zoom", zoom)
        self.apply()

    def apply(self) -> None:
        """Scale the application's font and every font set on its own, and colour the
        traces; lanes made later are sized when the Compare tab shows them (the window calls
        this then)."""
        window = self.window
        set_app_scale(self.scale)
        self.shown.run_tabs.set_presenting(self.on)
        traces = window.findChildren(TraceView)
        answers = [w for w in window.findChildren(QLabel) if w.objectName() == "finalAnswer"]
        prompt = self.shown.prompt_panel
        for widget in (*traces, *answers, prompt.template_edit, prompt.rendered_view):
            _scale(widget, self.scale)
        for trace in traces:
            trace.highlighter.set_palette(trace.palette())
        self.summary.setText(self._summary())
        self._show_zoom()
        # A widget's size hint follows its new font, but the layouts holding it ask again
        # only when told: without this, tool buttons kept their old widths, elided ("Ad…ne").
        for child in window.findChildren(QWidget):
            child.updateGeometry()

    def release(self) -> None:
        """The window closes: the application's font and the trace colours back as they were
        (both outlive windows)."""
        set_app_scale(1.0)
        theme.high_contrast = False

    def _show_zoom(self) -> None:
        text = f"Zoom {round(self.zoom * 100)} %"
        self.zoom_label.setText(f"{text} · presenter ×{PRESENTER_SCALE:g}" if self.on else text)

    def _summary(self) -> str:
        s = self.shown.current_scenario()
        model = self.shown.backend_panel.choice().model
        tools = ", ".join(s.enabled_tools) or "no tools"
        # The question as the model is asked it: {{seats}} filled, as the trace shows it.
        return f"{s.title} · {s.asked_question} · {model} · {tools} · {s.max_steps} steps"


def _scale(widget: QWidget, scale: float) -> None:
    base = widget.property(BASE_SIZE)
    if not isinstance(base, float):
        # A font of its own (the fixed-width font) has no zoom in it: its size is the base.
        factor = widget.property(FONT_FACTOR)
        own = widget.font().pointSizeF()
        base = app_base_size() * factor if isinstance(factor, float) else own
        widget.setProperty(BASE_SIZE, base)
    font = QFont(widget.font())
    font.setPointSizeF(base * scale)
    widget.setFont(font)
