"""The compare view's Test set tab: every lane × case × repeat of the scenario's test set, a
results grid (cases × lanes), a per-lane summary, Stop, Resume and Re-run failed. The runs go
through ``react-sandbox eval``'s runner (eval_runner.py); a cell's trace is the recorded run,
shown in its lane's trace view on a click (never run again). The panel keeps what the grid
and summary draw; each run's result and trace live in the history database, read back for a
tooltip, a click or an export (eval_results.py). A judge's server the file names is asked
about with the lanes' first (the key rule, key_confirmation)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import suppress

from PySide6.QtCore import Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QProgressBar,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.application.backend_choice import BackendChoice
from sandbox_app.application.eval_runner import EvalRunner, unjudged_lanes, unpinned
from sandbox_app.application.judge import judge_config
from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.backends.registry import BackendConfig
from sandbox_app.backends.transport.network_loop import background_loop, call_until_ended
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.history.history_schema import HistoryError
from sandbox_app.core.results.compare import Price
from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.results.evaluation import LaneTally, count_pending, iter_plan, pending
from sandbox_app.core.results.exports import TEST_SET_FORMATS, EvalResults
from sandbox_app.core.running.records import RunRecord
from sandbox_app.core.scenarios.judge_spec import JudgeSpec
from sandbox_app.core.scenarios.scenario import EvalCase, Scenario
from sandbox_app.core.scenarios.test_set import asked_questions
from sandbox_app.core.tools import Tool
from sandbox_app.ui.common.fitting import FoldingRow, tool_button
from sandbox_app.ui.common.frames import Phase, frame_clock
from sandbox_app.ui.common.optimizing_buttons import improve_button
from sandbox_app.ui.common.plain import plain_label
from sandbox_app.ui.compare.eval_grid_model import EvalGrid, EvalGridModel
from sandbox_app.ui.compare.eval_history import EvalHistory
from sandbox_app.ui.compare.eval_results import MadeWith, RunStore
from sandbox_app.ui.compare.eval_verdicts import ArmVerdicts
from sandbox_app.ui.compare.test_set_editor import TestSetEditor
from sandbox_app.ui.results.opening import matrix_button

SUMMARY_EVERY_S = 0.25  # at most; and at most 1 % of the loop's time (see _draw_summary)

Confirm = Callable[[Sequence[BackendConfig], str, Callable[[], None]], None]


class EvalPanel(QWidget):
    """Signals: runningChanged(bool); traceRequested(lane, RunRecord, title) on a cell click;
    editorOpened(TestSetEditor) (the window adds Generate cases… to it: ui/optimizing)."""

    runningChanged = Signal(bool)
    editorOpened = Signal(object)
    traceRequested = Signal(str, object, str)

    def __init__(
        self,
        scenario: Callable[[], Scenario],
        lanes: Callable[[], list[BackendChoice]],
        repeats: Callable[[], int],
        keys: KeyStore,
        write_cases: Callable[..., None],  # the scenario's fields the editor changed
        sources: Callable[[], list[Tool]] = list,
        parent: QWidget | None = None,
        confirm: Confirm = lambda _configs, _where, go: go(),
        prices: Callable[[], dict[str, Price]] = dict,  # by model: a "max_cost" check's
    ) -> None:
        super().__init__(parent)
        # Asks whether servers the scenario file named may get a key, then starts (keys.py).
        self._confirm, self._keys = confirm, keys
        self._scenario, self._lanes, self._repeats = scenario, lanes, repeats
        self._write_cases = write_cases
        self._sources, self._prices = sources, prices  # sources: MCP servers' tools now
        self.editor: TestSetEditor | None = None
        self._labels: list[str] = []
        self._asked: Mapping[int, str] = {}  # a past evaluation's questions, by case
        self._task: asyncio.Task[None] | None = None
        self._running, self._started, self._note = False, 0.0, ""
        self._repeat_count = 1  # of the last start: the repeats a cell's tooltip looks up
        self._failed = self._done = 0  # of the runs started last
        self._tallies: dict[str, LaneTally] = {}  # the summary's sums, added as runs end
        self._dirty: set[tuple[int, int]] = set()
        self._summary_drawn = self._summary_wait = 0.0  # when last drawn; the wait after it
        self.history = EvalHistory()  # each run stored as it ends; past evaluations shown
        self.edit_button = tool_button("Edit cases…")
        self.edit_button.setToolTip("Add, change or import (CSV, JSONL) the scenario's cases")
        self.run_button = tool_button("Run test set")
        self.stop_button = tool_button("Stop")
        self.resume_button = tool_button("Resume")
        self.rerun_button = tool_button("Re-run failed")
        self.failures_only = QCheckBox("Failures only")
        self.concurrency_spin = QSpinBox(minimum=1, maximum=64, value=4)
        self.concurrency_spin.setSuffix(" at once")
        self.concurrency_spin.setToolTip("Requests at once per server (a 429 slows only its own)")
        self.progress = QProgressBar()
        self.progress.setFormat("%v/%m runs")
        self.status = plain_label()
        self.summary = plain_label(wrap=True)  # a lane a line, wrapped on a projector
        self.verdicts = ArmVerdicts(scenario, self, self.history)  # arms compared; the judge
        # Each run's result and trace: in the history database, read back when asked for.
        self.results = RunStore(lambda: self.grid_model.runs())
        # Two bit masks a cell, drawn where on screen (eval_grid_model.py); tooltips looked up.
        fetch = self.results.cell
        self.grid_model = EvalGridModel(lambda case, lane: fetch(lane, case, self._repeat_count))
        self.grid_model.setParent(self)
        self.grid = EvalGrid(self.grid_model)
        row = FoldingRow()  # its groups go onto new lines on a narrow screen
        buttons = (self.edit_button, self.run_button, self.stop_button, self.resume_button)
        row.group(*buttons, self.rerun_button)
        options = row.group(self.concurrency_spin, self.failures_only)
        self.matrix_button = matrix_button(options, self, scenario)  # its dialog: first click
        self.improve_button = improve_button(options)  # its dialog: the window's (ui/optimizing)
        row.group(self.progress, self.status, stretch=1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(row)
        layout.addWidget(self.summary)
        layout.addWidget(self.grid, 1)
        layout.addWidget(self.verdicts.label)
        self.run_button.clicked.connect(lambda: self.start("all"))
        self.resume_button.clicked.connect(lambda: self.start("missing"))
        self.rerun_button.clicked.connect(lambda: self.start("failed"))
        self.stop_button.clicked.connect(self.stop)
        self.edit_button.clicked.connect(self.edit_cases)
        self.failures_only.toggled.connect(lambda: self._filter())
        self.grid.cellClicked.connect(self._on_grid_cell_clicked)
        self.update_buttons()

    @property
    def running(self) -> bool:
        """From the start until the panel has drawn the end (a stop included)."""
        return self._running

    def start(self, which: str) -> None:
        """Run every run ("all"), the ones not done yet ("missing") or the failed ones."""
        configs = [lane.config for lane in self._lanes()]
        if judge := judge_config(self._scenario()):
            configs.append(judge)
        self._confirm(configs, "The test set", lambda: self._start_now(which))

    def _start_now(self, which: str) -> None:
        scenario = self._scenario()
        if self.running or not scenario.test_set:
            return self.status.setText("" if scenario.test_set else "The scenario has no test set.")
        lanes = self._lanes()
        if missing := unpinned(scenario, lanes):  # every run of that lane would fail alike
            return self.status.setText(missing)
        labels = [lane.label for lane in lanes]
        if which == "all" or labels != self._labels:
            self._clear()
        self._labels, self._note = labels, unjudged_lanes(scenario, lanes)
        self._repeat_count = self._repeats()
        planned = iter_plan(labels, len(scenario.test_set), self._repeat_count)
        only_failed = which == "failed"
        done = self.grid_model.verdicts()  # a copy: the runs read it on their own thread
        todo = planned if which == "all" else pending(planned, done, only_failed)
        total = len(planned) if which == "all" else count_pending(planned, done, only_failed)
        if not total:  # nothing left: nothing starts, and the count shown ("80/80 runs") stays
            return self.status.setText("Nothing left to run: every run has its verdict.")
        gui = asyncio.get_running_loop()
        runs = self.results
        runs.writing(self.history.start(scenario, lanes, self._repeats(), fresh=which == "all"))
        runs.made_with = MadeWith(scenario, {lane.label: lane for lane in lanes}, self._keys)

        def deliver(result: EvalResult, record: RunRecord) -> None:
            # Called on the evaluation thread: stored there (the result it replaces read
            # first, for the summary), then handed to this loop, in order, without its record.
            replaced = runs.replaced(result.key) if only_failed else None
            runs.add(result, record)
            gui.call_soon_threadsafe(self._finished, result, replaced)

        runner = EvalRunner(
            scenario,
            lanes,
            deliver,
            concurrency=self.concurrency_spin.value(),
            keys=self._keys,
            with_events=False,
            sources=self._sources(),
            prices=self._prices(),
        )
        self.progress.setRange(0, total)
        self.progress.setValue(0)
        self._done = 0
        self._started = time.monotonic()
        self._draw()
        self._running = True
        # On a loop of its own: hundreds of runs a second of engine work (parsing, tools,
        # records) would otherwise share the window's loop with drawing (loop lag p99 20 ms at
        # 1,000 cases x 2 lanes, measured).
        work = call_until_ended(runner.run_all(todo), background_loop("evaluation"))
        self._task = asyncio.ensure_future(work)
        self._task.add_done_callback(lambda _: self._ended())
        self.update_buttons()
        self.runningChanged.emit(True)

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def finish(self) -> None:
        """Stop, and wait until every stream of the test set is closed (the window closing)."""
        self.stop()
        if self._task is not None:
            with suppress(asyncio.CancelledError):
                await self._task

    def exported(self) -> EvalResults:
        """The results as their exports read them (core/results/exports.py's TEST_SET_FORMATS):
        read from the database as the export goes, never all held."""
        scenario, verdicts = self._scenario(), self.verdicts.documents()
        questions = asked_questions(scenario)
        return self.results.exported(scenario.title, questions, self._labels, verdicts)

    def export_text(self, kind: str) -> str:
        """The results in one of the test set's text formats (ValueError for another)."""
        return TEST_SET_FORMATS.exporter(kind).text(self.exported())

    # ---- drawing --------------------------------------------------------------------------

    def _finished(self, result: EvalResult, replaced: EvalResult | None = None) -> None:
        key = result.key
        tally = self._tallies.setdefault(key.lane, LaneTally())
        if replaced is not None:  # a re-run: its earlier result no longer counts
            tally.remove(replaced)
        tally.add(result)
        self.verdicts.add(result, replaced)
        column = self._labels.index(key.lane)
        self.grid_model.add(key.case, column, key.repeat, result.passed)
        self._failed += not result.passed
        self._done += 1
        # Drawn once a frame, however many runs ended in it (32 at once end in bursts).
        self._dirty.add((key.case, column))
        frame_clock().schedule(self._draw_changes, Phase.DRAW)

    def _draw_changes(self) -> None:
        self.grid_model.changed(self._dirty)
        if self.failures_only.isChecked():
            self._filter(case for case, _ in self._dirty)
        self._dirty.clear()
        total = self.progress.maximum()
        self.progress.setValue(self._done)
        if not self._running:
            return  # a frame that comes after the end: _ended has said how it went
        left = (time.monotonic() - self._started) / max(self._done, 1) * (total - self._done)
        self.status.setText(f"{self._failed} failed · ~{left:.0f} s left")
        if time.perf_counter() - self._summary_drawn > self._summary_wait:  # not every frame
            self._draw_summary()

    def _ended(self) -> None:
        # Not kept: a finished task holds its event loop, which must not outlive its thread.
        self._task = None
        self.history.finish()
        self._draw_changes()
        self._running = False
        self.update_buttons()
        stopped = self.progress.value() < self.progress.maximum()
        failed = self.grid_model.failed_runs()
        self.status.setText(("stopped · " if stopped else "") + f"{failed} failed")
        self._draw_summary()
        self.runningChanged.emit(False)

    def _clear(self) -> None:
        """No run any more: a run of all of it, other lanes, edited cases, a past evaluation."""
        self.results.clear()
        self._tallies, self._asked, self._note = {}, {}, ""
        self.grid_model.reset([], [])
        self.verdicts.clear()

    def _draw(self) -> None:
        """The whole grid, its verdicts kept (a case's cell is redrawn as its runs end): the
        scenario's questions, or a past evaluation's as it asked them (rows added if needed)."""
        questions = asked_questions(self._scenario())
        if self._asked:
            questions = [*questions, *[""] * (max(self._asked) + 1 - len(questions))]
            for case, question in self._asked.items():
                questions[case] = question
        self.grid_model.reset(questions, self._labels, keep=True)
        self._failed = self.grid_model.failed_runs()
        self._filter()
        self._draw_summary()

    def _draw_summary(self) -> None:
        started = time.perf_counter()
        summaries = [self._tallies.setdefault(k, LaneTally()).summary(k) for k in self._labels]
        note = [f"⚠ {self._note}"] if self._note else []  # the offline judge's lanes
        self.summary.setText("\n".join([*(s.row() for s in summaries), *note]))
        self.verdicts.draw()
        # Its latency percentiles sort every run's time (~17 ms for 2 lanes x 50,000 runs):
        # waited on a hundredfold, so the loop's lag p99 stays the grid's own.
        self._summary_drawn = time.perf_counter()
        self._summary_wait = max(SUMMARY_EVERY_S, 100 * (self._summary_drawn - started))

    def _filter(self, cases: Iterable[int] | None = None) -> None:
        """Hide the rows without a failure (Failures only): these cases, or every one."""
        only = self.failures_only.isChecked()
        rows = range(self.grid.rowCount()) if cases is None else set(cases)
        for r in rows:
            self.grid.setRowHidden(r, only and not self.grid_model.failing(r))

    def _on_grid_cell_clicked(self, row: int, column: int) -> None:
        if column == 0 or column > len(self._labels):
            return
        lane = self._labels[column - 1]
        try:  # its trace, read now (the database holds it: eval_results.py)
            shown = self.results.shown(lane, row, self.grid_model.repeats(row, column - 1))
        except HistoryError as err:
            self.status.setText(f"⚠ {err}")
            return
        if shown is not None:
            repeat, record = shown
            self.traceRequested.emit(lane, record, f"Test set: case {row + 1}, repeat {repeat + 1}")

    def show_evaluation(
        self, title: str, labels: list[str], store: HistoryStore, evaluation: int
    ) -> bool:
        """A past evaluation from the history in the grid (ui/compare/eval_history.py)."""
        return self.history.show(self, title, labels, store, evaluation)

    def update_buttons(self) -> None:
        running = self.running
        self.run_button.setEnabled(not running)
        self.resume_button.setEnabled(not running and self.grid_model.resumable(self._repeats()))
        self.rerun_button.setEnabled(not running and self.grid_model.failed_runs() > 0)
        self.stop_button.setEnabled(running)
        self.edit_button.setEnabled(not running)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self.running:  # the cases, before anything has run
            self._draw()

    def edit_cases(self) -> TestSetEditor:
        """Open the editor (not modal: runs in other tabs go on); OK writes the cases."""
        scenario = self._scenario()
        editor = self.editor = TestSetEditor.of(scenario, self._sources(), self, self.verdicts)
        editor.accepted.connect(lambda: self._cases_edited(editor.cases(), *editor.judging()))
        self.editorOpened.emit(editor)
        editor.open()
        return editor

    def _cases_edited(
        self, cases: tuple[EvalCase, ...], rubric: str = "", judge: JudgeSpec | None = None
    ) -> None:
        self._write_cases(test_set=cases, rubric=rubric, judge=judge)
        self._clear()  # keyed by case number: an edited set starts afresh
        self._draw()
        self.status.setText(f"{len(cases)} cases")
        self.update_buttons()
