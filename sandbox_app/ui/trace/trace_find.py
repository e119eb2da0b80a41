"""Edit → Find in trace (Ctrl+F) and Go to step (Ctrl+G): a bar under a trace.

Finding counts every match in the trace ("3 of 1,204"), a slice of rows at a time within a
few milliseconds a turn of the event loop, so a 30,000-step trace is searched while the
window stays live (and rows that stream in meanwhile are searched as they come). Enter or ▼
goes to the next match, Shift+Enter or ▲ to the one before; Go to step puts step k's separator
at the top. The bar works on anything that meets :class:`Findable` (its ``target``).
"""

from __future__ import annotations

import time
from typing import Protocol

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QSpinBox, QToolButton, QWidget

from sandbox_app.ui.common.plain import plain_label

SLICE_S = 0.004  # searching's share of one turn of the event loop
SLICE_ROWS = 2_000  # rows searched between looks at the clock


class Findable(Protocol):
    """What the bar needs of a trace: its rows, a search over some of them, going to one."""

    def row_count(self) -> int: ...

    def find_rows(self, needle: str, start: int, stop: int) -> list[int]: ...

    def show_row(self, row: int) -> None: ...

    def step_count(self) -> int: ...

    def scroll_to_step(self, step: int) -> bool: ...


class _Field(QLineEdit):
    back = Signal()  # Shift+Enter

    def keyPressEvent(self, event: QKeyEvent) -> None:
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if enter and event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self.back.emit()
            return
        super().keyPressEvent(event)


class TraceFind(QWidget):
    """Signals: ``searched()``: the whole trace (as far as it is read) has been searched."""

    searched = Signal()

    def __init__(self, target: Findable, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.target = target
        self.field = _Field()
        self.field.setPlaceholderText("Find in trace")
        self.field.setClearButtonEnabled(True)
        self.count = plain_label("")
        self.previous, self.next = QToolButton(), QToolButton()
        self.previous.setText("▲")
        self.previous.setToolTip("Previous match (Shift+Enter)")
        self.next.setText("▼")
        self.next.setToolTip("Next match (Enter)")
        self.step = QSpinBox()
        self.step.setPrefix("Step ")
        self.step.setRange(1, 1)
        self.step.setToolTip("Go to step (Ctrl+G): Enter puts its first line at the top")
        self.step.setKeyboardTracking(False)
        close = QToolButton()
        close.setText("✕")
        close.setToolTip("Close (Esc)")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.field, self.count, self.previous, self.next, self.step, close):
            layout.addWidget(widget)
        layout.setStretch(0, 1)
        self.matches: list[int] = []
        self.current = -1
        self.growing = False  # rows may still come (a trace streams in)
        self._needle = ""
        self._scanned = 0
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._scan)
        self.field.textChanged.connect(self._restart)
        self.field.returnPressed.connect(self.go_next)
        self.field.back.connect(self.go_previous)
        self.next.clicked.connect(self.go_next)
        self.previous.clicked.connect(self.go_previous)
        self.step.editingFinished.connect(lambda: self.go_to_step(self.step.value()))
        close.clicked.connect(self.hide)
        self.hide()

    # ---- what callers use ------------------------------------------------------------

    def open_find(self) -> None:
        self.show()
        self.field.setFocus()
        self.field.selectAll()

    def open_step(self) -> None:
        self.show()
        self.step.setMaximum(max(1, self.target.step_count()))
        self.step.setFocus()
        self.step.selectAll()

    def go_to_step(self, step: int) -> bool:
        return self.target.scroll_to_step(step)

    def rows_changed(self) -> None:
        """Rows came (searched as they come) or moved (a fold opened: searched again)."""
        self.step.setMaximum(max(1, self.target.step_count()))
        if self._needle and not self._timer.isActive():
            self._timer.start()

    def set_growing(self, on: bool) -> None:
        self.growing = on
        self.rows_changed()
        if self._needle and not self._timer.isActive():
            self._say()  # "…" gone: the count is the whole trace's

    def restart(self) -> None:
        self._restart(self.field.text())

    def go_next(self) -> None:
        self._go(+1)

    def go_previous(self) -> None:
        self._go(-1)

    @property
    def done(self) -> bool:
        """Every row there is has been searched."""
        return self._scanned >= self.target.row_count()

    # ---- searching ---------------------------------------------------------------------

    def _restart(self, text: str) -> None:
        self._needle, self.matches, self.current, self._scanned = text, [], -1, 0
        self.count.setText("")
        if text:
            self._timer.start()
        else:
            self._timer.stop()

    def _scan(self) -> None:
        deadline = time.perf_counter() + SLICE_S
        count = self.target.row_count()
        while self._scanned < count and time.perf_counter() < deadline:
            stop = min(self._scanned + SLICE_ROWS, count)
            self.matches += self.target.find_rows(self._needle, self._scanned, stop)
            self._scanned = stop
        if self.current < 0 and self.matches:
            self._go(+1)
        if self._scanned >= count:
            self._timer.stop()
            self.searched.emit()
        self._say()

    def _say(self) -> None:
        final = self.done and not self.growing
        total = f"{len(self.matches):,}" + ("" if final else "…")
        if not self.matches:
            self.count.setText("no match" if final else "searching…")
        else:
            self.count.setText(f"{self.current + 1:,} of {total}")

    def _go(self, by: int) -> None:
        if not self.matches:
            return
        self.current = (self.current + by) % len(self.matches)
        self.target.show_row(self.matches[self.current])
        self._say()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.hide()
            return
        super().keyPressEvent(event)
