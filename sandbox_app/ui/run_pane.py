"""One run on screen: its controls, progress, answer, live trace and the runs it keeps.

The Run tab and every compare lane are this same widget, so a run looks and behaves the same
wherever it is: the step line (with the seconds waited while a server is silent), the answer
and how the run ended, the trace, Stop, and a picker for any kept run's trace (repeats).
"""

from __future__ import annotations

import time
from dataclasses import replace

from PySide6.QtCore import QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QHBoxLayout,
    QMenu,
    QProgressBar,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.core.events import Event, RunFinished, StepFinished, StepStarted
from sandbox_app.core.fork import ForkPoint, exchanges_of, fork_point
from sandbox_app.core.metrics import RunMetrics, StepMetrics, how_far
from sandbox_app.core.recording import NoBackend, RecordedLane, RecordedRun
from sandbox_app.core.records import RunHistory, RunRecord, RunSettings
from sandbox_app.core.run_export import step_text
from sandbox_app.core.scenario import Scenario
from sandbox_app.ui.inspector import RequestInspector
from sandbox_app.ui.plain import plain_label
from sandbox_app.ui.presenter import FONT_FACTOR
from sandbox_app.ui.run_controller import RunController, RunFactory
from sandbox_app.ui.stepper import Stepper
from sandbox_app.ui.trace_view import TraceView

WAIT_SHOWN_AFTER_S = 1.0  # a model usually starts within this; past it, say we are waiting
OUTCOMES = {
    "answered": "✔ Answered",
    "max_steps": "■ Max steps reached",
    "stopped": "■ Stopped",
    "failed": "✖ Failed",
}


class RunPane(QWidget):
    """Runs started here stream into the trace; each is kept as a record (``history``).

    Signals:
        runningChanged(bool): a run (or a series of repeats) started or ended.
        metricsChanged(str): the live one-line metrics of the run on screen.
        runFinished(object): a run ended (its RunFinished); repeats give one each.
        forkRequested(object): Fork or Rerun on a step: a ForkPoint.
        stepRequested(): Step was pressed with no run going.
    """

    runningChanged = Signal(bool)
    metricsChanged = Signal(str)
    runFinished = Signal(object)
    forkRequested = Signal(object)  # a ForkPoint: the owner starts it with its settings
    stepRequested = Signal()  # Step with no run going: the owner starts one, step by step

    def __init__(self, answer_scale: float = 1.5, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = RunController(self)
        self.history = RunHistory()
        self.trace = TraceView()
        self.stop_button = QToolButton()  # compact: four lanes of these fit beside the editor
        self.stop_button.setText("Stop")
        self.stop_button.setEnabled(False)
        self.step_label = plain_label("Ready")
        self.step_label.setMinimumWidth(24)  # long "waiting for host…" lines must not widen it
        self.progress = QProgressBar()
        self.progress.setTextVisible(False)
        self.progress.setMaximumWidth(160)
        self.progress.setMinimumWidth(16)  # a sliver in a narrow lane; the step line says how far
        self.run_picker = QComboBox()
        self.run_picker.setToolTip("Show the trace of any run kept here")
        self.run_picker.hide()
        self.answer_label = plain_label()
        self.answer_label.setObjectName("finalAnswer")
        self.answer_label.setWordWrap(True)
        self.answer_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = QFont(self.answer_label.font())
        font.setPointSizeF(font.pointSizeF() * answer_scale)
        font.setBold(True)
        self.answer_label.setFont(font)
        self.answer_label.setProperty(FONT_FACTOR, answer_scale)  # for zoom (presenter.py)
        # Never squeezed below its text (presenter mode's large fonts): the trace gives way.
        self.answer_label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.answer_status = plain_label()
        self.answer_status.setWordWrap(True)
        self.answer_label.hide()
        self.answer_status.hide()
        # Owners put their own buttons (Run, a lane's Settings) at the front of this row.
        self.controls = QHBoxLayout()
        for widget in (self.stop_button, self.run_picker, self.step_label, self.progress):
            self.controls.addWidget(widget)
        self.controls.setStretch(self.controls.indexOf(self.step_label), 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self.controls)
        layout.addWidget(self.answer_label)
        layout.addWidget(self.answer_status)
        layout.addWidget(self.trace, 1)

        self._settings = RunSettings()
        self._scenario: Scenario | None = None
        self._replaying = False
        self._fork_of: tuple[str, int] | None = None  # (the run forked, at which step)
        self._record: RunRecord | None = None  # the run streaming now
        self._max_steps = 0
        self._step = 0
        self._started = 0.0
        self._waiting_since: float | None = None
        self._waiting_for = ""
        self._step_metrics: list[StepMetrics] = []
        self._ticker = QTimer(self)
        self._ticker.setInterval(100)
        self._ticker.timeout.connect(self._on_ticker_timeout)
        self.stop_button.clicked.connect(self.controller.stop)
        self.stepper = Stepper(self)  # step-through: the Step button and the pause panel
        self.controls.insertWidget(self.controls.indexOf(self.stop_button), self.stepper.button)
        layout.insertWidget(1, self.stepper.panel)
        self.inspector: RequestInspector | None = None
        self.trace.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.trace.customContextMenuRequested.connect(self._on_trace_context_menu)
        self.run_picker.activated.connect(self.show_run)
        self.controller.repeatStarted.connect(self._on_controller_repeat_started)
        self.controller.engineEvents.connect(self._on_controller_engine_events)
        self.controller.runningChanged.connect(self._on_controller_running_changed)

    # ---- running ------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.controller.running

    def start(
        self,
        make_run: RunFactory,
        settings: RunSettings,
        waiting_for: str,
        repeats: int = 1,
        scenario: Scenario | None = None,
        fork: ForkPoint | None = None,
    ) -> None:
        """Run ``repeats`` times; ``waiting_for`` names the server in the waiting line;
        ``scenario``, what the run is made from, is kept with its record (for recordings)."""
        self._settings, self._waiting_for = settings, waiting_for
        self._scenario = scenario
        self._replaying = False
        self._max_steps = settings.max_steps
        self._fork_of = (self.run_picker.currentText(), fork.step) if fork else None
        if fork is None:  # a fork keeps the run it came from, to show again
            self.history.clear()
            self.run_picker.clear()
        # At once, not when the first repeat starts: the last run's trace and answer must
        # not stand under "Starting…" as if they were this run's.
        self.trace.clear_trace()
        self.answer_label.hide()
        self.answer_status.hide()
        self.controller.start(make_run, repeats)

    def stop(self) -> None:
        self.controller.stop()

    def replay(self, lane: RecordedLane, scenario: Scenario, speed: float) -> None:
        """Play a recorded run here, as if it ran: no network, no model."""
        self.start(
            lambda: (RecordedRun(lane, speed), NoBackend()),
            lane.settings,
            "the recording",
            scenario=scenario,
        )
        self._replaying = True

    def recorded(self) -> RecordedLane | None:
        """The run on screen as a recording's lane (None before any run)."""
        record = self.shown_record()
        if record is None or not record.timeline:
            return None
        return RecordedLane(record.settings, tuple(record.timeline))

    def show_run(self, index: int) -> None:
        """Redraw kept run ``index`` from its record."""
        if not 0 <= index < len(self.history):
            return
        record = self.history[index]
        self.trace.clear_trace()
        for event in record.events:
            self.trace.show_event(event)
        self.trace.flush_all()
        if record.finished is not None:
            self._show_outcome(record.finished, _steps_started(record))

    def shown_record(self) -> RunRecord | None:
        index = self.run_picker.currentIndex()
        return self.history[index] if 0 <= index < len(self.history) else self.history.latest

    def step_at(self, block_number: int) -> int:
        """The step whose lines hold block ``block_number`` (0 before the first step)."""
        step = 0
        while (block := self.trace.step_block(step + 1)) is not None and block <= block_number:
            step += 1
        return step

    def inspect(self, step: int) -> RequestInspector | None:
        record = self.shown_record()
        exchanges = exchanges_of(record.events, step) if record else []
        if record is None or not exchanges:
            return None
        self.inspector = RequestInspector(
            step, exchanges, record.settings.backend, record.settings.base_url, self
        )
        self.inspector.open()
        return self.inspector

    def fork(self, step: int, rerun: bool = False) -> bool:
        """Ask the owner to run on from step ``step`` of the run on screen, or (``rerun``)
        to ask step ``step`` again from the same history. False when that is not possible
        (the run never got past it, or a run is going)."""
        record = self.shown_record()
        at = step - 1 if rerun else step
        point = fork_point(record.events, at) if record and not self.running else None
        if point is not None:
            self.forkRequested.emit(replace(point, only_step=step) if rerun else point)
        return point is not None

    def _on_trace_context_menu(self, pos: QPoint) -> None:
        step = self.step_at(self.trace.cursorForPosition(pos).block().blockNumber())
        record = self.shown_record()
        if step == 0 or record is None:
            return
        menu = QMenu(self.trace)
        inspect = menu.addAction(f"Inspect step {step}'s request…")
        inspect.setEnabled(bool(exchanges_of(record.events, step)))
        inspect.triggered.connect(lambda: self.inspect(step))
        copy = menu.addAction(f"Copy step {step} as text")
        copy.triggered.connect(lambda: QApplication.clipboard().setText(step_text(record, step)))
        for text, rerun in ((f"Fork from step {step}", False), (f"Rerun step {step}", True)):
            action = menu.addAction(text)
            at = step - 1 if rerun else step
            action.setEnabled(not self.running and fork_point(record.events, at) is not None)
            action.triggered.connect(lambda _=False, r=rerun: self.fork(step, r))
        menu.popup(self.trace.viewport().mapToGlobal(pos))

    def _showing_latest(self) -> bool:
        return self.run_picker.currentIndex() == self.run_picker.count() - 1

    # ---- events ---------------------------------------------------------------------------

    def _on_controller_repeat_started(self, repeat: int) -> None:
        self._record = self.history.start(self._settings)
        self._record.scenario, self._record.replayed = self._scenario, self._replaying
        fork_of = self._fork_of
        number = self.run_picker.count() + 1 if fork_of else repeat + 1
        forked = f" (fork of {fork_of[0]} at step {fork_of[1]})" if fork_of else ""
        self.run_picker.addItem(f"Run {number}{forked}")
        self.run_picker.setCurrentIndex(self.run_picker.count() - 1)
        self.run_picker.setVisible(self.run_picker.count() > 1)
        self.trace.clear_trace()
        self.answer_label.hide()
        self.answer_status.hide()
        self._step = 0
        self._step_metrics.clear()
        self._started = time.perf_counter()
        self.progress.setRange(0, self._max_steps)
        self.progress.setValue(0)
        self.step_label.setText("Starting…")

    def _on_controller_engine_events(self, events: list[Event]) -> None:
        if self._record is None:
            return
        self._record.add(events, at=time.perf_counter() - self._started)
        latest = self._showing_latest()
        for event in events:
            if latest:
                self.trace.show_event(event)
            self._follow(event)

    def _follow(self, event: Event) -> None:
        # From a step's start to its first text the request is waiting on the model.
        self._waiting_since = time.perf_counter() if isinstance(event, StepStarted) else None
        if isinstance(event, StepStarted):
            self._step = event.step
            self.step_label.setText(f"Step {event.step} of {self._max_steps}")
            self.progress.setValue(event.step)
        elif isinstance(event, StepFinished):
            self._step_metrics.append(event.metrics)
            elapsed = time.perf_counter() - self._started
            self.metricsChanged.emit(RunMetrics(tuple(self._step_metrics), elapsed).summary())
        elif isinstance(event, RunFinished):
            if self._showing_latest():
                self.trace.flush_all()
                self._show_outcome(event, self._step)
            self.metricsChanged.emit(event.metrics.summary())
            self.runFinished.emit(event)

    def _show_outcome(self, event: RunFinished, steps: int) -> None:
        self.answer_label.setText(event.answer or "No answer")
        self.answer_label.setEnabled(event.answer is not None)
        reason = f": {event.reason}" if event.reason and event.status != "answered" else ""
        self.answer_status.setText(
            f"{OUTCOMES[event.status]} {how_far(event.status, steps)}{reason}"
        )
        self.answer_label.show()
        self.answer_status.show()
        of = f"{steps} of {self._max_steps or steps}"
        if event.status in ("stopped", "failed"):
            self.step_label.setText(f"{event.status.capitalize()} at step {of}")
        else:
            self.step_label.setText(f"Done after {of} steps")

    def _on_controller_running_changed(self, running: bool) -> None:
        self.stop_button.setEnabled(running)
        if running:
            self._ticker.start()
        else:
            self._ticker.stop()
            self._waiting_since = None
        self.runningChanged.emit(running)

    def _on_ticker_timeout(self) -> None:
        now = time.perf_counter()
        if self._waiting_since is not None and now - self._waiting_since >= WAIT_SHOWN_AFTER_S:
            # A server that accepted the request and says nothing: show that we are waiting.
            self.step_label.setText(
                f"Step {self._step} of {self._max_steps} · waiting for "
                f"{self._waiting_for}… {now - self._waiting_since:.0f} s"
            )


def _steps_started(record: RunRecord) -> int:
    return max((e.step for e in record.events if isinstance(e, StepStarted)), default=0)
