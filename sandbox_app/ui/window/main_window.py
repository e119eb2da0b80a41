"""The sandbox window: the scenario's editors on the left, its runs on the right.

The window only lays things out and wires them: the scenario lives in the workspace (core),
the editors write to it, the Run tab is a RunPane, the comparison a CompareView, the File
menu's work FileActions. Anything running locks the editors until it ends.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, QSettings, QSignalBlocker, Qt, QTimer
from PySide6.QtGui import QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
    QToolButton,
    QWidget,
)

from sandbox_app.application.workspace import Change, Workspace
from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.backends.registry import SCRIPTED
from sandbox_app.core.results.prices import stored_prices
from sandbox_app.core.scenarios.document import ScenarioDocument
from sandbox_app.core.scenarios.prompt_versions import names_of
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.tools import Tool
from sandbox_app.core.tools.plugins import installed
from sandbox_app.ui.common import gc_policy
from sandbox_app.ui.common.plain import plain_label
from sandbox_app.ui.common.workspace_signals import QtWorkspace
from sandbox_app.ui.history.history_actions import HistoryActions
from sandbox_app.ui.lane.backend_panel import BackendPanel
from sandbox_app.ui.lane.lane_runner import LaneRunner
from sandbox_app.ui.lane.run_controller import RunController
from sandbox_app.ui.lane.run_pane import RunPane
from sandbox_app.ui.optimizing.opening import Improving
from sandbox_app.ui.telemetry.otel_out import OtelOut
from sandbox_app.ui.tools.tool_panel import ToolPanel
from sandbox_app.ui.trace.trace_view import TraceView
from sandbox_app.ui.window.editors_column import EditorsColumn
from sandbox_app.ui.window.file_actions import FileActions
from sandbox_app.ui.window.menus import build_menus
from sandbox_app.ui.window.presenter import Presenter
from sandbox_app.ui.window.prompt_panel import PromptPanel
from sandbox_app.ui.window.recordings import RecordingActions
from sandbox_app.ui.window.run_tabs import RunTabs
from sandbox_app.ui.window.trace_opening import TraceActions

if TYPE_CHECKING:  # imported when first built (the approvals and exports: first used)
    from sandbox_app.application.backend_choice import BackendChoice
    from sandbox_app.core.running.fork import ForkPoint
    from sandbox_app.ui.compare.compare_view import CompareView


class MainWindow(QMainWindow):
    """One workspace, its editors, one run pane and the comparison."""

    def __init__(
        self, settings: QSettings, keys: KeyStore | None = None, tools: list[Tool] | None = None
    ) -> None:
        super().__init__()
        self.settings = settings
        self.keys = keys or KeyStore()
        self.workspace = QtWorkspace(Workspace(tools or []), self)
        self.workspace.model.prices = stored_prices(settings.value("prices", "{}"))
        self.files = FileActions(self, self.workspace, settings, self.statusBar())
        self.history = HistoryActions(self, settings, self.statusBar(), self._show_past)
        self.history.version_names = lambda: names_of(self.current_scenario().prompt_history)
        self.otel = OtelOut(settings, self.keys, self.statusBar())  # File → Export as OTel, live
        self.prompt_panel = PromptPanel(self.workspace, self.history)
        self.tool_panel = ToolPanel(self.workspace, self.keys)
        self.backend_panel = BackendPanel(self.keys)
        self.run_pane = RunPane()
        self._compare: CompareView | None = None  # built when first shown: faster start-up
        self._applying = False  # filling widgets from a loaded scenario: not user edits
        self._build_layout()
        self.recordings = RecordingActions(self)
        self.traces = TraceActions(self)
        self.presenter = Presenter(self, self.column, self)
        self.show_thinking_action, self.presenter_action = build_menus(self, self)
        if self.presenter.zoom != 1.0:
            self.presenter.apply()  # the zoom the user left it at
        self.workspace.changed.connect(self._on_workspace_changed)
        self.backend_panel.changed.connect(self._on_backend_panel_changed)
        self.run_pane.runningChanged.connect(self._on_any_running_changed)
        self.lane = LaneRunner(
            "",
            self.backend_panel,
            self.run_pane,
            self.workspace,
            pace=self.recordings.live,
            before=self.recordings.leave,
            run_log=self.history.current,
        )
        self.run_pane.metricsChanged.connect(self._on_run_pane_metrics_changed)
        # Improve prompt… and Generate cases…: the Run tab's model and the lanes offered.
        self.improving = Improving(
            self.workspace, self.keys, self.history, self.prompt_panel.restorer,
            self.backend_panel.choice, self._lanes_offered, self,
        )  # fmt: skip
        self.prompt_panel.versionsMade.connect(self.improving.wire)  # the tab, first shown
        self._restore_settings()

    # ---- layout -------------------------------------------------------------------------

    def _build_layout(self) -> None:
        self.column = EditorsColumn(self.backend_panel, self.prompt_panel, self.tool_panel)
        self.editors = self.column.area  # the left panel's scroll area
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Run the scenario (Ctrl+Enter)")
        self.run_button.setShortcut(QKeySequence("Ctrl+Return"))
        self.run_button.setWhatsThis("Run the scenario")  # for Help → Keyboard shortcuts
        self.run_button.clicked.connect(lambda: self.start_run())
        self.run_pane.controls.insertWidget(0, self.run_button)
        self.run_pane.setContentsMargins(4, 4, 4, 4)  # clear of the tab frame
        self.stop_button.setToolTip("Stop the run (Esc)")
        self.stop_button.setShortcut(QKeySequence(Qt.Key.Key_Escape))
        self.stop_button.setWhatsThis("Stop the run")
        self.tabs = QTabWidget()
        self.tabs.addTab(self.run_pane, "Run")
        self.tabs.addTab(QWidget(), "Compare models")  # a stand-in until first shown
        self.tabs.currentChanged.connect(self._on_tabs_current_changed)
        self.run_tabs = RunTabs(
            self.tabs, self.run_pane, lambda: self.compare, lambda: self._compare
        )
        self.splitter = QSplitter()
        self.splitter.addWidget(self.column)  # what presenter mode collapses
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([380, 820])  # at 1,440 px four compare lanes fit beside it
        self.setCentralWidget(self.splitter)
        self.metrics_label = plain_label()
        self.statusBar().addPermanentWidget(self.metrics_label)
        # A plugin that could not be loaded: one line each, the app goes on without it.
        self.statusBar().showMessage(" · ".join(installed().problems))

    # ---- the run pane's parts, by the names tests and the app use ------------------------

    @property
    def controller(self) -> RunController:
        return self.run_pane.controller

    @property
    def trace(self) -> TraceView:
        return self.run_pane.trace

    @property
    def stop_button(self) -> QToolButton:
        return self.run_pane.stop_button

    @property
    def step_label(self) -> QLabel:
        return self.run_pane.step_label

    @property
    def answer_label(self) -> QLabel:
        return self.run_pane.answer_label

    @property
    def answer_status(self) -> QLabel:
        return self.run_pane.answer_status

    @property
    def progress(self) -> QProgressBar:
        return self.run_pane.progress

    def showing_comparison(self) -> bool:
        return self._compare is not None and self.tabs.currentWidget() is self._compare

    @property
    def compare(self) -> CompareView:
        """The comparison, built on first use (two lanes of widgets the Run tab never needs)."""
        if self._compare is None:
            from sandbox_app.ui.compare.compare_view import CompareView

            self._compare = CompareView(self.workspace, self.keys)
            self._compare.pace = self.recordings.live
            self._compare.eval_panel.history.source = self.history.current
            self._compare.eval_panel.history.place = lambda: self.path
            self._compare.runningChanged.connect(self._on_any_running_changed)
            self.improving.attach(self._compare.eval_panel)
            current, stand_in = self.tabs.currentIndex(), self.tabs.widget(1)
            with QSignalBlocker(self.tabs):
                self.tabs.removeTab(1)
                if stand_in is not None:
                    stand_in.deleteLater()
                self.tabs.insertTab(1, self._compare, "Compare models")
                self.tabs.setCurrentIndex(current)
        return self._compare

    def _lanes_offered(self) -> list[BackendChoice]:  # the comparison's, once it is built
        return self._compare.eval_lanes() if self._compare is not None else []

    def _show_past(self, *evaluation: Any) -> bool:  # History's Open in grid: the Test set tab
        self.tabs.setCurrentWidget(self.compare)
        self.compare.results_tabs.setCurrentIndex(1)  # shown first: its showEvent redraws
        return self.compare.eval_panel.show_evaluation(*evaluation)

    def _on_tabs_current_changed(self, index: int) -> None:
        if index == 1:
            self.tabs.setCurrentWidget(self.compare)
        # The status bar's figures are the Run tab's run on screen; the comparison's are in
        # its table, per lane.
        self.metrics_label.setText(self.run_pane.metrics_text if index == 0 else "")
        if self.presenter.on or self.presenter.zoom != 1.0:
            self.presenter.apply()  # lanes made since are sized too

    # ---- the scenario ---------------------------------------------------------------------

    @property
    def scenario(self) -> Scenario:
        """The scenario as last opened or saved: the baseline for "unsaved edits"."""
        return self.workspace.model.document.saved

    @property
    def path(self) -> Path | None:
        return self.workspace.model.document.path

    @property
    def modified(self) -> bool:
        return self.workspace.model.modified

    def current_scenario(self) -> Scenario:
        """The scenario being edited, as the editors show it."""
        return self.workspace.model.scenario

    def set_scenario(self, scenario: Scenario, path: Path | None = None) -> None:
        self.workspace.model.show(ScenarioDocument(scenario, path))

    def _on_workspace_changed(self, change: Change) -> None:
        if change.touches("document"):
            self.setWindowTitle(f"ReAct Sandbox — {self.workspace.model.document.title}")
        if change.loaded:
            self.run_pane.reset()  # the last scenario's runs are not this one's
        # Loaded, or set elsewhere (a restored prompt version's tool-calling mode): shown.
        if change.loaded or (change.touches("model") and change.source is not self.backend_panel):
            model = self.workspace.model.scenario.model
            self._applying = True
            try:
                self.backend_panel.set_sampling(model)
            finally:
                self._applying = False
        if change.touches("prices"):
            prices = self.workspace.model.prices
            table = {m: [p.input_per_million, p.output_per_million] for m, p in prices.items()}
            self.settings.setValue("prices", json.dumps(table))

    def _on_run_pane_metrics_changed(self, text: str) -> None:
        if not self.showing_comparison():
            self.metrics_label.setText(text)

    def _on_backend_panel_changed(self) -> None:
        if self._applying:
            return
        self.recordings.before_replay = None  # the user's own choice now
        self.workspace.update(self.backend_panel, model=self.backend_panel.choice().settings)

    # ---- running ------------------------------------------------------------------------

    def start_run(self, fork: ForkPoint | None = None) -> None:
        """Run the scenario, or (``fork``) run on from a kept run's step with the model and
        settings the panel shows now; at a pause, run on to the end."""
        self.lane.run(1, fork)

    def stop_run(self) -> None:
        self.run_pane.stop()

    def _anything_running(self) -> bool:
        return self.run_pane.running or (self._compare is not None and self._compare.running)

    def _on_any_running_changed(self, _running: bool) -> None:
        """While anything runs, the controls that would change the run are locked."""
        running = self._anything_running()
        if running:  # live mode follows every pane that runs (the lanes come and go)
            lanes = self._compare.lanes if self._compare is not None else []
            self.otel.follow([(self.run_pane, ""), *((lane.pane, lane.name) for lane in lanes)])
        for widget in (self.prompt_panel, self.tool_panel, self.backend_panel, self.run_button):
            widget.setEnabled(not running)
        if self._compare is not None:
            self._compare.run_button.setEnabled(not running)
        self.menuBar().setEnabled(not running)
        if not running:
            # A second later: the last frames of the run are drawn, and the user is reading.
            QTimer.singleShot(gc_policy.IDLE_DELAY_MS, self, self._collect_if_idle)

    def _collect_if_idle(self) -> None:
        if not self._anything_running():
            gc_policy.collect_while_idle()

    def undo_edit(self) -> None:
        self.prompt_panel.undo()

    def redo_edit(self) -> None:
        self.prompt_panel.redo()

    def copy_trace(self) -> None:
        """The latest run of the Run tab, as text (core/results/exports.py)."""
        from sandbox_app.core.results.exports import trace_text

        record = self.run_pane.history.latest
        QApplication.clipboard().setText(trace_text(record) if record else "")

    # ---- settings ------------------------------------------------------------------------

    def _restore_settings(self) -> None:
        geometry = self.settings.value("geometry")  # none, or one Qt cannot read: the default
        if not (isinstance(geometry, QByteArray) and self.restoreGeometry(geometry)):
            self.resize(1200, 800)
        self.files.restore()
        self.backend_panel.memory.load_setting(self.settings.value("backend/remembered"))
        self.backend_panel.select(
            str(self.settings.value("backend/preset", SCRIPTED)),
            str(self.settings.value("backend/base_url", "")),
            str(self.settings.value("backend/model", "")),
        )

    def save_settings(self) -> None:
        """Window state, backend choice and unsaved edits (never the API key)."""
        self.files.close()
        self.recordings.leave()  # the user's own choice is saved, never a recording's
        choice = self.backend_panel.choice()
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("backend/preset", self.backend_panel.backend_id())
        self.settings.setValue("backend/base_url", choice.base_url)
        self.settings.setValue("backend/model", choice.model)
        self.settings.setValue("backend/remembered", self.backend_panel.memory.to_setting())
        self.settings.sync()

    async def shutdown(self) -> None:
        """Stop every run and wait until their streams are closed."""
        lanes = self._compare.lanes if self._compare is not None else []
        controllers = [self.controller, *(lane.controller for lane in lanes)]
        for controller in controllers:
            controller.stop()
        for controller in controllers:
            await controller.wait()
        if self._compare is not None:
            await self._compare.eval_panel.finish()
        await self.improving.finish()
        await self.tool_panel.mcp.close_all()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_settings()
        self.otel.close()  # live mode's queue sent off the GUI thread
        self.presenter.release()
        self.controller.stop()  # the app awaits shutdown() before the loop ends
        if self._compare is not None:
            self._compare.stop_all()
        super().closeEvent(event)
