"""Where a run pane draws its trace: the live trace view (ui/trace/trace_view.py: thinking
that folds, edits that strike, a separator rewritten by the context meter) for a run being
made; for a long one the list of rows that lays out only what is on screen
(ui/trace/trace_list.py), with the find bar (ui/trace/trace_find.py, under either view).

A trace is long when it is an opened trace past its first read, a recording or kept run of
more than :data:`LONG_EVENTS` events, or a run with a piece of text over
trace_rows.FOLD_CHARS (a 10 MB tool observation): that run is drawn again as rows from its
start when the piece comes. Events for the rows are gathered and added once a frame (the
frame clock, ui/common/frames.py), as the live view writes its text.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPoint, Qt, QTimer, Signal, SignalInstance
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QAbstractScrollArea, QStackedWidget, QVBoxLayout, QWidget

from sandbox_app.core.results.trace_rows import FOLD_CHARS
from sandbox_app.core.running.events import Event
from sandbox_app.ui.common import gc_policy
from sandbox_app.ui.common.frames import Phase, frame_clock
from sandbox_app.ui.trace.trace_find import TraceFind
from sandbox_app.ui.trace.trace_list import TraceList
from sandbox_app.ui.trace.trace_view import TraceView

# Past this many events (a step is some six), a kept run or a recording is drawn as rows: the
# live view's document costs ~66 bytes a character and drops text from its top past 100,000.
LONG_EVENTS = 3_000
FREEZE_EVERY = 15  # frames of rows between two freezes of what they are made of (gc_policy)


class TraceStack(QWidget):
    """``stepClicked(int)``: a step's separator was clicked, in the view shown."""

    stepClicked = Signal(int)
    def __init__(
        self, trace: TraceView, running: SignalInstance, parent: QWidget | None = None
    ) -> None:
        """``running``: the pane's runs started (True) or ended: rows may still come."""
        super().__init__(parent)
        self.trace = trace
        self.rows = TraceList()
        self._blocks = _Blocks(trace)
        self.finder = TraceFind(self._blocks)
        self._stack = QStackedWidget()
        self._stack.addWidget(trace)
        self._stack.addWidget(self.rows)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self._stack, 1)
        layout.addWidget(self.finder)
        self._pending: list[Event] = []
        self._events: list[Event] = []  # every one shown since the trace was cleared
        self._frames = 0  # frames that added rows
        self.menu_requested: Callable[[QPoint], None] = lambda _pos: None  # the step menu
        for view in (trace, self.rows):
            view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            view.customContextMenuRequested.connect(lambda pos: self.menu_requested(pos))
        running.connect(self.finder.set_growing)
        trace.stepClicked.connect(self.stepClicked)
        self.rows.stepClicked.connect(self.stepClicked)
        model = self.rows.model_
        model.rowsInserted.connect(lambda *_: self.finder.rows_changed())
        self.rows.clicked.connect(lambda _index: self._after_click())

    @property
    def long(self) -> bool:
        """The long view is the one shown (set before a run's events come)."""
        return self._stack.currentWidget() is self.rows

    @long.setter
    def long(self, on: bool) -> None:
        self._stack.setCurrentWidget(self.rows if on else self.trace)
        self.finder.target = self.rows if on else self._blocks
        self.finder.restart()

    def scroll_to_step(self, step: int) -> bool:
        """Step ``step``'s separator at the top of the view shown; False if it is not there."""
        return (self.rows if self.long else self.trace).scroll_to_step(step)

    def shown(self) -> QAbstractScrollArea:
        return self.rows if self.long else self.trace

    def step_at(self, pos: QPoint) -> int:
        """The step whose lines hold the shown view's point ``pos`` (0 before the first)."""
        if self.long:
            return self.rows.step_at_row(self.rows.indexAt(pos).row())
        return self.step_of_block(self.trace.cursorForPosition(pos).block().blockNumber())

    def step_of_block(self, block_number: int) -> int:
        """The step whose lines hold the live view's block ``block_number``."""
        step = 0
        while (block := self.trace.step_block(step + 1)) is not None and block <= block_number:
            step += 1
        return step

    def show_event(self, event: Event) -> None:
        if not self.long:
            if not _huge(event):
                self._events.append(event)  # kept while drawn live: for a switch to rows
                self.trace.show_event(event)
                return
            self.trace.clear_trace()  # drawn again as rows, from the run's start
            self.long, self._pending, self._events = True, self._events, []
        self._pending.append(event)
        frame_clock().schedule(self._draw_rows, Phase.DRAW)  # once a frame, however often asked

    def _draw_rows(self) -> None:
        """The frame's rows, in an event-loop pass of their own: not after the frame's events
        in the pass that delivered them (together ~9 ms while a long trace pours in)."""
        QTimer.singleShot(0, self, self.flush_all)

    def flush_all(self) -> None:
        if self._pending:
            pending, self._pending = self._pending, []
            self.rows.add(pending)
            self._frames += 1
            if self._frames % FREEZE_EVERY == 0:
                gc_policy.keep_long_lived()
        self.trace.flush_all()

    def clear_trace(self) -> None:
        self._pending.clear()
        self._events = []
        self.rows.clear_trace()
        self.trace.clear_trace()
        self.finder.restart()

    def open_find(self) -> None:
        self.trace.flush_all()
        self.finder.open_find()

    def open_step(self) -> None:
        self.trace.flush_all()
        self.finder.open_step()

    def _after_click(self) -> None:
        """A fold opened: rows moved under the matches found, so they are found again."""
        if self.finder.field.text():
            self.finder.restart()


def _huge(event: Event) -> bool:
    """An event with a text to fold (its observation's message, a reply or answer)."""
    text = getattr(event, "message", None) or getattr(event, "text", "")
    return isinstance(text, str) and len(text) > FOLD_CHARS


class _Blocks:
    """The live view's blocks as the find bar's rows (a block is a line, or a part of a long
    one: trace_view.MAX_BLOCK_CHARS)."""

    def __init__(self, trace: TraceView) -> None:
        self.trace = trace

    def row_count(self) -> int:
        return self.trace.document().blockCount()

    def find_rows(self, needle: str, start: int, stop: int) -> list[int]:
        wanted, out = needle.casefold(), []
        block = self.trace.document().findBlockByNumber(start)
        while wanted and block.isValid() and block.blockNumber() < stop:
            out += [block.blockNumber()] * block.text().casefold().count(wanted)
            block = block.next()
        return out

    def show_row(self, row: int) -> None:
        cursor = QTextCursor(self.trace.document().findBlockByNumber(row))
        cursor.select(QTextCursor.SelectionType.BlockUnderCursor)
        self.trace.setTextCursor(cursor)
        self.trace.centerCursor()

    def step_count(self) -> int:
        return self.trace.last_step()

    def scroll_to_step(self, step: int) -> bool:
        return self.trace.scroll_to_step(step)
