"""The live trace pane: one widget for the main view and every compare lane.

Tokens can arrive at thousands per second, so text is buffered and written at most once per
frame (the window's frame clock, ui/common/frames.py) through a cursor at the end of the document,
never by resetting the whole text. What it writes is core/results/presentation.py's pieces, the
same the terminal and the exports are made from; each block has one of their roles, recorded
as it is inserted, and very long model lines are split into blocks of at most
``MAX_BLOCK_CHARS`` so re-highlighting and layout stay cheap on every append. The model's
thinking is written the same way, as regions that fold to one header line once the model
moves on (ui/trace/thinking_regions.py).
"""

from __future__ import annotations

import re
import time

from PySide6.QtCore import QEvent, Signal
from PySide6.QtGui import QFontDatabase, QMouseEvent, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from sandbox_app.core.results.presentation import (
    CUT_NOTE,
    STREAMED,
    Edit,
    Presentation,
    Role,
    step_header,
)
from sandbox_app.core.running.events import Event, StepFinished
from sandbox_app.ui.common.frames import Phase, frame_clock
from sandbox_app.ui.trace.highlighter import TraceHighlighter
from sandbox_app.ui.trace.thinking_regions import Region, ThinkingRegions
from sandbox_app.ui.trace.trace_blocks import TraceBlocks
from sandbox_app.ui.trace.trace_queue import END_OF_THINKING, Pending, merged, take_frame

MAX_BLOCK_CHARS = 1000
# What a pane keeps on screen. Qt's text document and its layout cost ~100 bytes a character,
# so four lanes of 100,000 tokens would hold ~45 MB each; past this, whole blocks are dropped
# from the top (the run record, and so Copy trace and every export, keeps the whole run).
MAX_TRACE_CHARS = 100_000
TRIM_TO_CHARS = 75_000
# At most this much text is written per frame; a backlog (a client catching up) is spread
# over the next frames instead of freezing the window for one long write.
MAX_FRAME_CHARS = 12_000
__all__ = ["CUT_NOTE", "MAX_BLOCK_CHARS", "TraceView"]
_APPEND, _HEADER = Edit.APPEND, Role.THINKING_HEADER  # looked up once: used per token


class TraceView(TraceBlocks):
    """Read-only, append-only, colour-by-author view of a run. ``stepClicked(int)``: the user
    clicked a ``── Step n ──`` separator."""

    stepClicked = Signal(int)
    show_thinking_default = False  # what a new view starts with (View menu)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)  # an undo stack of every token costs memory and time
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self._roles: list[Role] = [Role.NOTICE]
        self._pending: list[Pending] = []
        self._steps: dict[int, int] = {}  # step number → block number of its separator
        self._continued: set[int] = set()  # blocks that continue a split long line
        self._line_break_due = False  # the last block holds a whole-line role: start a new one
        self._follow = True
        self.trimmed_chars = 0  # dropped from the top to bound memory (see MAX_TRACE_CHARS)
        self.thinking = ThinkingRegions(self.document(), self.flush)
        self.thinking.show_all = self.show_thinking_default
        self._step_now = 0  # the step whose separator was written last
        self._model_start: int | None = None  # first block of this step's model text
        self._model_since = 0.0  # when that text began
        self.presentation = Presentation()
        self.highlighter = TraceHighlighter(
            self.document(), self.palette(), self.role_of, self.continues
        )
        self.verticalScrollBar().valueChanged.connect(self._on_scrollbar_value_changed)
        # The view got shorter (a finished run's answer appeared above it): still at the end.
        self.verticalScrollBar().rangeChanged.connect(self._on_scrollbar_range_changed)

    # ---- what callers use -------------------------------------------------------------

    def show_event(self, event: Event) -> None:
        """Draw one engine event: its pieces (core/results/presentation.py)."""
        if isinstance(event, StepFinished):  # what a thinking region's header says
            self.thinking.metrics[event.step] = event.metrics
        for role, text, edit in self.presentation.feed(event):  # per token: kept short
            if edit is not _APPEND:
                self._redraw(role, text, edit)
            # A thinking region writes its own header line: how long, how many tokens.
            elif role is not _HEADER:
                self.append_text(role, text)

    def _redraw(self, role: Role, text: str, edit: Edit) -> None:
        """What a piece asks of a view that redraws what it wrote
        (core/results/presentation.Edit)."""
        if edit is Edit.REDRAW:
            self._rewrite_model_text(role, text)
        elif edit is Edit.STRIKE:
            self.flush_all()
            self._strike_original(role)
        elif edit is Edit.END_THINKING:
            self._end_thinking_later()
        elif edit is Edit.HEADER:
            self._rewrite_step_header(text.rstrip("\n"))
        # TEXT_ONLY: the answer header and the status bar say it, or a redraw did.

    def append_text(self, role: Role, text: str) -> None:
        """Queue streamed text; it reaches the document on the next frame."""
        if text:
            self._pending.append((role, text))
            frame_clock().schedule(self.flush, Phase.DRAW)

    def append_line(self, role: Role, text: str) -> None:
        """Queue a whole line that belongs to ``role`` (an observation, a notice…)."""
        self.append_text(role, text + "\n")

    def add_step(self, step: int) -> None:
        self.append_line(Role.STEP, step_header(f"Step {step}"))

    def clear_trace(self) -> None:
        self._pending.clear()
        self._roles = [Role.NOTICE]
        self._steps.clear()
        self._continued.clear()
        self._line_break_due = False
        self._follow = True
        self.trimmed_chars = 0
        self.thinking.clear()
        self._step_now, self._model_start = 0, None
        self.presentation = Presentation()
        self.clear()

    def role_of(self, block_number: int) -> Role:
        roles = self._roles
        return roles[block_number] if 0 <= block_number < len(roles) else Role.MODEL

    def continues(self, block_number: int) -> bool:
        """Block ``block_number`` is the rest of a line split to keep blocks short."""
        return block_number in self._continued

    def step_block(self, step: int) -> int | None:
        return self._steps.get(step)

    def last_step(self) -> int:
        return max(self._steps, default=0)

    def scroll_to_step(self, step: int) -> bool:
        """Put step ``step``'s separator at the top of the view; False if there is none yet."""
        self.flush_all()
        block_number = self._steps.get(step)
        if block_number is None:
            return False
        block = self.document().findBlockByNumber(block_number)
        self._follow = False
        bar = self.verticalScrollBar()
        bar.setValue(min(block.firstLineNumber(), bar.maximum()))
        return True

    def set_show_thinking(self, on: bool) -> None:
        """Unfold every thinking region and keep new ones open (True), or fold them (False)."""
        self.thinking.set_show_all(on)  # the layout repaints what it was told changed

    def toggle_thinking(self, header_block: int) -> bool:
        """Fold or unfold the finished thinking region headed by block ``header_block``."""
        return self.thinking.toggle(header_block)

    def plain_text(self) -> str:
        """The trace as written: long lines split for speed are joined again."""
        self.flush_all()
        parts: list[str] = []
        block = self.document().firstBlock()
        while block.isValid():
            if parts and block.blockNumber() not in self._continued:
                parts.append("\n")
            parts.append(block.text())
            block = block.next()
        return "".join(parts)

    # ---- writing ----------------------------------------------------------------------

    def flush_all(self) -> None:
        """Write the whole queue now (a finished run, a scroll to a step), frame budget aside."""
        while self._pending:
            self.flush()

    def flush(self) -> None:
        """Write everything queued in one edit: one layout and highlight pass per frame."""
        if self._pending:
            self._write_frame()
        self.thinking.show_live()  # its seconds and tokens: once a frame at most

    def _write_frame(self) -> None:
        pending, self._pending = take_frame(self._pending, MAX_FRAME_CHARS)
        if self._pending:
            frame_clock().schedule(self.flush, Phase.DRAW)
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.beginEditBlock()
        for role, text in merged(pending):
            self._insert(cursor, role, text)
        cursor.endEditBlock()
        self.thinking.draw_ended()
        if self._follow:
            # Only while following the end: a reader scrolled up keeps the text under them.
            if self.document().characterCount() > MAX_TRACE_CHARS:
                self._trim_top(self.document().characterCount() - TRIM_TO_CHARS)
            bar = self.verticalScrollBar()
            bar.setValue(bar.maximum())

    def _insert(self, cursor: QTextCursor, role: Role, text: str) -> None:
        live = self.thinking.live
        if role is END_OF_THINKING:
            self.thinking.end_live(settle=True)
            return
        if role is not Role.THINKING and live is not None:
            self.thinking.end_live()
            live = None
        elif role is Role.THINKING:
            live = live or self._begin_thinking(cursor)
        last = self._roles[-1]
        if (role is Role.MODEL and last in (Role.THINKING, Role.THINKING_HEADER)) or (
            role is Role.THINKING and last is Role.THINKING_HEADER
        ):
            text = text.lstrip("\n")  # no blank lines at the top of a region, or under it
            if not text:
                return
        whole_lines = role not in STREAMED
        block = cursor.block()
        current = self._roles[-1]
        same_run = current is role
        # An empty last block takes the new role, unless it is a (maybe folded) region's.
        if block.length() <= 1 and (current is role or current is not Role.THINKING):
            self._roles[-1] = role
        elif self._line_break_due or not same_run:
            self._new_block(cursor, role)
        if role is Role.STEP:
            self._step_now = _step_number(text)
            self._steps[self._step_now] = cursor.blockNumber()
            self._model_start = None
        elif role is Role.MODEL and self._model_start is None:
            self._model_start, self._model_since = cursor.blockNumber(), time.perf_counter()
        lines = text.split("\n")
        for i, line in enumerate(lines):
            if i > 0:
                if i == len(lines) - 1 and not line:
                    break  # a trailing newline: the next insert decides the new block's role
                self._new_block(cursor, role)
            self._insert_line_piece(cursor, line, role)
        self._line_break_due = whole_lines or text.endswith("\n")
        if live is not None:
            live.chars, live.end = live.chars + len(text), cursor.blockNumber()

    def _insert_line_piece(self, cursor: QTextCursor, piece: str, role: Role) -> None:
        """Insert within the current line, splitting it into blocks of at most MAX_BLOCK_CHARS."""
        while piece:
            room = MAX_BLOCK_CHARS - (cursor.block().length() - 1)
            if room <= 0:
                self._continued.add(cursor.blockNumber() + 1)
                self._new_block(cursor, role)
                continue
            cursor.insertText(piece[:room])
            piece = piece[room:]

    def _new_block(self, cursor: QTextCursor, role: Role) -> None:
        # The role must be known before the block exists: highlighting runs on insertion.
        self._roles.append(role)
        cursor.insertBlock()

    # ---- thinking -----------------------------------------------------------------------

    def _begin_thinking(self, cursor: QTextCursor) -> Region:
        """Write a live region's header line; its text goes in the blocks after it."""
        if cursor.block().length() > 1:
            self._new_block(cursor, Role.THINKING_HEADER)
        else:
            self._roles[-1] = Role.THINKING_HEADER
        self._line_break_due = True
        return self.thinking.begin(cursor, self._step_now)

    def _end_thinking_later(self) -> None:
        """In queue order: the thinking ends after the text queued before this."""
        self._pending.append((END_OF_THINKING, ""))
        frame_clock().schedule(self.flush, Phase.DRAW)

    def _rewrite_model_text(self, role: Role, text: str) -> None:
        """This step's model text was thinking, or the answer (native): rewrite it as ``role``."""
        while self._pending and self._pending[-1][0] is Role.MODEL:
            self._pending.pop()  # not written yet: never will be
        self.flush_all()
        first = self._model_start
        if first is not None:
            if role is Role.THINKING:
                self.thinking.next_since = self._model_since
            self._remove_blocks(first, self.document().blockCount())
            self._line_break_due = first > 0
        self.append_text(role, text)

    def _rewrite_step_header(self, line: str) -> None:
        """The context meter: the step's separator line now says its prompt's size."""
        self.flush_all()
        block_number = self._steps.get(_step_number(line))
        if block_number is None:  # dropped from the top with the text under it
            return
        cursor = QTextCursor(self.document().findBlockByNumber(block_number))
        cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(line)

    # ---- following the end ------------------------------------------------------------

    def _on_scrollbar_value_changed(self, value: int) -> None:
        # Follow the end unless the user scrolled up; scrolling back down resumes following.
        self._follow = value >= self.verticalScrollBar().maximum() - 2

    def _on_scrollbar_range_changed(self, _low: int, high: int) -> None:
        if self._follow:
            self.verticalScrollBar().setValue(high)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # the system switched light/dark
            self.highlighter.set_palette(self.palette())

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        super().mouseReleaseEvent(event)
        if event.type() == QEvent.Type.MouseButtonRelease:
            block = self.cursorForPosition(event.position().toPoint()).block()
            role = self.role_of(block.blockNumber())
            if role is Role.STEP:
                self.stepClicked.emit(_step_number(block.text()))
            elif role is Role.THINKING_HEADER and not self.textCursor().hasSelection():
                self.toggle_thinking(block.blockNumber())


def _step_number(separator: str) -> int:
    """The step a ``── Step n …`` line heads (the meter's figures after it are not it)."""
    found = re.search(r"Step (\d+)", separator)
    return int(found.group(1)) if found else 0
