"""Improve prompt…: the optimizer (application/optimizer.py, the CLI's ``optimize``) driven
from the window.

Chosen: the arm whose prompt is improved (the Run tab's model or a compare lane), the
reflection model (those, or the offline model playing the scenario's ``script.reflections``),
the budget (candidates, runs, dollars) and the seed. The loop runs as a task on the window's
loop (each run's engine and the reflections are awaited; a server's requests travel on the
network loop), so the window draws between runs; its progress (runs, cost, the best so far,
a line a step) is shown as it comes. **Stop** cancels the task; **Resume** starts the same
settings again with ``resume=True``: what the history stored is reused, and it ends as an
uninterrupted run would.

Every accepted candidate becomes an unstarred version of the prompt history (through the
workspace, named ``opt3.2``, its origin its note), so the Versions tab lists it; the editor
and the starred versions are left alone until **Accept** puts the winner in the editor (one
edit, undone by Edit → Undo), shown first as a prompt diff beside its held-out verdict.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from PySide6.QtCore import Qt
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.application.backend_choice import BackendChoice
from sandbox_app.application.optimize_setup import OptimizeSetup
from sandbox_app.application.optimizer import OptimizeError, Optimizer
from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.history.history_schema import HistoryError
from sandbox_app.core.optimizing.budget import DEFAULT_CANDIDATES, Budget, Progress
from sandbox_app.core.optimizing.outcome import Candidate, Outcome
from sandbox_app.core.optimizing.split import split_cases
from sandbox_app.core.running.backend import BackendError
from sandbox_app.core.scenarios.lane_settings import SettingError
from sandbox_app.core.scenarios.prompt_diff import diff_versions
from sandbox_app.core.scenarios.prompt_versions import PromptVersion, VersionError, added
from sandbox_app.core.scenarios.test_set import undefined_in_cases
from sandbox_app.core.untrusted.file_reader import ReadError
from sandbox_app.ui.common.fitting import hold_height_for_width
from sandbox_app.ui.common.plain import plain_label
from sandbox_app.ui.common.workspace_signals import QtWorkspace
from sandbox_app.ui.versions.prompt_restore import PromptRestore
from sandbox_app.ui.versions.version_diff_view import VersionDiffView

Store = Callable[[], tuple[HistoryStore | None, str]]  # the database, or none and why
STOPPED = "Stopped: every run so far is in the history; Resume goes on from there."
ADVICE = {
    True: "It is better on the held-out cases: Accept puts it in the editor.",
    False: "The held-out cases do not show it is better: keep the prompt you have.",
}
_FAILED = (OptimizeError, HistoryError, BackendError, SettingError, VersionError, ReadError)


class ImproveDialog(QDialog):
    """Not modal: the Versions tab fills as candidates come."""

    def __init__(
        self,
        workspace: QtWorkspace,
        store: Store,
        restorer: PromptRestore,
        keys: KeyStore,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Improve prompt")
        self.resize(980, 680)
        self.workspace, self._store, self.restorer, self.keys = workspace, store, restorer, keys
        self.place = ""  # the scenario's file: what a resume finds the optimization by
        self._arms: list[BackendChoice] = []
        self._reflectors: list[BackendChoice] = []
        self.task: asyncio.Task[None] | None = None
        self.setup: OptimizeSetup | None = None  # of the last start: Resume asks the same
        self.optimizer: Optimizer | None = None
        self.outcome: Outcome | None = None
        self.resumable = False
        self.arm_combo = QComboBox()
        self.reflect_combo = QComboBox()
        self.candidates_spin = QSpinBox(minimum=1, maximum=100, value=DEFAULT_CANDIDATES)
        self.runs_spin = QSpinBox(minimum=0, maximum=1_000_000, value=0)
        self.dollars_spin = QDoubleSpinBox(minimum=0.0, maximum=10_000.0, value=0.0)
        self.dollars_spin.setDecimals(2)
        self.dollars_spin.setPrefix("$")
        self.seed_spin = QSpinBox(minimum=0, maximum=1_000_000, value=0)
        self.candidates_spin.setSuffix(" candidates")
        self.runs_spin.setSuffix(" runs")
        self.runs_spin.setSpecialValueText("runs: no limit")
        self.dollars_spin.setSpecialValueText("dollars: no limit")
        self.seed_spin.setPrefix("seed ")
        budget = QHBoxLayout()
        for spin in (self.candidates_spin, self.runs_spin, self.dollars_spin, self.seed_spin):
            budget.addWidget(spin)
        form = QFormLayout()
        form.addRow("Arm to improve", self.arm_combo)
        form.addRow("Reflection model", self.reflect_combo)
        form.addRow("At most", budget)
        self.start_button = QPushButton("Start")
        self.stop_button = QPushButton("Stop")
        self.resume_button = QPushButton("Resume")
        self.accept_button = QPushButton("Accept the winner")
        self.accept_button.setToolTip("Put the winner in the editor (Edit → Undo takes it back)")
        self.progress = QProgressBar()
        self.progress.setFormat("%v runs")
        self.figures = plain_label()
        self.status = plain_label()
        self.status.setWordWrap(True)
        self.log = QPlainTextEdit()  # plain text: the diagnoses are a model's words
        self.log.setReadOnly(True)
        self.verdict = plain_label()
        self.verdict.setWordWrap(True)
        self.diff_view = VersionDiffView()
        self.diff_view.setPlaceholderText("The winner's diff from the current prompt, at the end.")
        row = QHBoxLayout()
        for button in (self.start_button, self.stop_button, self.resume_button):
            row.addWidget(button)
        row.addWidget(self.progress, 1)
        row.addWidget(self.accept_button)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.log)
        split.addWidget(self.diff_view)
        split.setSizes([400, 560])
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(row)
        for label in (self.figures, self.status, self.verdict):
            layout.addWidget(label)
            hold_height_for_width(label)  # a wrapped verdict is never overlapped
        layout.addWidget(split, 1)
        self.start_button.clicked.connect(self.start)
        self.stop_button.clicked.connect(self.stop)
        self.resume_button.clicked.connect(self.resume)
        self.accept_button.clicked.connect(self.accept_winner)
        self._update_buttons()

    def offer(
        self, arms: Sequence[BackendChoice], reflectors: Sequence[BackendChoice], place: str
    ) -> None:
        """The models to choose from now (the last one of ``reflectors``: the offline model,
        chosen first when the scenario has reflections written); kept while running."""
        if self.running:
            return
        self.place = place
        for combo, lanes in ((self.arm_combo, arms), (self.reflect_combo, reflectors)):
            chosen = combo.currentText()
            combo.clear()
            combo.addItems([lane.label for lane in lanes])
            if chosen and (at := combo.findText(chosen)) >= 0:
                combo.setCurrentIndex(at)
            elif combo is self.reflect_combo and self.workspace.model.scenario.script.reflections:
                combo.setCurrentIndex(len(reflectors) - 1)
        self._arms, self._reflectors = list(arms), list(reflectors)

    @property
    def running(self) -> bool:
        return self.task is not None

    def start(self) -> None:
        scenario = self.workspace.model.scenario
        problem = undefined_in_cases(scenario) or ""
        if len(scenario.test_set) < 2:
            problem = "Improving a prompt needs two cases at least: one to learn, one to check."
        arm = self._arms[self.arm_combo.currentIndex()]
        reflect = self._reflectors[self.reflect_combo.currentIndex()]
        dollars, prices = self.dollars_spin.value() or None, dict(self.workspace.model.prices)
        for lane in (arm, reflect) if dollars is not None else ():
            model = lane.config.model or lane.config.kind.id
            if lane.config.kind.server and model not in prices:  # its cost would be unknown
                problem = f"A dollar budget needs the price of {model} (Compare → Prices…)."
        if problem or self.running:
            self.status.setText(problem)
            return
        self.setup = OptimizeSetup(
            scenario,
            self.place,
            arm,
            reflect,
            Budget(self.candidates_spin.value(), self.runs_spin.value() or None, dollars),
            seed=self.seed_spin.value(),
            prices=prices,
            keys=self.keys,
        )
        self.log.clear()
        self.verdict.clear()
        self.diff_view.show_note("")
        self.outcome = None
        self._go(resume=False)

    def resume(self) -> None:
        if self.setup is not None and not self.running:
            self._go(resume=True)

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()

    async def finish(self) -> None:
        task = self.task
        self.stop()
        if task is not None:
            await asyncio.wait([task])

    def _go(self, resume: bool) -> None:
        assert self.setup is not None
        store, why = self._store()
        if store is None:
            self.status.setText(f"Improve prompt keeps its state in the history database: {why}")
            return
        setup = self.setup
        cases = setup.settings()["cases"]
        split = split_cases(cases, setup.held_out, setup.seed)
        most = (setup.budget.candidates + 1) * len(split.train) + 2 * len(split.held_out)
        runs = setup.budget.runs
        self.progress.setRange(0, min(most * setup.repeats, runs or most * setup.repeats))
        self.progress.setValue(0)
        self.optimizer = Optimizer(setup, store, self._on_progress, self._on_candidate)
        self.status.setText("Resuming…" if resume else "Starting…")
        self.resumable = False
        self.task = asyncio.ensure_future(self._run(self.optimizer, resume))
        self._update_buttons()

    async def _run(self, optimizer: Optimizer, resume: bool) -> None:
        try:
            outcome = await optimizer.run(resume=resume)
        except asyncio.CancelledError:  # Stop: the task ends here, its work kept
            self.status.setText(STOPPED)
            self.resumable = True
        except _FAILED as err:  # one line; a failed reflection model can be resumed
            self.status.setText(f"⚠ {err}")
            self.resumable = isinstance(err, BackendError)
        else:
            self._show(outcome)
        finally:
            self.task = None
            self._update_buttons()

    def _on_progress(self, p: Progress) -> None:
        cost = f"${p.dollars:.4f}" if p.dollars is not None else "cost unknown (no price)"
        self.figures.setText(
            f"{p.runs} runs · {cost} · {p.candidates} candidates proposed · best so far: "
            f"{'the current prompt' if p.best == 0 else f'candidate {p.best}'}, "
            f"{p.best_rate:.0%} of training cases"
        )
        self.progress.setValue(min(p.runs, self.progress.maximum()))
        if p.line:
            self.status.setText(p.line)
            self.log.appendPlainText(p.line)

    def _on_candidate(self, candidate: Candidate, parent: PromptVersion) -> None:
        """An accepted candidate into the prompt history, unstarred (as ``optimize`` does to
        the file); the history's own entries, names and stars are left as they are."""
        assert candidate.version is not None
        assert self.optimizer is not None
        history = self.workspace.model.scenario.prompt_history
        grown = added(
            history,
            candidate.version,
            datetime.now(UTC),
            name=f"opt{self.optimizer.id}.{candidate.number}",
            note=candidate.origin(parent.id),
        )
        if grown != history:
            self.workspace.update(self, prompt_history=grown)

    def _show(self, outcome: Outcome) -> None:
        self.outcome = outcome
        self.progress.setRange(0, max(outcome.runs, 1))
        self.progress.setValue(outcome.runs)
        lines = outcome.lines()  # the CLI's advice, last with a winner, is the verdict's here
        self.log.appendPlainText("\n".join(lines if outcome.winner is None else lines[:-1]))
        if outcome.winner is None:
            self.verdict.setText(f"{lines[-1]}. Keep the prompt you have.")
            self.status.setText(f"Done: stopped, {outcome.stopped}.")
            return
        verdict = outcome.verdict  # the paired verdict on the cases it never saw
        held = verdict.sentence() if verdict is not None else "not checked on held-out cases"
        advice = ADVICE[outcome.better]
        self.verdict.setText(f"Winner: candidate {outcome.winner}. Held out: {held}. {advice}")
        base, winner = outcome.version(0), outcome.version(outcome.winner)
        assert base is not None
        assert winner is not None
        title = f"current {base.short} → candidate {outcome.winner} {winner.short}"
        self.diff_view.show_diff(title, diff_versions(base, winner))
        self.accept_button.setText(f"Accept candidate {outcome.winner}")
        self.status.setText(f"Done: stopped, {outcome.stopped}.")

    def accept_winner(self) -> None:
        outcome = self.outcome
        if outcome is None or outcome.winner is None:
            return
        version = outcome.version(outcome.winner)
        assert version is not None
        problem = self.restorer.restore(version)
        self.status.setText(
            problem
            or f"Candidate {outcome.winner} is in the editor: Edit → Undo (Ctrl+Z) takes it back."
        )

    def _update_buttons(self) -> None:
        running = self.running
        for widget in (self.start_button, self.arm_combo, self.reflect_combo):
            widget.setEnabled(not running)
        for spin in (self.candidates_spin, self.runs_spin, self.dollars_spin, self.seed_spin):
            spin.setEnabled(not running)
        self.stop_button.setEnabled(running)
        self.resume_button.setEnabled(not running and self.resumable)
        winner = self.outcome is not None and self.outcome.winner is not None
        self.accept_button.setEnabled(not running and winner)

    def closeEvent(self, event: QCloseEvent) -> None:
        self.stop()  # a closed dialog runs nothing: Resume goes on when it is opened again
        super().closeEvent(event)

    def reject(self) -> None:
        self.stop()
        super().reject()
