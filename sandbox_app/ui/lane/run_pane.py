"""One run on screen: its controls, progress, answer, live trace and the runs it keeps.

The Run tab and every compare lane are this same widget, so a run looks and behaves the same
wherever it is: the step line (with the seconds waited while a server is silent), the answer
and how the run ended, the trace, Stop, and a picker for any kept run's trace (repeats).
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QProgressBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.application.run_builder import RunSpec, build_run
from sandbox_app.core.running.events import (
    Event,
    FabricationCut,
    FormatError,
    LoopNoticed,
    Observation,
    RepetitionCut,
    RunFinished,
    StepFinished,
    StepStarted,
)
from sandbox_app.core.running.fork import ForkOrigin, ForkPoint, origin_of, turn_text
from sandbox_app.core.running.metrics import RunMetrics, StepMetrics
from sandbox_app.core.running.recording import NoBackend, RecordedLane, RecordedRun, Timed
from sandbox_app.core.running.records import RunHistory, RunRecord, RunSettings
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.ui.common.plain import plain_label
from sandbox_app.ui.lane import step_menu
from sandbox_app.ui.lane.answer_header import AnswerHeader
from sandbox_app.ui.lane.inspector import RequestInspector
from sandbox_app.ui.lane.ran_prompt import RanPrompt
from sandbox_app.ui.lane.run_controller import RunController, RunFactory
from sandbox_app.ui.lane.stepper import Stepper
from sandbox_app.ui.trace.highlighter import Role
from sandbox_app.ui.trace.trace_stack import LONG_EVENTS, TraceStack
from sandbox_app.ui.trace.trace_view import TraceView

WAIT_SHOWN_AFTER_S = 1.0  # a model usually starts within this; past it, say we are waiting


class RunPane(QWidget):
    """Runs started here stream into the trace; each is kept as a record (``history``).

    Signals:
        runningChanged(bool): a run (or a series of repeats) started or ended.
        metricsChanged(str): the one-line metrics of the run on screen ("" before its first
            step): live while it runs, its own when the picker shows another.
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
        self.traces = TraceStack(self.trace, self.controller.runningChanged)  # live, or rows
        self.stop_button = QToolButton()  # compact: four lanes of these fit beside the editor
        self.stop_button.setText("Stop")
        self.stop_button.setEnabled(False)
        self.step_label = plain_label("Ready")
        self.step_label.setMinimumWidth(24)  # long "waiting for host…" lines must not widen it
        self.progress = QProgressBar(textVisible=False, maximumWidth=160)  # type: ignore[call-arg]
        self.progress.setMinimumWidth(16)  # a sliver in a narrow lane; the step line says how far
        self.run_picker = QComboBox()
        self.run_picker.setToolTip("Show the trace of any run kept here")
        self.run_picker.hide()
        self.header = AnswerHeader(answer_scale)
        self.answer_label, self.answer_status = self.header.answer, self.header.status
        self.controls_bar = QWidget()
        # Owners' buttons (Run, Settings) lead this row: one widget, a compact lane hides it.
        self.controls = QHBoxLayout(self.controls_bar)
        self.controls.setContentsMargins(0, 0, 0, 0)
        for widget in (self.stop_button, self.run_picker, self.step_label, self.progress):
            self.controls.addWidget(widget)
        self.controls.setStretch(self.controls.indexOf(self.step_label), 1)
        self.ran_prompt = RanPrompt(self.controls, self.run_picker, self.shown_record)
        self.runningChanged.connect(lambda _running: self.ran_prompt.refresh())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.controls_bar)
        layout.addWidget(self.answer_label)
        layout.addWidget(self.answer_status)
        layout.addWidget(self.traces, 1)

        self._settings = RunSettings()
        self._scenario: Scenario | None = None
        self._replaying = False
        self._fork_of: ForkOrigin | None = None  # where the run being started comes from
        self.metrics_text = ""  # what metricsChanged said last: the run on screen's figures
        self._counts = [0, 0, 0, 0]  # live: tool calls, format errors, cuts, loops
        self._record: RunRecord | None = None  # the run streaming now
        self._max_steps = self._step = 0
        self._started = 0.0
        self._waiting_since: float | None = None
        self._waiting_for = ""
        self._step_metrics: list[StepMetrics] = []
        self._ticker = QTimer(self, interval=100, timeout=self._on_ticker_timeout)  # type: ignore[call-arg]
        self.stop_button.clicked.connect(self.controller.stop)
        self.stepper = Stepper(self.trace, self.controller, self.stepRequested.emit)
        self.controls.insertWidget(self.controls.indexOf(self.stop_button), self.stepper.button)
        layout.insertWidget(1, self.stepper.panel)
        self.inspector: RequestInspector | None = None
        self.add_case: step_menu.AddCase | None = None  # the owner's Add to test set…
        self.traces.menu_requested = lambda pos: step_menu.popup(self, pos)
        self.run_picker.activated.connect(self.show_run)
        self.controller.repeatStarted.connect(self._on_controller_repeat_started)
        self.controller.engineEvents.connect(self._on_controller_engine_events)
        self.controller.runningChanged.connect(self._on_controller_running_changed)

    # ---- running ------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.controller.running

    def run(self, spec: RunSpec, waiting_for: str, repeats: int = 1) -> None:
        """Run ``spec`` ``repeats`` times (application/run_builder.py makes each run)."""
        settings, scenario, self.traces.long = spec.record_settings(), spec.scenario, False
        self.start(lambda: build_run(spec), settings, waiting_for, repeats, scenario, spec.fork)

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
        run, shown = self.run_picker.currentText().split(" (")[0], self.shown_record()
        self._fork_of = origin_of(run, fork, shown.events if shown else []) if fork else None
        if fork is None:  # a fork keeps the run it came from, to show again
            self.history.clear()
            self.run_picker.clear()
        # At once, not when the first repeat starts: the last run's trace and answer must
        # not stand under "Starting…" as if they were this run's.
        self.traces.clear_trace()
        self.header.hide()
        self._say_metrics("")  # the last run's figures are not this one's
        self.controller.start(make_run, repeats)

    def reset(self) -> None:
        """Forget every kept run (another scenario was opened): nothing of theirs stays."""
        if self.running:
            return
        self.history.clear()
        self.run_picker.clear()
        self.run_picker.hide()
        self.traces.clear_trace()
        self.header.hide()
        self.step_label.setText("Ready")
        self.progress.setValue(0)
        self._say_metrics("")

    def show_record(self, record: RunRecord, title: str) -> bool:
        """Keep a run made elsewhere (a test-set cell's) and show it as any kept run, so the
        header, the trace and Inspect / Fork / Copy step all act on it."""
        if self.running:
            return False
        self._keep(record, title)
        self.show_run(len(self.history) - 1)
        return True

    def _keep(self, record: RunRecord, title: str) -> None:
        if self.history.full:  # the oldest record goes: its picker entry with it
            self.run_picker.removeItem(0)
        self.history.add(record)
        self.run_picker.addItem(title)
        self.run_picker.setCurrentIndex(self.run_picker.count() - 1)
        self.run_picker.setVisible(self.run_picker.count() > 1)

    def stop(self) -> None:
        self.controller.stop()

    def replay(
        self, lane: RecordedLane, scenario: Scenario, speed: float, more: Iterable[Timed] = ()
    ) -> None:
        """Play a recorded run here, as if it ran: no network, no model (``more``: its events
        still being read, an opened trace's: a long trace)."""
        self.traces.long = more != () or len(lane.events) > LONG_EVENTS
        play = RecordedRun(lane, speed, more)
        self.start(lambda: (play, NoBackend()), lane.settings, "the recording", scenario=scenario)
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
        self.run_picker.setCurrentIndex(index)
        self.traces.long = len(record.events) > LONG_EVENTS
        self.traces.clear_trace()
        self.header.hide()
        for event in record.events:
            self._draw(event, record)
        self.traces.flush_all()
        if record.finished is not None:
            self._show_outcome(record.finished, record.steps_started(), record)
            self._say_metrics(record.finished.metrics.summary())
        else:
            self._say_metrics("")  # still running: its figures come with its next step

    def shown_record(self) -> RunRecord | None:
        index = self.run_picker.currentIndex()
        return self.history[index] if 0 <= index < len(self.history) else self.history.latest

    def step_at(self, block_number: int) -> int:
        """The step whose lines hold block ``block_number`` (0 before the first step)."""
        return self.traces.step_of_block(block_number)

    def inspect(self, step: int) -> RequestInspector | None:
        return step_menu.inspect(self, step)

    def fork(self, step: int, rerun: bool = False) -> bool:
        """Ask the owner to run on from step ``step`` of the run on screen, or (``rerun``)
        to ask step ``step`` again from the same history. False when that is not possible
        (the run never got past it, or a run is going)."""
        point = step_menu.fork_at(self, step, rerun)
        if point is not None:
            self.forkRequested.emit(point)
        return point is not None

    def _showing_latest(self) -> bool:
        return self.run_picker.currentIndex() == self.run_picker.count() - 1

    # ---- events ---------------------------------------------------------------------------

    def _on_controller_repeat_started(self, repeat: int) -> None:
        fork_of = self._fork_of
        number = self.run_picker.count() + 1 if fork_of else repeat + 1
        self._record = RunRecord(self._settings)
        self._record.scenario, self._record.replayed = self._scenario, self._replaying
        self._record.fork = fork_of
        self._keep(self._record, f"Run {number}" + (f" ({fork_of.label()})" if fork_of else ""))
        self.traces.clear_trace()
        self.header.hide()
        self._step = 0
        self._step_metrics.clear()
        self._counts = [0, 0, 0, 0]
        self._say_metrics("")
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
                self._draw(event, self._record)
            self._follow(event)

    def _draw(self, event: Event, record: RunRecord) -> None:
        """One event in the trace; a fork's own steps start under a line saying so."""
        origin = record.fork
        if isinstance(event, StepStarted) and origin and event.step == origin.first_new_step:
            self.trace.append_line(Role.NOTICE, origin.separator())
        self.traces.show_event(event)

    def _follow(self, event: Event) -> None:
        # From a step's start to its first text the request is waiting on the model.
        self._waiting_since = time.perf_counter() if isinstance(event, StepStarted) else None
        if isinstance(event, StepStarted):  # an opened trace may go past its scenario's limit
            self._step, self._max_steps = event.step, max(self._max_steps, event.step)
            if not self.traces.long or event.step % 64 == 0:  # a long one: every 64 steps
                self.step_label.setText(f"Step {event.step} of {self._max_steps}")
                self.progress.setUpdatesEnabled(False)  # else setValue repaints at once: 8 ms
                self.progress.setRange(0, self._max_steps)
                self.progress.setValue(event.step)
                self.progress.setUpdatesEnabled(True)  # drawn with the rest of the frame
        else:  # counted as they come, as the engine counts them for its final figures
            kinds = (Observation, FormatError, FabricationCut, LoopNoticed | RepetitionCut)
            for i, kind in enumerate(kinds):
                self._counts[i] += isinstance(event, kind)
        if isinstance(event, StepFinished):
            self._step_metrics.append(event.metrics)
            # Not while a long trace pours in (every step summed at each step: quadratic).
            if self._showing_latest() and not self.traces.long:  # else its figures stay
                elapsed = time.perf_counter() - self._started
                live = RunMetrics(tuple(self._step_metrics), elapsed, *self._counts)
                self._say_metrics(live.summary())
        elif isinstance(event, RunFinished):
            if self._showing_latest():
                self.traces.flush_all()
                assert self._record is not None
                self._show_outcome(event, self._step, self._record)
                self._say_metrics(event.metrics.summary())
            self.runFinished.emit(event)

    def _say_metrics(self, text: str) -> None:
        self.metrics_text = text
        self.metricsChanged.emit(text)

    def _show_outcome(self, event: RunFinished, steps: int, record: RunRecord) -> None:
        origin, scenario = record.fork, record.scenario
        rerun = (origin, turn_text(record.events, origin.step)) if origin and origin.rerun else None
        self.header.show(event, steps, scenario.expected if scenario else None, rerun)
        most = record.settings.max_steps or (scenario.max_steps if scenario else 0) or steps
        of = f"{steps} of {max(most, steps)}"
        if rerun is not None and event.status == "stopped":
            self.step_label.setText(f"Reran step {steps}")
        elif event.status in ("stopped", "failed", "loop"):  # "Loop at step 3 of 8"
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
