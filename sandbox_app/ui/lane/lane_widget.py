"""One model's column in the comparison: its model settings above a RunPane.

The run part is the same RunPane as the Run tab; a lane adds only its title, its own backend
settings (each lane may use another server, model, temperature) and Copy / Remove.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from sandbox_app.backends.catalogue.keys import KeyStore, UrlSource
from sandbox_app.core.results.compare import LaneRecord
from sandbox_app.core.running.recording import RecordedLane
from sandbox_app.core.scenarios.scenario import LaneConfig, Scenario
from sandbox_app.ui.common.fitting import hold_height_for_width
from sandbox_app.ui.common.plain import plain_label
from sandbox_app.ui.grading.grade_bar import GradeBar
from sandbox_app.ui.lane.backend_panel import BackendPanel, kind_caption
from sandbox_app.ui.lane.lane_runner import LaneRunner
from sandbox_app.ui.lane.run_controller import RunController
from sandbox_app.ui.lane.run_pane import RunPane
from sandbox_app.ui.trace.trace_view import TraceView


class LaneWidget(QFrame):
    """A lane's settings and its runs.

    Signals:
        removeRequested(): the user asked to remove this lane.
        duplicateRequested(): the user asked for a copy of this lane.
        configChanged(): the user changed this lane's model settings.
    """

    removeRequested = Signal()
    duplicateRequested = Signal()
    configChanged = Signal()
    # Starts its runs (ui/lane/lane_runner.py, as the Run tab's); set by the view that places
    # the lane, which knows the workspace and who confirms keys.
    runner: LaneRunner

    def __init__(self, name: str, keys: KeyStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.name = name
        self.backend_panel = BackendPanel(keys, lane=True)
        self.pane = RunPane(answer_scale=1.15)
        self.record = LaneRecord(name, "", self.pane.history)
        self._config = LaneConfig()
        self._applying = False  # set_config at work: its widget changes are not user edits
        # Showing a played recording's settings, which are not the scenario's (compare_view).
        self.shows_recording = False
        self.compact = False  # one line of chrome: set_compact
        self._answer_row: QHBoxLayout | None = None  # compact: the answer beside its verdict
        self.title = plain_label(name)  # a lane's name may come from a file
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.model_label = plain_label()
        # Which prompt version the lane's run on screen was told: the pane's line, in the title.
        self.prompt_label = self.pane.ran_prompt.label
        self.pane.controls.removeWidget(self.prompt_label)
        # Long model names must not widen the lane; they wrap rather than being cut.
        self.model_label.setMinimumWidth(40)
        self.model_label.setWordWrap(True)
        # Short labels (full words in the tooltips): four lanes must fit beside the editor.
        self.settings_button = QToolButton()
        self.settings_button.setText("Settings")
        self.settings_button.setCheckable(True)
        self.settings_button.setToolTip("Show or hide this lane's model settings")
        self.duplicate_button = QToolButton()
        self.duplicate_button.setText("Copy")
        self.duplicate_button.setToolTip("Duplicate this lane")
        self.remove_button = QToolButton()
        self.remove_button.setText("✕")
        self.remove_button.setToolTip("Remove this lane")
        title_row = self._title_row = QHBoxLayout()
        title_row.addWidget(self.title)
        title_row.addStretch(0)  # (an item still: compact mode puts the status after it)
        title_row.addWidget(self.prompt_label, 1)
        title_row.addWidget(self.duplicate_button)
        title_row.addWidget(self.remove_button)
        self.pane.controls.insertWidget(0, self.settings_button)
        # A lane's status ("Done after 3 of 5 steps") gets a line of its own, under its
        # buttons: beside them, three lanes in a 1200-px window cut it to "Don".
        step_label = self.pane.step_label
        self.pane.controls.removeWidget(step_label)
        self.pane.controls.addStretch(1)
        # One line, not wrapped: a wrapped label makes the pane's minimum its full preferred
        # height (Qt's height-for-width), which squeezed the settings above it.
        step_label.setWordWrap(False)
        pane_layout = self.pane.layout()
        if isinstance(pane_layout, QVBoxLayout):
            pane_layout.insertWidget(1, step_label)
        layout = QVBoxLayout(self)
        layout.addLayout(title_row)
        # Under the title, the lane's whole width: "Anthropic (Claude) · claude-sonnet-4-5"
        # beside the buttons of four lanes at 1440 px wrapped a word a line.
        layout.addWidget(self.model_label)
        # The trace gives way, never the settings' rows; the lane strip scrolls (fitting.py).
        hold_height_for_width(self.backend_panel, whole=True)
        hold_height_for_width(self)
        layout.addWidget(self.backend_panel)
        layout.addWidget(self.pane, 1)
        self.settings_button.toggled.connect(self.backend_panel.setVisible)
        self.backend_panel.changed.connect(self._on_backend_panel_changed)
        self.settings_button.setChecked(True)
        self._on_backend_panel_changed()
        self.remove_button.clicked.connect(self.removeRequested)
        self.duplicate_button.clicked.connect(self.duplicateRequested)
        self.pane.runningChanged.connect(self._on_pane_running_changed)

    # The run part, by the names the compare view and tests use.
    @property
    def controller(self) -> RunController:
        return self.pane.controller

    @property
    def trace(self) -> TraceView:
        return self.pane.trace

    @property
    def status(self) -> QLabel:
        """How the lane's last run ended (answer status line)."""
        return self.pane.answer_status

    def config(self) -> LaneConfig:
        return self._config

    def set_config(self, config: LaneConfig, source: UrlSource = "file") -> None:
        """Show a lane's settings; ``source``: where its base URL came from (keys.py)."""
        self._applying = True
        try:
            self.backend_panel.select(config.backend, config.base_url, config.model, source)
            self.backend_panel.set_sampling(config.settings)
        finally:
            self._applying = False
        self._config = replace(config, backend=self.backend_panel.backend_id())
        # A configured lane gives its height to the trace; Settings shows the form again.
        self.settings_button.setChecked(not config.model)

    def _config_from_widgets(self) -> LaneConfig:
        choice = self.backend_panel.choice()
        return LaneConfig(
            self.backend_panel.backend_id(),
            choice.base_url,
            choice.model if choice.config.kind.has("model") else "",
            choice.settings,
        )

    def _on_backend_panel_changed(self) -> None:
        choice = self.backend_panel.choice()
        where = kind_caption(choice.config)
        mode = " · native tool calls" if choice.settings.tool_calling == "native" else ""
        pin = choice.settings.prompt
        pinned = f" · prompt {pin[:8]}" if pin else ""  # the editor's: said after a run
        self.model_label.setText(f"{where} · {choice.model or 'no model chosen'}{mode}{pinned}")
        self._show_title()
        if self._applying:
            return
        config = self._config_from_widgets()
        if config != self._config:
            self._config = config
            self.configChanged.emit()

    def set_compact(self, on: bool) -> None:
        """One line of chrome (presenter mode's one lane at a time, on a projector): the
        lane's name, model and status share the title row; the buttons, the progress bar and
        the settings form step aside, and the trace gets the height."""
        if on == self.compact:
            return
        self.compact = on
        step_label = self.pane.step_label
        pane_layout = self.pane.layout()
        assert isinstance(pane_layout, QVBoxLayout)
        # Taken out of one layout before it joins the other: Qt warns of a widget in two.
        if on:
            pane_layout.removeWidget(step_label)
            self._title_row.insertWidget(2, step_label)  # after the name and the stretch
        else:
            self._title_row.removeWidget(step_label)
            pane_layout.insertWidget(1, step_label)
        step_label.show()  # a widget moved to another parent is hidden until shown again
        self._answer_beside_status(on, pane_layout)
        # The prompt version it ran: the table's Prompt column says it (the row stays one line).
        # The grade bar too: a person grades at a desk, not on the projector's 600 px.
        chrome = (
            self.model_label,
            self.pane.controls_bar,
            self.duplicate_button,
            self.prompt_label,
            *self.pane.findChildren(GradeBar),
        )
        for widget in (*chrome, self.remove_button):
            widget.setVisible(not on)
        self.backend_panel.setVisible(not on and self.settings_button.isChecked())
        self._show_title()

    def _answer_beside_status(self, on: bool, pane_layout: QVBoxLayout) -> None:
        """Compact: the answer and its ✔/✘ line share a row (a line more of trace at 600 px)."""
        answer, status = self.pane.answer_label, self.pane.answer_status
        if on:
            index = pane_layout.indexOf(answer)
            pane_layout.removeWidget(answer)
            pane_layout.removeWidget(status)
            row = self._answer_row = QHBoxLayout()
            row.addWidget(answer)
            row.addWidget(status, 1, Qt.AlignmentFlag.AlignVCenter)
            pane_layout.insertLayout(index, row)
        elif self._answer_row is not None:
            row, self._answer_row = self._answer_row, None
            index = pane_layout.indexOf(row)
            pane_layout.removeItem(row)
            row.removeWidget(answer)
            row.removeWidget(status)
            row.deleteLater()
            pane_layout.insertWidget(index, answer)
            pane_layout.insertWidget(index + 1, status)

    def _show_title(self) -> None:
        model = self.model_label.text()
        self.title.setText(f"{self.name} · {model}" if self.compact and model else self.name)

    def show_recording(self, recorded: RecordedLane, scenario: Scenario, speed: float) -> None:
        """Play a recorded lane here; its settings are shown, not the scenario's (compare_view
        gives the lane back to the scenario when it is edited or run)."""
        self.shows_recording = True
        self.record.model = recorded.settings.model
        # A recording plays with no network: its server is not checked by itself (Check
        # still asks it when pressed; a lane the user edits is checked again).
        self.backend_panel.health_line.cancel()
        self.pane.replay(recorded, scenario, speed)

    def _on_pane_running_changed(self, running: bool) -> None:
        self.record.running = running
        for widget in (self.backend_panel, self.duplicate_button, self.remove_button):
            widget.setEnabled(not running)
