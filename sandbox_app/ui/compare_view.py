"""Compare models side by side: 2–4 lanes streaming the same scenario at once, and a live table.

Every lane is the same three parts as the main view: a BackendPanel, a TraceView and a
RunController, so lanes stream concurrently on the one qasync loop and never wait for each
other. The table below the lanes is rebuilt from the lanes' records as runs finish.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.backends.keys import KeyStore
from sandbox_app.core.compare import (
    COLUMNS,
    LaneRecord,
    Price,
    coalesce_tokens,
    to_csv,
    to_json,
    to_markdown,
)
from sandbox_app.core.events import Event, RunFinished, StepFinished, StepStarted
from sandbox_app.core.metrics import how_far
from sandbox_app.core.scenario import Expected, LaneConfig, Scenario
from sandbox_app.core.tools import Tool
from sandbox_app.ui.backend_panel import SCRIPTED, BackendPanel
from sandbox_app.ui.price_dialog import PriceDialog
from sandbox_app.ui.run_controller import RunController
from sandbox_app.ui.trace_view import TraceView

MIN_LANES, MAX_LANES = 2, 4
Approver = Callable[[str, str, str], Awaitable[bool]]  # (tool, input, lane name) → run it?


class LaneWidget(QFrame):
    """One model's column: its settings, its live trace and the status of its last run.

    Signals:
        removeRequested(): the user asked to remove this lane.
        duplicateRequested(): the user asked for a copy of this lane.
    """

    removeRequested = Signal()
    duplicateRequested = Signal()

    def __init__(self, name: str, keys: KeyStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.name = name
        self.record = LaneRecord(name, "")
        self._step = 0  # the step the current run reached
        self.controller = RunController(self)
        self.backend_panel = BackendPanel(keys)
        self.trace = TraceView()
        self.title = QLabel(f"<b>{name}</b>")
        self.status = QLabel("Ready")
        self.status.setWordWrap(True)
        self.repeat_combo = QComboBox()
        self.repeat_combo.setToolTip("Show the trace of one repeat")
        self.stop_button = QToolButton()
        self.stop_button.setText("Stop")
        self.stop_button.setEnabled(False)
        # Short labels (full words in the tooltips): four lanes must fit beside the editor.
        self.duplicate_button = QToolButton()
        self.duplicate_button.setText("Copy")
        self.duplicate_button.setToolTip("Duplicate this lane")
        self.remove_button = QToolButton()
        self.remove_button.setText("✕")
        self.remove_button.setToolTip("Remove this lane")
        self.settings_button = QToolButton()
        self.settings_button.setText("Settings")
        self.settings_button.setCheckable(True)
        self.settings_button.setToolTip("Show or hide this lane's model settings")
        self.model_label = QLabel()
        self.model_label.setMinimumWidth(40)  # long model names must not widen the lane
        title_row = QHBoxLayout()
        title_row.addWidget(self.title)
        title_row.addWidget(self.model_label, 1)
        buttons = QHBoxLayout()
        for widget in (
            self.settings_button,
            self.repeat_combo,
            self.stop_button,
            self.duplicate_button,
            self.remove_button,
        ):
            buttons.addWidget(widget)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(title_row)
        layout.addLayout(buttons)
        layout.addWidget(self.backend_panel)
        layout.addWidget(self.status)
        layout.addWidget(self.trace, 1)
        self.stop_button.clicked.connect(self.controller.stop)
        self.settings_button.toggled.connect(self.backend_panel.setVisible)
        self.backend_panel.changed.connect(self._on_backend_panel_changed)
        self.settings_button.setChecked(True)
        self._on_backend_panel_changed()
        self.remove_button.clicked.connect(self.removeRequested)
        self.duplicate_button.clicked.connect(self.duplicateRequested)
        self.repeat_combo.activated.connect(self._on_repeat_combo_activated)
        self.controller.repeatStarted.connect(self._on_controller_repeat_started)
        self.controller.engineEvents.connect(self._on_controller_engine_events)
        self.controller.runningChanged.connect(self._on_controller_running_changed)

    def config(self) -> LaneConfig:
        choice = self.backend_panel.choice()
        return LaneConfig(
            self.backend_panel.preset_combo.currentText(),
            choice.base_url,
            choice.model if choice.preset is not None else "",
            choice.temperature,
            choice.max_tokens,
        )

    def set_config(self, config: LaneConfig) -> None:
        self.backend_panel.select(config.backend, config.base_url, config.model)
        self.backend_panel.set_sampling(config.temperature, config.max_tokens)
        # A configured lane gives its height to the trace; Settings shows the form again.
        self.settings_button.setChecked(not config.model)

    def _on_backend_panel_changed(self) -> None:
        choice = self.backend_panel.choice()
        where = self.backend_panel.preset_combo.currentText()
        self.model_label.setText(f"{where} · {choice.model or 'no model chosen'}")

    def start(self, scenario: Scenario, tools: list[Tool], approve: Approver, repeats: int) -> None:
        choice = self.backend_panel.choice()
        lane_scenario = scenario.with_changes(
            model=replace(
                scenario.model, temperature=choice.temperature, max_tokens=choice.max_tokens
            )
        )

        async def approve_here(tool: str, input: str) -> bool:
            return await approve(tool, input, self.name)

        self.record = LaneRecord(self.name, choice.model, running=True)
        self.repeat_combo.clear()
        self.controller.start(choice.run_factory(lane_scenario, tools, approve_here), repeats)

    def show_repeat(self, index: int) -> None:
        """Redraw the trace of repeat ``index`` from its recorded events."""
        self.trace.clear_trace()
        for event in self.record.traces[index]:
            self.trace.show_event(event)
        self.trace.flush_all()

    def _showing_latest(self) -> bool:
        return self.repeat_combo.currentIndex() == self.repeat_combo.count() - 1

    def _on_controller_repeat_started(self, repeat: int) -> None:
        self._step = 0
        self.record.traces.append([])
        self.repeat_combo.addItem(f"Run {repeat + 1}")
        self.repeat_combo.setCurrentIndex(repeat)
        self.trace.clear_trace()

    def _on_controller_engine_events(self, events: list[Event]) -> None:
        for event in coalesce_tokens(events):
            self._show_event(event)

    def _show_event(self, event: Event) -> None:
        self.record.traces[-1].append(event)
        if self._showing_latest():
            self.trace.show_event(event)
        if isinstance(event, StepStarted):
            self._step = event.step
        elif isinstance(event, RunFinished):
            self.record.runs.append(event)
            where = how_far(event.status, self._step)
            outcome = event.status.replace("_", " ").capitalize()
            self.status.setText(f"{outcome} {where}: {event.answer or event.reason}")

    def _on_controller_running_changed(self, running: bool) -> None:
        self.record.running = running
        self.stop_button.setEnabled(running)
        for widget in (self.backend_panel, self.duplicate_button, self.remove_button):
            widget.setEnabled(not running)
        if running:
            self.status.setText("Running…")

    def _on_repeat_combo_activated(self, index: int) -> None:
        if 0 <= index < len(self.record.traces):
            self.show_repeat(index)


class CompareView(QWidget):
    """Lanes side by side over one scenario, a live comparison table, exports.

    Signals:
        runningChanged(bool): any lane is running (True) or all have stopped (False).
        pricesChanged(): the user edited the price table.
    """

    runningChanged = Signal(bool)
    pricesChanged = Signal()

    def __init__(
        self,
        keys: KeyStore,
        scenario: Callable[[], Scenario],
        tools: Callable[[Scenario], list[Tool]],
        approve: Approver,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.keys = keys
        self._scenario = scenario
        self._tools = tools
        self._approve = approve
        self.prices: dict[str, Price] = {}
        # The verdict rule comes from the scenario being compared (None: nothing to check).
        self.expected: Callable[[], Expected | None] = lambda: None
        self.lanes: list[LaneWidget] = []
        self._next_lane_number = 1

        self.add_button = QPushButton("Add lane")
        self.run_button = QPushButton("Run all")
        self.stop_button = QPushButton("Stop all")
        self.stop_button.setEnabled(False)
        self.repeat_spin = QSpinBox()
        self.repeat_spin.setRange(1, 20)
        self.repeat_spin.setPrefix("Repeat ")
        self.repeat_spin.setSuffix("×")
        self.repeat_spin.setToolTip("Run each lane N times: one run proves little")
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        export_menu = QMenu(self.export_button)
        export_menu.addAction("Copy table (Markdown)", self.copy_table)
        export_menu.addAction("Markdown…", lambda: self._export("md"))
        export_menu.addAction("CSV…", lambda: self._export("csv"))
        export_menu.addAction("JSON with every trace…", lambda: self._export("json"))
        self.export_button.setMenu(export_menu)
        self.prices_button = QPushButton("Prices…")
        self.prices_button.setToolTip("Dollars per million tokens, per model, for the Cost column")
        self.message = QLabel()
        self.message.setWordWrap(True)
        toolbar = QHBoxLayout()
        for widget in (self.add_button, self.run_button, self.stop_button, self.repeat_spin):
            toolbar.addWidget(widget)
        toolbar.addWidget(self.message, 1)
        toolbar.addWidget(self.prices_button)
        toolbar.addWidget(self.export_button)

        self.lane_splitter = QSplitter(Qt.Orientation.Horizontal)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        lanes_area = QScrollArea()  # four lanes on a small screen scroll instead of squeezing
        lanes_area.setWidget(self.lane_splitter)
        lanes_area.setWidgetResizable(True)
        vertical = QSplitter(Qt.Orientation.Vertical)
        vertical.addWidget(lanes_area)
        vertical.addWidget(self.table)
        vertical.setStretchFactor(0, 1)
        vertical.setSizes([560, 150])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 0)  # buttons clear of the tab frame
        layout.addLayout(toolbar)
        layout.addWidget(vertical, 1)

        self.add_button.clicked.connect(lambda: self.add_lane())
        self.run_button.clicked.connect(self.run_all)
        self.stop_button.clicked.connect(self.stop_all)
        self.prices_button.clicked.connect(self._on_prices_button_clicked)
        self.set_lanes(())

    # ---- lanes ------------------------------------------------------------------------

    def set_lanes(self, configs: tuple[LaneConfig, ...]) -> None:
        for lane in list(self.lanes):
            self._drop(lane)
        self._next_lane_number = 1
        for config in configs[:MAX_LANES] or (LaneConfig(SCRIPTED), LaneConfig(SCRIPTED)):
            self.add_lane(config)
        while len(self.lanes) < MIN_LANES:
            self.add_lane()

    def lane_configs(self) -> tuple[LaneConfig, ...]:
        return tuple(lane.config() for lane in self.lanes)

    def add_lane(self, config: LaneConfig | None = None) -> LaneWidget | None:
        if len(self.lanes) >= MAX_LANES:
            return None
        lane = LaneWidget(f"Lane {self._next_lane_number}", self.keys)
        self._next_lane_number += 1
        if config is not None:
            lane.set_config(config)
        lane.removeRequested.connect(lambda: self.remove_lane(lane))
        lane.duplicateRequested.connect(lambda: self.add_lane(lane.config()))
        lane.controller.engineEvents.connect(self._on_lane_engine_events)
        lane.controller.runningChanged.connect(self._on_lane_running_changed)
        lane.trace.stepClicked.connect(self.align_to_step)
        self.lanes.append(lane)
        self.lane_splitter.addWidget(lane)
        self._update_lane_buttons()
        self.refresh_table()
        return lane

    def remove_lane(self, lane: LaneWidget) -> None:
        if len(self.lanes) > MIN_LANES and not lane.controller.running:
            self._drop(lane)
            self._update_lane_buttons()
            self.refresh_table()

    def _drop(self, lane: LaneWidget) -> None:
        self.lanes.remove(lane)
        lane.setParent(None)
        lane.deleteLater()

    def _update_lane_buttons(self) -> None:
        self.add_button.setEnabled(len(self.lanes) < MAX_LANES)
        for lane in self.lanes:
            lane.remove_button.setVisible(len(self.lanes) > MIN_LANES)
            lane.duplicate_button.setVisible(len(self.lanes) < MAX_LANES)

    # ---- running ----------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return any(lane.controller.running for lane in self.lanes)

    def run_all(self) -> None:
        scenario = self._scenario()
        repeats = self.repeat_spin.value()
        for lane in self.lanes:
            lane.start(scenario, self._tools(scenario), self._approve, repeats)
        self.refresh_table()

    def stop_all(self) -> None:
        for lane in self.lanes:
            lane.controller.stop()

    def align_to_step(self, step: int) -> None:
        """Scroll every lane to its own step ``step`` (lanes that never got there stay put)."""
        for lane in self.lanes:
            lane.trace.scroll_to_step(step)

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
        expected = self.expected()
        return [
            lane.record.summary(expected, self.prices.get(lane.record.model)) for lane in self.lanes
        ]

    def refresh_table(self) -> None:
        rows = self.rows()
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, column in enumerate(COLUMNS):
                # Only cells that changed: every new item re-measures its column for the
                # resize-to-contents header, ~0.5 ms a cell, 30+ ms a refresh, a dropped frame
                # each time a lane finishes a step.
                item = self.table.item(r, c)
                if item is None:
                    self.table.setItem(r, c, QTableWidgetItem(row[column]))
                elif item.text() != row[column]:
                    item.setText(row[column])

    def copy_table(self) -> None:
        QApplication.clipboard().setText(to_markdown(self.rows()))

    def export_text(self, kind: str) -> str:
        rows = self.rows()
        if kind == "md":
            return to_markdown(rows)
        if kind == "csv":
            return to_csv(rows)
        scenario = self._scenario()
        records = [lane.record for lane in self.lanes]
        return to_json(scenario.title, scenario.question, records, rows)

    def _export(self, kind: str) -> None:
        name, _ = QFileDialog.getSaveFileName(self, "Export comparison", f"comparison.{kind}")
        if name:
            self.export_to(Path(name), kind)

    def export_to(self, path: Path, kind: str) -> bool:
        try:
            path.write_text(self.export_text(kind), encoding="utf-8")
        except OSError as err:
            self.message.setText(f"⚠ Cannot write {path.name}: {err.strerror or err}.")
            return False
        self.message.setText(f"Exported to {path.name}.")
        return True

    def _on_prices_button_clicked(self) -> None:
        dialog = PriceDialog(
            self.prices, [lane.backend_panel.choice().model for lane in self.lanes], self
        )
        dialog.accepted.connect(lambda: self.set_prices(dialog.prices()))
        dialog.open()

    def set_prices(self, prices: dict[str, Price]) -> None:
        self.prices = dict(prices)
        self.pricesChanged.emit()
        self.refresh_table()
