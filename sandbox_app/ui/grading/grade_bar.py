"""A person's grade of the run a pane shows: 👍 or 👎 and an optional note, kept in the history
with the run (core/history/history_grades.py), under the pane's answer.

The Run tab's pane and every lane's have one (made by ui/lane/lane_runner.py); it grades the
run on screen — the one just finished, one picked from the kept runs, or a test-set cell's
shown in its lane — by the place the history keeps it (``RunRecord.stored_as``), so a grade
given here is the one the judge's agreement counts. A run the history does not keep (no
history, a recording played) shows no bar. By keyboard, in a pane's trace or its note:
Ctrl+Shift+G 👍, Ctrl+Shift+B 👎 (again: the grade taken back), Ctrl+Shift+N the note
(Enter keeps it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt, SignalInstance
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QToolButton, QWidget

from sandbox_app.lazy_import import lazy_import
from sandbox_app.ui.common.plain import plain_label, tip

if TYPE_CHECKING:
    from sandbox_app.core.history import history_grades as grades
    from sandbox_app.core.history import history_schema
    from sandbox_app.core.history.history_db import HistoryStore
    from sandbox_app.core.running.records import RunRecord
else:  # the history's modules (sqlite3, the result rows): when a kept run is first shown
    grades = lazy_import("sandbox_app.core.history.history_grades")
    history_schema = lazy_import("sandbox_app.core.history.history_schema")

KEYS = {"good": "Ctrl+Shift+G", "bad": "Ctrl+Shift+B", "note": "Ctrl+Shift+N"}


class GradedPane(Protocol):
    """What of a pane (ui/lane/run_pane.py) the bar grades: the run on screen, the trace its
    keys work in, and the signals that a run ended or another is shown."""

    @property
    def trace(self) -> QWidget: ...

    @property
    def runFinished(self) -> SignalInstance: ...

    @property
    def metricsChanged(self) -> SignalInstance: ...

    def shown_record(self) -> RunRecord | None: ...


class GradeBar(QWidget):
    """👍 / 👎 and a note for the run ``pane`` shows, in the database ``store`` gives."""

    def __init__(self, pane: GradedPane, store: Callable[[], HistoryStore | None]) -> None:
        super().__init__()
        self._pane, self._store = pane, store
        # Words beside the signs: an emoji font may draw them small, or not at all.
        self.good = self._button("👍 Good", "A good run: kept in the history with it", KEYS["good"])
        self.bad = self._button("👎 Bad", "A bad run: kept in the history with it", KEYS["bad"])
        self.note = QLineEdit()
        self.note.setPlaceholderText("note (optional; Enter keeps it)")
        self.said = plain_label()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.good, self.bad, self.note, self.said):
            layout.addWidget(widget)
        layout.setStretch(2, 3)  # the note, and what was done with the grade, both in view
        layout.setStretch(3, 2)
        self.good.clicked.connect(lambda: self.grade(True))
        self.bad.clicked.connect(lambda: self.grade(False))
        self.note.returnPressed.connect(self._keep_note)
        for key, what, act in (
            (KEYS["good"], "Grade the run shown 👍 (in a trace)", lambda: self.grade(True)),
            (KEYS["bad"], "Grade the run shown 👎 (in a trace)", lambda: self.grade(False)),
            (KEYS["note"], "Write a note on the run shown (in a trace)", self._to_note),
        ):
            # A pane's own keys, as its trace's Space: the trace and the note field take them
            # (the Run tab and every lane have theirs; the focus says which run is graded).
            for target in (pane.trace, self.note):
                shortcut = QShortcut(QKeySequence(key), target)
                shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)
                shortcut.setWhatsThis(what)  # Help → Keyboard shortcuts lists it
                shortcut.activated.connect(act)
        # After the owner has stored the run (its runFinished handler is connected first).
        pane.runFinished.connect(lambda _event: self.refresh())
        pane.metricsChanged.connect(lambda _text: self.refresh())  # another run on screen
        self._ref: grades.RunRef | None = None
        self.hide()

    def _button(self, text: str, what: str, key: str) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setCheckable(True)
        button.setToolTip(tip(f"{what} ({key}; again to take it back)"))
        return button

    def refresh(self) -> None:
        """Show the grade of the run on screen, or no bar when the history does not keep it."""
        self._ref = self._shown_ref()
        self.setVisible(self._ref is not None)
        if self._ref is None:
            return
        self.note.setMaxLength(grades.MAX_NOTE)  # set once a run is shown: the module's, then
        try:
            grade = grades.grade_of(self._database(), self._ref)
        except history_schema.HistoryError as err:
            self._show(None, f"⚠ {err}")
            return
        self._show(grade, "")

    def grade(self, good: bool) -> None:
        """👍 or 👎 for the run on screen; the same again takes the grade back."""
        if self._ref is None:
            return
        ref = self._ref
        try:
            store = self._database()
            held = grades.grade_of(store, ref)
            if held is not None and held.good == good:
                grades.clear_grade(store, ref)
                self._show(None, "grade taken back")
                return
        except history_schema.HistoryError as err:
            self._show(None, f"⚠ {err}")
            return
        self._keep(ref, grades.Grade(good, self.note.text().strip()), "kept in the history")

    def _keep_note(self) -> None:
        if self._ref is None:
            return
        if not (self.good.isChecked() or self.bad.isChecked()):
            self.said.setText("👍 or 👎 first: a note goes with a grade")
            return
        grade = grades.Grade(self.good.isChecked(), self.note.text().strip())
        self._keep(self._ref, grade, "note kept")

    def _keep(self, ref: grades.RunRef, grade: grades.Grade, said: str) -> None:
        try:
            grades.set_grade(self._database(), ref, grade)
        except history_schema.HistoryError as err:
            self._show(None, f"⚠ {err}")
            return
        self._show(grade, said)

    def _to_note(self) -> None:
        if self._ref is not None:
            self.note.setFocus(Qt.FocusReason.ShortcutFocusReason)
            self.note.selectAll()

    def _show(self, grade: grades.Grade | None, said: str) -> None:
        self.good.setChecked(grade is not None and grade.good)
        self.bad.setChecked(grade is not None and not grade.good)
        if grade is not None or not said.startswith("grade taken"):
            self.note.setText(grade.note if grade is not None else "")
        self.said.setText(said)

    def _shown_ref(self) -> grades.RunRef | None:
        record = self._pane.shown_record()
        stored = record.stored_as if record is not None and record.finished else None
        if stored is None:  # no run kept on screen (the first frame): no history opened for it
            return None
        store = self._store()
        if store is None or stored[2] != str(store.path):
            return None  # not kept, or kept in another history file than the window's
        place, number, _ = stored
        return grades.RunRef("run" if place == "run" else "result", number)

    def _database(self) -> HistoryStore:
        store = self._store()
        if store is None:
            raise history_schema.HistoryError("history is off")
        return store
