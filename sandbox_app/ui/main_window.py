"""The sandbox window: prompt and tools on the left, the live trace and its answer on the right."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QFont, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.backends.keys import KeyStore, host_of
from sandbox_app.core.compare import Price
from sandbox_app.core.document import KeptEdits, ScenarioDocument
from sandbox_app.core.events import Event, RunFinished, StepFinished, StepStarted
from sandbox_app.core.metrics import RunMetrics, StepMetrics, how_far
from sandbox_app.core.prompts import DEFAULT_TEMPLATE, PromptError, render_prompt
from sandbox_app.core.scenario import (
    ModelParams,
    SaveRefused,
    Scenario,
    ScenarioError,
    builtin_scenarios,
    default_scenario,
)
from sandbox_app.core.tools import Tool, builtin_tools
from sandbox_app.ui import gc_policy
from sandbox_app.ui.approval import ask_approval
from sandbox_app.ui.backend_panel import SCRIPTED, BackendPanel
from sandbox_app.ui.compare_view import CompareView
from sandbox_app.ui.prompt_panel import PromptPanel
from sandbox_app.ui.run_controller import RunController
from sandbox_app.ui.tool_panel import ToolPanel
from sandbox_app.ui.trace_view import TraceView

MAX_RECENT = 8
KEPT_EDITS_KEY = "session/unsaved"
WAIT_SHOWN_AFTER_S = 1.0  # a model usually starts within this; past it, say we are waiting
_STATUS_TEXT = {
    "answered": "✔ Answered",
    "max_steps": "■ Max steps reached",
    "stopped": "■ Stopped",
    "failed": "✖ Failed",
}


class MainWindow(QMainWindow):
    """One scenario, one backend, one live trace."""

    def __init__(
        self,
        settings: QSettings,
        keys: KeyStore | None = None,
        extra_tools: list[Tool] | None = None,
    ) -> None:
        super().__init__()
        self.settings = settings
        self.keys = keys or KeyStore()
        self.extra_tools = extra_tools or []  # tools beyond the built-ins (plug-ins, tests)
        self.document = ScenarioDocument(Scenario())
        self.controller = RunController(self)
        self.error_dialog: QMessageBox | None = None
        self.confirm_dialog: QMessageBox | None = None
        self._run_started = 0.0
        self._step = 0
        self._last_status = ""
        self._waiting_since: float | None = None
        self._waiting_for = ""
        self._step_metrics: list[StepMetrics] = []

        self.prompt_panel = PromptPanel()
        self.tool_panel = ToolPanel()
        self.backend_panel = BackendPanel(self.keys)
        self.trace = TraceView()
        self._build_layout()
        self._build_menus()
        self._elapsed_timer = QTimer(self)
        self._elapsed_timer.setInterval(100)
        self._elapsed_timer.timeout.connect(self._on_elapsed_timer_timeout)

        self.prompt_panel.changed.connect(self._on_scenario_edited)
        self.tool_panel.changed.connect(self._on_scenario_edited)
        self.controller.engineEvents.connect(self._on_controller_engine_events)
        self.controller.runningChanged.connect(self._on_controller_running_changed)
        self._restore_settings()

    # ---- layout -------------------------------------------------------------------------

    def _build_layout(self) -> None:
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.addWidget(self.prompt_panel, 1)
        left_layout.addWidget(self.tool_panel)
        left_layout.addWidget(self.backend_panel)
        scroll = QScrollArea()
        scroll.setWidget(left)
        scroll.setWidgetResizable(True)
        # Never narrower than its contents: a small window squeezes the trace, which wraps,
        # instead of clipping the editor behind a horizontal scrollbar.
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(
            left.minimumSizeHint().width()
            + scroll.verticalScrollBar().sizeHint().width()
            + 2 * scroll.frameWidth()
        )

        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Run the scenario (Ctrl+Enter)")
        self.run_button.setShortcut(QKeySequence("Ctrl+Return"))
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop the run (Esc)")
        self.stop_button.setShortcut(QKeySequence(Qt.Key.Key_Escape))
        self.stop_button.setEnabled(False)
        self.step_label = QLabel("Ready")
        self.progress = QProgressBar()
        self.progress.setTextVisible(False)
        self.progress.setMaximumWidth(220)
        controls = QHBoxLayout()
        controls.addWidget(self.run_button)
        controls.addWidget(self.stop_button)
        controls.addWidget(self.step_label)
        controls.addWidget(self.progress)
        controls.addStretch(1)

        self.answer_label = QLabel()
        self.answer_label.setObjectName("finalAnswer")
        self.answer_label.setWordWrap(True)
        self.answer_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = QFont(self.answer_label.font())
        font.setPointSizeF(font.pointSizeF() * 1.5)
        font.setBold(True)
        self.answer_label.setFont(font)
        self.answer_status = QLabel()
        self.answer_status.setWordWrap(True)
        self.answer_label.hide()
        self.answer_status.hide()

        single = QWidget()
        single_layout = QVBoxLayout(single)
        single_layout.addLayout(controls)
        single_layout.addWidget(self.answer_label)
        single_layout.addWidget(self.answer_status)
        single_layout.addWidget(self.trace, 1)
        self.compare = CompareView(
            self.keys, self.current_scenario, self.tools_for, self._approve_in_lane
        )
        self.compare.prices = _load_prices(self.settings)
        self.compare.expected = lambda: self.scenario.expected
        self.compare.pricesChanged.connect(self._on_compare_prices_changed)
        self.compare.runningChanged.connect(self._on_compare_running_changed)
        self.tabs = QTabWidget()
        self.tabs.addTab(single, "Run")
        self.tabs.addTab(self.compare, "Compare models")

        self.splitter = QSplitter()
        self.splitter.addWidget(scroll)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([380, 820])  # at 1,440 px four compare lanes fit beside it
        self.setCentralWidget(self.splitter)
        self.metrics_label = QLabel()
        self.statusBar().addPermanentWidget(self.metrics_label)
        self.run_button.clicked.connect(self.start_run)
        self.stop_button.clicked.connect(self.stop_run)

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self._add_action(file_menu, "&New", QKeySequence.StandardKey.New, self.new_scenario)
        self._add_action(file_menu, "&Open…", QKeySequence.StandardKey.Open, self._open_dialog)
        examples = file_menu.addMenu("Open &example")
        for path in builtin_scenarios():
            action = examples.addAction(path.stem.replace("_", " ").capitalize())
            action.triggered.connect(lambda _=False, p=path: self.ask_to_open(p))
        self.recent_menu = file_menu.addMenu("&Recent")
        file_menu.addSeparator()
        self._add_action(file_menu, "&Save", QKeySequence.StandardKey.Save, self.save)
        self._add_action(file_menu, "Save &as…", QKeySequence.StandardKey.SaveAs, self.save_as)
        file_menu.addSeparator()
        self._add_action(file_menu, "&Quit", QKeySequence.StandardKey.Quit, self.close)
        edit_menu = self.menuBar().addMenu("&Edit")
        self._add_action(edit_menu, "&Copy trace", QKeySequence("Ctrl+Shift+C"), self.copy_trace)

    def _add_action(
        self,
        menu: QMenu,
        text: str,
        keys: QKeySequence | QKeySequence.StandardKey,
        slot: Callable[[], object],
    ) -> QAction:
        action = QAction(text, self)
        action.setShortcut(keys)
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    # ---- scenario <-> widgets -------------------------------------------------------------

    @property
    def scenario(self) -> Scenario:
        """The scenario as last opened or saved: the baseline for "unsaved edits"."""
        return self.document.saved

    @property
    def path(self) -> Path | None:
        return self.document.path

    def set_scenario(self, scenario: Scenario, path: Path | None = None) -> None:
        self.show_document(ScenarioDocument(scenario, path))

    def show_document(self, document: ScenarioDocument, edits: Scenario | None = None) -> None:
        """Show a document, and optionally unsaved edits to it (kept from last time)."""
        self.document = document
        self._fill_widgets(document.saved)
        # The baseline for "unsaved edits" is what the widgets show now (defaults filled in).
        document.saved = self.current_scenario()
        if edits is not None:
            self._fill_widgets(edits)
        self._update_title()
        self._on_scenario_edited()

    def _fill_widgets(self, scenario: Scenario) -> None:
        self.prompt_panel.set_values(scenario.system_prompt or DEFAULT_TEMPLATE, scenario.question)
        self.tool_panel.set_values(
            scenario.enabled_tools, scenario.documents, scenario.max_steps, scenario.dialect
        )
        self.backend_panel.set_sampling(scenario.model.temperature, scenario.model.max_tokens)
        self.compare.set_lanes(scenario.lanes)

    def _update_title(self) -> None:
        self.setWindowTitle(f"ReAct Sandbox — {self.document.title}")

    @property
    def modified(self) -> bool:
        return self.document.is_modified(self.current_scenario())

    def replace_scenario(
        self, then: Callable[[], object], question: str = "", keep_label: str = ""
    ) -> None:
        """Run ``then`` (New, Open…) once unsaved edits are saved or knowingly discarded."""
        if not self.modified:
            then()
            return
        buttons = QMessageBox.StandardButton
        dialog = self.confirm_dialog = QMessageBox(
            QMessageBox.Icon.Question,
            "Unsaved edits",
            question or f"Save the edits to “{self.document.title}” first?",
            buttons.Save | buttons.Discard | buttons.Cancel,
            self,
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

    def current_scenario(self) -> Scenario:
        """The scenario as the widgets show it now."""
        template = self.prompt_panel.template()
        choice = self.backend_panel.choice()
        return self.scenario.with_changes(
            system_prompt=None if template == DEFAULT_TEMPLATE else template,
            question=self.prompt_panel.question(),
            enabled_tools=self.tool_panel.enabled_tools(),
            documents=self.tool_panel.documents(),
            max_steps=self.tool_panel.max_steps(),
            dialect=self.tool_panel.dialect(),
            model=ModelParams(
                choice.temperature,
                choice.max_tokens,
                self.scenario.model.top_p,
                self.scenario.model.seed,
            ),
            lanes=self.compare.lane_configs(),
        )

    def tools_for(self, scenario: Scenario) -> list[Tool]:
        return [*builtin_tools(scenario.enabled_tools, scenario.documents), *self.extra_tools]

    def _on_scenario_edited(self) -> None:
        scenario = self.current_scenario()
        try:
            text = render_prompt(
                scenario.system_prompt or DEFAULT_TEMPLATE,
                self.tools_for(scenario),
                scenario.prompt_dialect,
            )
            self.prompt_panel.show_rendered(text)
        except PromptError as err:
            self.prompt_panel.show_rendered("", str(err))

    # ---- running ------------------------------------------------------------------------

    def start_run(self) -> None:
        if self.controller.running:
            return
        scenario = self.current_scenario()
        choice = self.backend_panel.choice()
        make_run = choice.run_factory(scenario, self.tools_for(scenario), self._approve)
        self.trace.clear_trace()
        self.answer_label.hide()
        self.answer_status.hide()
        self.progress.setRange(0, scenario.max_steps)
        self.progress.setValue(0)
        self._step = 0
        self._last_status = ""
        self._waiting_since = None
        self._waiting_for = host_of(choice.base_url) if choice.preset else "the offline model"
        self._step_metrics.clear()
        self._run_started = time.perf_counter()
        self.controller.start(make_run)

    def stop_run(self) -> None:
        self.controller.stop()

    async def _approve(self, tool: str, input: str) -> bool:
        return await ask_approval(self, tool, input)

    async def _approve_in_lane(self, tool: str, input: str, lane: str) -> bool:
        return await ask_approval(self, tool, input, lane)

    def _on_compare_prices_changed(self) -> None:
        prices = {
            model: [p.input_per_million, p.output_per_million]
            for model, p in self.compare.prices.items()
        }
        self.settings.setValue("prices", json.dumps(prices))

    def _on_controller_engine_events(self, events: list[Event]) -> None:
        for event in events:
            self._show_event(event)

    def _show_event(self, event: Event) -> None:
        self.trace.show_event(event)
        # From a step's start to its first text the request is waiting on the model.
        self._waiting_since = time.perf_counter() if isinstance(event, StepStarted) else None
        if isinstance(event, StepStarted):
            self._step = event.step
            self.step_label.setText(f"Step {event.step} of {self.progress.maximum()}")
            self.progress.setValue(event.step)
        elif isinstance(event, StepFinished):
            self._step_metrics.append(event.metrics)
            elapsed = time.perf_counter() - self._run_started
            self.metrics_label.setText(RunMetrics(tuple(self._step_metrics), elapsed).summary())
        elif isinstance(event, RunFinished):
            self._show_result(event)

    def _show_result(self, event: RunFinished) -> None:
        self.trace.flush_all()
        self.answer_label.setText(event.answer or "No answer")
        self.answer_label.setEnabled(event.answer is not None)
        self._last_status = event.status
        reason = f": {event.reason}" if event.reason and event.status != "answered" else ""
        where = how_far(event.status, self._step)
        self.answer_status.setText(f"{_STATUS_TEXT[event.status]} {where}{reason}")
        self.answer_label.show()
        self.answer_status.show()
        self.metrics_label.setText(event.metrics.summary())

    def _on_any_running_changed(self) -> None:
        self._update_enabled()
        if not self._anything_running():
            # A second later: the last frames of the run are drawn, and the user is reading.
            QTimer.singleShot(gc_policy.IDLE_DELAY_MS, self, self._collect_if_idle)

    def _anything_running(self) -> bool:
        return self.controller.running or self.compare.running

    def _collect_if_idle(self) -> None:
        if not self._anything_running():
            gc_policy.collect_while_idle()

    def _update_enabled(self) -> None:
        """While anything runs, the controls that would change the run are locked."""
        single = self.controller.running
        running = self._anything_running()
        for widget in (self.prompt_panel, self.tool_panel, self.backend_panel, self.run_button):
            widget.setEnabled(not running)
        self.compare.run_button.setEnabled(not running)
        self.stop_button.setEnabled(single)
        self.menuBar().setEnabled(not running)

    def _on_compare_running_changed(self, _running: bool) -> None:
        self._on_any_running_changed()

    def _on_controller_running_changed(self, running: bool) -> None:
        self._on_any_running_changed()
        if running:
            self.step_label.setText("Starting…")
            self._elapsed_timer.start()
        else:
            self._elapsed_timer.stop()
            self._on_elapsed_timer_timeout()
            of = f"{self._step} of {self.progress.maximum()}"
            if self._last_status in ("stopped", "failed"):
                self.step_label.setText(f"{self._last_status.capitalize()} at step {of}")
            else:
                self.step_label.setText(f"Done after {of} steps")

    def _on_elapsed_timer_timeout(self) -> None:
        now = time.perf_counter()
        self.statusBar().showMessage(f"Elapsed {now - self._run_started:.1f} s")
        if self._waiting_since is not None and now - self._waiting_since >= WAIT_SHOWN_AFTER_S:
            # A server that accepted the request and says nothing: show that we are waiting.
            self.step_label.setText(
                f"Step {self._step} of {self.progress.maximum()} · waiting for "
                f"{self._waiting_for}… {now - self._waiting_since:.0f} s"
            )

    # ---- files ---------------------------------------------------------------------------

    def new_scenario(self) -> None:
        self.replace_scenario(lambda: self.set_scenario(Scenario(title="Untitled")))

    def open_scenario(self, path: str | Path) -> bool:
        """Load a scenario; a bad file leaves everything as it was and says why."""
        try:
            document = ScenarioDocument.open(path)
        except ScenarioError as err:
            self.show_error("Cannot open the scenario", str(err))
            return False
        self.show_document(document)
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

    def save(self) -> bool:
        if self.document.needs_name:
            return self.save_as()
        return self._save_to(None)

    def save_as(self) -> bool:
        name, _ = QFileDialog.getSaveFileName(
            self, "Save scenario", str(self.path or "scenario.json"), "Scenarios (*.json)"
        )
        return bool(name) and self._save_to(Path(name))

    def _save_to(self, path: Path | None) -> bool:
        """Save to ``path``, or to the document's own file; a failure says why in one line."""
        try:
            self.document.save(self.current_scenario(), path)
        except SaveRefused as err:
            self.show_error("Cannot save the scenario", str(err))
            return False
        except OSError as err:
            name = (path or self.path or Path("scenario")).name
            self.show_error("Cannot save the scenario", f"{name}: {err.strerror or err}.")
            return False
        assert self.document.path is not None
        self._remember(self.document.path)
        self._update_title()
        return True

    def _open_dialog(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Open scenario", "", "Scenarios (*.json)")
        if name:
            self.ask_to_open(name)

    def show_error(self, title: str, message: str) -> None:
        """A window-modal message that does not block the event loop (runs keep streaming)."""
        self.error_dialog = QMessageBox(QMessageBox.Icon.Warning, title, message, parent=self)
        self.error_dialog.open()

    def copy_trace(self) -> None:
        QApplication.clipboard().setText(self.trace.plain_text())

    # ---- settings ------------------------------------------------------------------------

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
            action.setToolTip(name)
            action.triggered.connect(lambda _=False, n=name: self.ask_to_open(n))
        self.recent_menu.setEnabled(bool(self._recent_files()))

    def _restore_settings(self) -> None:
        geometry = self.settings.value("geometry")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        else:
            self.resize(1200, 800)
        self._fill_recent_menu()
        self._restore_document()
        self.backend_panel.select(
            str(self.settings.value("backend/preset", SCRIPTED)),
            str(self.settings.value("backend/base_url", "")),
            str(self.settings.value("backend/model", "")),
        )

    def _restore_document(self) -> None:
        """Edits kept at the last close, as what they were; else the last file; else the demo."""
        text = self.settings.value(KEPT_EDITS_KEY)
        kept = KeptEdits.from_json(text) if isinstance(text, str) else None
        if kept is not None:
            document, notice = ScenarioDocument.restore(kept)
            self.show_document(document, kept.edited)
            if notice:
                self.statusBar().showMessage(notice)
            return
        last = self.settings.value("last_scenario")
        if isinstance(last, str) and Path(last).is_file():
            try:
                self.show_document(ScenarioDocument.open(last))
                return
            except ScenarioError:
                pass  # changed or damaged since: start on the demo instead
        self.set_scenario(default_scenario())

    def save_settings(self) -> None:
        """Window state, backend choice and unsaved edits (never the API key)."""
        kept = self.document.keep(self.current_scenario())
        if kept is not None:
            # Closing never loses edits: they come back next time, like an editor's hot exit.
            self.settings.setValue(KEPT_EDITS_KEY, kept.to_json())
        else:
            self.settings.remove(KEPT_EDITS_KEY)
        choice = self.backend_panel.choice()
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("backend/preset", self.backend_panel.preset_combo.currentText())
        self.settings.setValue("backend/base_url", choice.base_url)
        self.settings.setValue("backend/model", choice.model)
        self.settings.sync()

    async def shutdown(self) -> None:
        """Stop every run and wait until their streams are closed."""
        controllers = [self.controller, *(lane.controller for lane in self.compare.lanes)]
        for controller in controllers:
            controller.stop()
        for controller in controllers:
            await controller.wait()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_settings()
        self.controller.stop()  # the app awaits shutdown() before the loop ends
        self.compare.stop_all()
        super().closeEvent(event)


def _load_prices(settings: QSettings) -> dict[str, Price]:
    """The saved price table; anything malformed is dropped, never guessed."""
    try:
        data = json.loads(str(settings.value("prices", "{}")))
        return {str(m): Price(float(p[0]), float(p[1])) for m, p in dict(data).items()}
    except (ValueError, TypeError, IndexError, KeyError):
        return {}
