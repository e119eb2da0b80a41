"""Compare models side by side: 2–4 lanes streaming the same scenario at once, and a live table.

Every lane is a LaneWidget around the same RunPane as the Run tab, so lanes stream
concurrently on the one qasync loop and never wait for each other. The lanes' settings live in
the workspace's scenario; the table below is rebuilt from the lanes' run records, and every
export reads those records through core/results/exports.py.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.application.backend_choice import BackendChoice
from sandbox_app.application.workspace import Change
from sandbox_app.backends.catalogue.keys import KeyStore, UrlSource
from sandbox_app.core.results.compare import MAX_LANES, MIN_LANES, Price
from sandbox_app.core.results.exports import Comparison
from sandbox_app.core.running.events import Event, RunFinished, StepFinished
from sandbox_app.core.running.recording import Recording
from sandbox_app.core.running.records import RunSettings
from sandbox_app.core.scenarios.scenario import Expected, LaneConfig, Scenario
from sandbox_app.ui.common.fitting import scrolling, side_by_side, tool_button
from sandbox_app.ui.common.plain import plain_label
from sandbox_app.ui.common.workspace_signals import QtWorkspace
from sandbox_app.ui.compare.compare_exports import ComparisonExports
from sandbox_app.ui.compare.comparison_table import ComparisonTable
from sandbox_app.ui.compare.eval_panel import EvalPanel
from sandbox_app.ui.compare.lane_strip import LaneStrip
from sandbox_app.ui.compare.lane_variants import LaneVariants, MatrixDialog, show_cell
from sandbox_app.ui.compare.price_dialog import open_prices
from sandbox_app.ui.compare.results_room import ResultsRoom
from sandbox_app.ui.lane.key_confirmation import KeyConfirmation
from sandbox_app.ui.lane.lane_runner import LaneRunner
from sandbox_app.ui.lane.lane_widget import LaneWidget
from sandbox_app.ui.trace.trace_diff_dialog import TraceDiffDialog, open_diff


class CompareView(QWidget):
    """Lanes side by side over the workspace's scenario, a live comparison table, exports.

    Signals:
        runningChanged(bool): any lane is running (True) or all have stopped (False).
    """

    runningChanged = Signal(bool)

    def __init__(
        self, workspace: QtWorkspace, keys: KeyStore, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.workspace = workspace
        # The offline model's pace (View → Pace); the window sets it, the same for every lane.
        self.pace: Callable[[Scenario], Scenario] = lambda scenario: scenario
        self.keys = keys
        self.key_confirmation = KeyConfirmation(keys, self.window)
        self.lanes: list[LaneWidget] = []
        self._next_lane_number = 1

        self.add_button = tool_button("Add lane")  # fitting.py: narrow screens, large zooms
        self.run_button = tool_button("Run all")
        self.stop_button = tool_button("Stop all")
        self.stop_button.setEnabled(False)
        self.repeat_spin = QSpinBox()
        self.repeat_spin.setRange(1, 20)
        self.repeat_spin.setPrefix("Repeat ")
        self.repeat_spin.setSuffix("×")
        self.repeat_spin.setToolTip("Run each lane N times: one run proves little")
        self.diff_button = tool_button("Diff lanes…")
        self.diff_button.setToolTip("Two lanes' runs side by side, step by step, where they part")
        self.prices_button = tool_button("Prices…")
        self.prices_button.setToolTip("Dollars per million tokens, per model, for the Cost column")
        self.message = plain_label()
        self.message.setWordWrap(True)
        self.matrix_button = tool_button("Matrix…")
        self.matrix_button.setToolTip("Prompt versions × models: a lane for each pair")
        self.variants = LaneVariants(keys, self.set_lanes, self.message)
        self.exports = ComparisonExports(
            self, self.exported, lambda: self.eval_panel.exported(), self.message
        )
        self.export_button = self.exports.button
        toolbar = QHBoxLayout()
        for widget in (self.add_button, self.run_button, self.stop_button):
            toolbar.addWidget(widget)
        toolbar.addWidget(self.repeat_spin)
        toolbar.addWidget(self.message, 1)
        toolbar.addWidget(self.prices_button)
        toolbar.addWidget(self.export_button)

        self.strip = LaneStrip()
        self.lane_splitter = self.strip.splitter
        self.table = ComparisonTable()
        self.eval_panel = EvalPanel(
            lambda: self.workspace.model.scenario,
            self.eval_lanes,
            self.repeat_spin.value,
            keys,
            lambda **changes: self.workspace.update(self, **changes),
            lambda: self.workspace.model.sources,
            confirm=self.key_confirmation.then,
            prices=lambda: self.prices,
        )
        self.eval_panel.traceRequested.connect(
            lambda label, record, title: show_cell(self.lanes, label, record, title)
        )
        self.eval_panel.runningChanged.connect(self._on_lane_running_changed)
        self.repeat_spin.valueChanged.connect(lambda _n: self.eval_panel.update_buttons())
        self.results_tabs = QTabWidget()  # one run's comparison, or the whole test set
        self.results_tabs.addTab(self.table, "Comparison")
        self.results_tabs.addTab(scrolling(self.eval_panel), "Test set")
        # Beside the results' tabs, not in the toolbar: that must fit an 800-px screen.
        self.results_tabs.setCornerWidget(side_by_side(self.matrix_button, self.diff_button))
        vertical = QSplitter(Qt.Orientation.Vertical)
        self.results_room = ResultsRoom(vertical, self.strip, self.results_tabs)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 0)  # buttons clear of the tab frame
        layout.addLayout(toolbar)
        layout.addWidget(vertical, 1)

        self.add_button.clicked.connect(lambda: self.add_lane())
        self.run_button.clicked.connect(self.run_all)
        self.stop_button.clicked.connect(self.stop_all)
        self.prices_button.clicked.connect(self._on_prices_button_clicked)
        self.diff_button.clicked.connect(self.diff_lanes)
        self.matrix_button.clicked.connect(self.open_matrix)
        workspace.changed.connect(self._on_workspace_changed)
        self._show_lanes(workspace.model.scenario.lanes)

    # ---- lanes ------------------------------------------------------------------------

    @property
    def prices(self) -> dict[str, Price]:
        return self.workspace.model.prices

    def set_lanes(self, configs: tuple[LaneConfig, ...]) -> None:
        """Replace the lanes (an edit of the scenario's lanes, like adding one)."""
        self._show_lanes(configs)
        self._push_lanes()

    def _show_lanes(self, configs: tuple[LaneConfig, ...]) -> None:
        for lane in list(self.lanes):
            self._drop(lane)
        self._next_lane_number = 1
        for config in configs[:MAX_LANES]:
            self._add(config)
        while len(self.lanes) < MIN_LANES:
            self._add(LaneConfig())
        self._update_lane_buttons()
        self.refresh_table()

    def _push_lanes(self) -> None:
        self.workspace.update(self, lanes=self.lane_configs())

    def _on_workspace_changed(self, change: Change) -> None:
        if change.loaded:
            self._show_lanes(self.workspace.model.scenario.lanes)
        if change.touches("prompt_history"):  # the lanes' Prompt boxes offer its versions
            self.variants.offer(self.lanes, self.workspace.model.scenario.prompt_history)
        elif change.touches("prices", "expected"):
            self.refresh_table()

    def lane_configs(self) -> tuple[LaneConfig, ...]:
        """The lanes as the scenario holds them: a lane still showing a recording stands for
        the scenario's own lane in its place (or for none)."""
        configs = []
        for lane in self.lanes:
            config = self._scenario_lane(lane) if lane.shows_recording else lane.config()
            if config is not None:
                configs.append(config)
        return tuple(configs)

    def add_lane(
        self, config: LaneConfig | None = None, source: UrlSource = "user"
    ) -> LaneWidget | None:
        if len(self.lanes) >= MAX_LANES:
            return None
        lane = self._add(config or LaneConfig(), source)
        self._update_lane_buttons()
        self.refresh_table()
        self._push_lanes()
        return lane

    def _add(self, config: LaneConfig, source: UrlSource = "file") -> LaneWidget:
        lane = LaneWidget(f"Lane {self._next_lane_number}", self.keys)
        self._next_lane_number += 1
        lane.set_config(config, source)
        lane.removeRequested.connect(lambda: self.remove_lane(lane))
        lane.duplicateRequested.connect(
            lambda: self.add_lane(lane.config(), lane.backend_panel.choice().config.url_source)
        )
        lane.configChanged.connect(lambda: self._on_lane_edited(lane))
        lane.controller.engineEvents.connect(self._on_lane_engine_events)
        lane.controller.runningChanged.connect(self._on_lane_running_changed)
        lane.pane.traces.stepClicked.connect(self.align_to_step)
        lane.runner = LaneRunner(
            lane.name,
            lane.backend_panel,
            lane.pane,
            self.workspace,
            pace=lambda scenario: self.pace(scenario),  # the window may set it later
            confirm=self.key_confirmation,
            before=lambda: self._leave_recording(lane),
            started=lambda choice: setattr(lane.record, "model", choice.model),
            run_log=lambda: self.eval_panel.history.source(),  # the window sets it
        )
        self.lanes.append(lane)
        self.strip.add(lane)
        self.variants.offer([lane], self.workspace.model.scenario.prompt_history)
        return lane

    def _on_lane_edited(self, lane: LaneWidget) -> None:
        lane.shows_recording = False  # the user's own now: part of the scenario
        self._push_lanes()

    def remove_lane(self, lane: LaneWidget) -> None:
        if len(self.lanes) > MIN_LANES and not lane.controller.running:
            self._drop(lane)
            self._update_lane_buttons()
            self.refresh_table()
            self._push_lanes()

    def _drop(self, lane: LaneWidget) -> None:
        self.lanes.remove(lane)
        lane.runner.dropped = True
        lane.backend_panel.abandon()  # a Refresh still waiting must not outlive its widgets
        self.strip.remove(lane)
        lane.deleteLater()

    def _update_lane_buttons(self) -> None:
        self.add_button.setEnabled(len(self.lanes) < MAX_LANES)
        for lane in self.lanes:
            lane.remove_button.setVisible(len(self.lanes) > MIN_LANES)
            lane.duplicate_button.setVisible(len(self.lanes) < MAX_LANES)

    # ---- running ----------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return any(lane.controller.running for lane in self.lanes) or self.eval_panel.running

    def run_all(self) -> None:
        for lane in self.lanes:
            lane.runner.run(self.repeat_spin.value())
        self.refresh_table()

    def eval_lanes(self) -> list[BackendChoice]:
        """The lanes and a matrix's further pairs, as the test-set runner takes them."""
        for lane in self.lanes:
            self._leave_recording(lane)
        return self.variants.eval_lanes(self.lanes)

    def open_matrix(self) -> MatrixDialog:
        runs = sum(len(lane.pane.history) for lane in self.lanes)  # what OK would replace
        return self.variants.open_matrix(self.workspace.model, self.lane_configs(), runs, self)

    def diff_lanes(self) -> TraceDiffDialog | None:
        """The lanes' runs on screen side by side (the first two first): a trace diff."""
        runs = [
            (f"{lane.name} · {record.settings.model or record.settings.backend}", record)
            for lane in self.lanes
            if (record := lane.pane.shown_record()) is not None
        ]
        if len(runs) < 2:
            self.message.setText("Diff lanes needs two lanes that have run.")
            return None
        self.message.setText("")
        return open_diff(runs, 0, 1, self)

    def stop_all(self) -> None:
        for lane in self.lanes:
            lane.controller.stop()
        self.eval_panel.stop()

    def align_to_step(self, step: int) -> None:
        """Scroll every lane to its own step ``step`` (lanes that never got there stay put)."""
        for lane in self.lanes:
            lane.pane.traces.scroll_to_step(step)  # the live view, or a long trace's rows

    def _on_lane_engine_events(self, events: list[Event]) -> None:
        if any(isinstance(event, RunFinished | StepFinished) for event in events):
            self.refresh_table()

    def _on_lane_running_changed(self, _running: bool) -> None:
        running = self.running
        self.run_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        self.add_button.setEnabled(not running and len(self.lanes) < MAX_LANES)
        self.repeat_spin.setEnabled(not running)
        self.refresh_table()
        self.runningChanged.emit(running)

    # ---- the table and exports --------------------------------------------------------

    def rows(self) -> list[dict[str, str]]:
        return [
            lane.record.summary(self._expected(lane), self.prices.get(lane.record.model))
            for lane in self.lanes
        ]

    def _expected(self, lane: LaneWidget) -> Expected | None:
        """The verdict rule: the scenario being compared's (None: nothing to check), or for a
        played-back run the recorded scenario's."""
        latest = lane.pane.history.latest
        if latest is not None and latest.replayed and latest.scenario is not None:
            return latest.scenario.expected
        return self.workspace.model.scenario.expected

    def play(self, recording: Recording, speed: float) -> None:
        """Play a recorded comparison: its lanes (settings as recorded), each its own run.

        The recording's lanes are shown, not adopted: the scenario keeps its own lanes (and is
        not marked modified). A lane the user edits, or runs, becomes the scenario's again.
        """
        self._show_lanes(tuple(_lane_config(lane.settings) for lane in recording.lanes))
        for lane, recorded in zip(self.lanes, recording.lanes, strict=False):
            lane.show_recording(recorded, recording.scenario, speed)
        self.refresh_table()

    def _scenario_lane(self, lane: LaneWidget) -> LaneConfig | None:
        """The scenario's own settings for the place this lane holds, if it has one."""
        configs = self.workspace.model.scenario.lanes
        index = self.lanes.index(lane)
        return configs[index] if index < len(configs) else None

    def _leave_recording(self, lane: LaneWidget) -> None:
        """Before a lane showing a recording runs: back to the scenario's settings for it."""
        if lane.shows_recording:
            lane.set_config(self._scenario_lane(lane) or LaneConfig())
            lane.shows_recording = False

    def refresh_table(self) -> None:
        self.table.show_rows(self.rows())

    def exported(self) -> Comparison:
        """The comparison as its exports read it (core/results/exports.py)."""
        scenario = self.workspace.model.scenario
        records = [lane.record for lane in self.lanes]
        return Comparison(scenario.title, scenario.question, records, self.rows())

    def _on_prices_button_clicked(self) -> None:
        models = [lane.backend_panel.choice().model for lane in self.lanes]
        open_prices(self.prices, models, self, self.set_prices)

    def set_prices(self, prices: dict[str, Price]) -> None:
        self.workspace.model.set_prices(prices)


def _lane_config(settings: RunSettings) -> LaneConfig:
    """A lane configured as a recorded run was (its settings; never a key)."""
    return LaneConfig(settings.backend or "scripted", settings.base_url, settings.model)
