"""What a run pane does with one step of the run on screen: the trace's right-click menu
(Inspect its request, Copy it as text, Fork from it, Rerun it, Compare with another kept run,
Add to test set… for the whole run) and the work behind each."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication, QComboBox, QMenu

from sandbox_app.core.running.fork import ForkPoint, exchanges_of, fork_point

if TYPE_CHECKING:  # the dialogs and the step's text: imported when first asked for
    from sandbox_app.core.running.records import RunHistory, RunRecord
    from sandbox_app.ui.lane.inspector import RequestInspector
    from sandbox_app.ui.trace.trace_diff_dialog import TraceDiffDialog
    from sandbox_app.ui.trace.trace_stack import TraceStack
    from sandbox_app.ui.trace.trace_view import TraceView


# Add to test set… for a finished run (ui/lane/add_to_test_set.py), given by the pane's owner,
# which knows the workspace; None: no such entry.
AddCase = Callable[["RunRecord"], object]
ANSWER_CHARS = 40  # of a run's answer in Compare with's entries


class StepPane(Protocol):
    """What the step menu needs of a run pane (run_pane.RunPane is one): named here, so this
    module never imports the pane that imports it."""

    inspector: RequestInspector | None
    history: RunHistory  # the runs kept here, in the run picker's order
    run_picker: QComboBox
    add_case: AddCase | None

    @property
    def trace(self) -> TraceView: ...

    @property
    def traces(self) -> TraceStack: ...

    @property
    def running(self) -> bool: ...

    def shown_record(self) -> RunRecord | None: ...

    def step_at(self, block_number: int) -> int: ...

    def fork(self, step: int, rerun: bool = False) -> bool: ...


def inspect(pane: StepPane, step: int) -> RequestInspector | None:
    from sandbox_app.ui.lane.inspector import RequestInspector

    record = pane.shown_record()
    exchanges = exchanges_of(record.events, step) if record else []
    if record is None or not exchanges:
        return None
    settings = record.settings
    trace = pane.trace  # the dialog's parent: it closes with the pane the trace is in
    pane.inspector = RequestInspector(
        step, exchanges, settings.backend, settings.base_url, settings.model, trace
    )
    pane.inspector.open()
    return pane.inspector


def fork_at(pane: StepPane, step: int, rerun: bool) -> ForkPoint | None:
    """Where a fork from step ``step`` (or a rerun of it) starts; None when it cannot."""
    record = pane.shown_record()
    at = step - 1 if rerun else step
    point = fork_point(record.events, at) if record and not pane.running else None
    if point is None:
        return None
    return replace(point, only_step=step) if rerun else point


def compare_with(pane: StepPane, other: int) -> TraceDiffDialog | None:
    """The run on screen beside kept run ``other`` (ui/trace/trace_diff_dialog.py)."""
    from sandbox_app.ui.trace.trace_diff_dialog import open_diff

    picker, history = pane.run_picker, pane.history
    runs = [(picker.itemText(i), history[i]) for i in range(min(picker.count(), len(history)))]
    shown = picker.currentIndex()
    if not (0 <= shown < len(runs) and 0 <= other < len(runs)):
        return None
    return open_diff(runs, shown, other, pane.trace)


def popup(pane: StepPane, pos: QPoint) -> None:
    menu = menu_at(pane, pos)
    if menu is not None:
        menu.popup(pane.traces.shown().viewport().mapToGlobal(pos))


def menu_at(pane: StepPane, pos: QPoint) -> QMenu | None:
    """The right-click menu for the trace's point ``pos`` (None before any run): the live
    view's, or a long trace's rows' (ui/trace/trace_stack.py)."""
    trace = pane.trace
    step = pane.traces.step_at(pos)
    record = pane.shown_record()
    if record is None:
        return None
    menu = QMenu(trace)
    if step:
        _step_actions(menu, pane, step, record)
        menu.addSeparator()
    compare = menu.addMenu("Compare with")  # another run kept here: a trace diff
    shown = pane.run_picker.currentIndex()
    for index in range(pane.run_picker.count()):
        if index != shown:
            title = pane.run_picker.itemText(index)
            item = compare.addAction(run_entry(title, pane.history[index]))
            item.triggered.connect(lambda _=False, i=index: compare_with(pane, i))
    compare.setEnabled(not compare.isEmpty())
    adder = pane.add_case
    if adder is not None:
        add = menu.addAction("Add to test set…")
        add.setEnabled(record.done)
        add.triggered.connect(lambda: adder(record))
    return menu


def run_entry(title: str, record: RunRecord) -> str:
    """A kept run as Compare with lists it: "Run 2 · ✔ $1,680 per year" (✘: judged wrong by
    the scenario's expected answer; no mark: nothing to judge by), its answer one short line;
    how it ended when it did not answer. The answer is the model's: no & is a mnemonic."""
    from sandbox_app.core.results.outcome import OUTCOMES
    from sandbox_app.core.results.verdict import verdict
    from sandbox_app.core.tools.outside import clean_description

    finished = record.finished
    if finished is None:
        return f"{title} · running"
    if finished.status != "answered":
        return f"{title} · {OUTCOMES[finished.status]}"
    expected = record.scenario.expected if record.scenario else None
    found = verdict(finished.answer, expected)
    mark = "✔ " if found is True else "✘ " if found is False else ""
    answer = clean_description(finished.answer or "", ANSWER_CHARS).replace("&", "&&")
    return f"{title} · {mark}{answer}"


def _step_actions(menu: QMenu, pane: StepPane, step: int, record: RunRecord) -> None:
    action = menu.addAction(f"Inspect step {step}'s request…")
    action.setEnabled(bool(exchanges_of(record.events, step)))
    action.triggered.connect(lambda: inspect(pane, step))
    copy = menu.addAction(f"Copy step {step} as text")
    copy.triggered.connect(lambda: _copy_step(record, step))
    for text, rerun in ((f"Fork from step {step}", False), (f"Rerun step {step}", True)):
        action = menu.addAction(text)
        at = step - 1 if rerun else step
        action.setEnabled(not pane.running and fork_point(record.events, at) is not None)
        action.triggered.connect(lambda _=False, r=rerun: pane.fork(step, r))


def _copy_step(record: RunRecord, step: int) -> None:
    from sandbox_app.core.results.run_export import step_text

    QApplication.clipboard().setText(step_text(record, step))
