"""The live trace pane: one widget for the main view and every compare lane.

Tokens can arrive at thousands per second, so text is buffered and written at most once per
frame (the window's frame clock, ui/frames.py) through a cursor at the end of the document,
never by resetting the whole text. Each block has one role, recorded as it is inserted, and
very long model lines are split into blocks of at most ``MAX_BLOCK_CHARS`` so re-highlighting
and layout stay cheap on every append.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Signal
from PySide6.QtGui import QFontDatabase, QMouseEvent, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from sandbox_app.core.events import (
    Event,
    FabricationCut,
    FormatError,
    Notice,
    Observation,
    RunFinished,
    StepStarted,
    TokenDelta,
)
from sandbox_app.ui.frames import Phase, frame_clock
from sandbox_app.ui.highlighter import Role, TraceHighlighter

MAX_BLOCK_CHARS = 1000
# What a pane keeps on screen. Qt's text document and its layout cost ~100 bytes a character,
# so four lanes of 100,000 tokens would hold ~45 MB each; past this, whole blocks are dropped
# from the top (the run record, and so Copy trace and every export, keeps the whole run).
MAX_TRACE_CHARS = 100_000
TRIM_TO_CHARS = 75_000
# At most this much text is written per frame; a backlog (a client catching up) is spread
# over the next frames instead of freezing the window for one long write.
MAX_FRAME_CHARS = 12_000
CUT_NOTE = "✂ The model wrote its own observation: cut, never sent back, never used."


class TraceView(QPlainTextEdit):
    """Read-only, append-only, colour-by-author view of a run.

    Signals:
        stepClicked(int): the user clicked a ``── Step n ──`` separator.
    """

    stepClicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)  # an undo stack of every token costs memory and time
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self._roles: list[Role] = [Role.NOTICE]
        self._pending: list[tuple[Role, str]] = []
        self._steps: dict[int, int] = {}  # step number → block number of its separator
        self._continued: set[int] = set()  # blocks that continue a split long line
        self._line_break_due = False  # the last block holds a whole-line role: start a new one
        self._follow = True
        self.trimmed_chars = 0  # dropped from the top to bound memory (see MAX_TRACE_CHARS)
        self.highlighter = TraceHighlighter(self.document(), self.palette(), self.role_of)
        self.verticalScrollBar().valueChanged.connect(self._on_scrollbar_value_changed)

    # ---- what callers use -------------------------------------------------------------

    def show_event(self, event: Event) -> None:
        """Draw one engine event."""
        if isinstance(event, TokenDelta):
            self.append_text(Role.MODEL, event.text)
        elif isinstance(event, StepStarted):
            self.add_step(event.step)
        elif isinstance(event, Observation):
            self.append_line(Role.ERROR if event.error else Role.OBSERVATION, event.message)
        elif isinstance(event, FabricationCut):
            self.append_line(Role.DROPPED, event.text.rstrip())
            self.append_line(Role.NOTICE, CUT_NOTE)
        elif isinstance(event, FormatError):
            self.append_line(Role.ERROR, event.message)
        elif isinstance(event, Notice):
            self.append_line(Role.NOTICE, event.text)
        elif isinstance(event, RunFinished) and event.status != "answered":
            self.append_line(Role.ERROR, f"{event.status}: {event.reason}")

    def append_text(self, role: Role, text: str) -> None:
        """Queue streamed text; it reaches the document on the next frame."""
        if text:
            self._pending.append((role, text))
            frame_clock().schedule(self.flush, Phase.DRAW)

    def append_line(self, role: Role, text: str) -> None:
        """Queue a whole line that belongs to ``role`` (an observation, a notice…)."""
        self.append_text(role, text + "\n")

    def add_step(self, step: int) -> None:
        self.append_line(Role.STEP, f"── Step {step} ──")

    def clear_trace(self) -> None:
        self._pending.clear()
        self._roles = [Role.NOTICE]
        self._steps.clear()
        self._continued.clear()
        self._line_break_due = False
        self._follow = True
        self.trimmed_chars = 0
        self.clear()

    def role_of(self, block_number: int) -> Role:
        roles = self._roles
        return roles[block_number] if 0 <= block_number < len(roles) else Role.MODEL

    def step_block(self, step: int) -> int | None:
        return self._steps.get(step)

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
        if not self._pending:
            return
        pending, self._pending = _take_frame(self._pending, MAX_FRAME_CHARS)
        if self._pending:
            frame_clock().schedule(self.flush, Phase.DRAW)
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.beginEditBlock()
        for role, text in _merged(pending):
            self._insert(cursor, role, text)
        cursor.endEditBlock()
        if self._follow:
            # Only while following the end: a reader scrolled up keeps the text under them.
            if self.document().characterCount() > MAX_TRACE_CHARS:
                self._trim_top(self.document().characterCount() - TRIM_TO_CHARS)
            bar = self.verticalScrollBar()
            bar.setValue(bar.maximum())

    def _trim_top(self, chars: int) -> None:
        """Drop whole blocks from the top, at least ``chars`` characters, in one edit."""
        document = self.document()
        block, removed, count = document.firstBlock(), 0, 0
        while removed < chars and block.isValid() and block != document.lastBlock():
            removed += block.length()
            count += 1
            block = block.next()
        # Block numbers move up by ``count``: the roles, steps and continuations with them,
        # before the edit, since the highlighter asks for roles as the document changes.
        self._roles = self._roles[count:]
        self._steps = {step: b - count for step, b in self._steps.items() if b >= count}
        self._continued = {b - count for b in self._continued if b >= count}
        self.trimmed_chars += removed
        cursor = QTextCursor(document)
        cursor.setPosition(block.position(), QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()

    def _insert(self, cursor: QTextCursor, role: Role, text: str) -> None:
        whole_lines = role is not Role.MODEL
        block = cursor.block()
        current = self._roles[-1]
        same_run = current in (Role.MODEL, Role.MODEL_CONTINUED) and role is Role.MODEL
        if block.length() > 1 and (self._line_break_due or not same_run):
            self._new_block(cursor, role)
        elif block.length() <= 1:
            self._roles[-1] = role
        if role is Role.STEP:
            self._steps[_step_number(text)] = cursor.blockNumber()
        lines = text.split("\n")
        for i, line in enumerate(lines):
            if i > 0:
                if i == len(lines) - 1 and not line:
                    break  # a trailing newline: the next insert decides the new block's role
                self._new_block(cursor, role)
            self._insert_line_piece(cursor, line, role)
        self._line_break_due = whole_lines or text.endswith("\n")

    def _insert_line_piece(self, cursor: QTextCursor, piece: str, role: Role) -> None:
        """Insert within the current line, splitting it into blocks of at most MAX_BLOCK_CHARS."""
        continued = Role.MODEL_CONTINUED if role is Role.MODEL else role
        while piece:
            room = MAX_BLOCK_CHARS - (cursor.block().length() - 1)
            if room <= 0:
                self._continued.add(cursor.blockNumber() + 1)
                self._new_block(cursor, continued)
                continue
            cursor.insertText(piece[:room])
            piece = piece[room:]

    def _new_block(self, cursor: QTextCursor, role: Role) -> None:
        # The role must be known before the block exists: highlighting runs on insertion.
        self._roles.append(role)
        cursor.insertBlock()

    # ---- following the end ------------------------------------------------------------

    def _on_scrollbar_value_changed(self, value: int) -> None:
        # Follow the end unless the user scrolled up; scrolling back down resumes following.
        self._follow = value >= self.verticalScrollBar().maximum() - 2

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # the system switched light/dark
            self.highlighter.set_palette(self.palette())

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        super().mouseReleaseEvent(event)
        if event.type() == QEvent.Type.MouseButtonRelease:
            block = self.cursorForPosition(event.position().toPoint()).block()
            if self.role_of(block.blockNumber()) is Role.STEP:
                self.stepClicked.emit(_step_number(block.text()))


def _take_frame(
    pending: list[tuple[Role, str]], budget: int
) -> tuple[list[tuple[Role, str]], list[tuple[Role, str]]]:
    """Split the queue into this frame's share (about ``budget`` characters) and the rest."""
    taken = 0
    for i, (_, text) in enumerate(pending):
        taken += len(text)
        if taken >= budget:
            return pending[: i + 1], pending[i + 1 :]
    return pending, []


def _merged(pending: list[tuple[Role, str]]) -> list[tuple[Role, str]]:
    """Join consecutive pieces of streamed model text into one insert."""
    out: list[tuple[Role, str]] = []
    for role, text in pending:
        if out and role is Role.MODEL and out[-1][0] is Role.MODEL:
            out[-1] = (role, out[-1][1] + text)
        else:
            out.append((role, text))
    return out


def _step_number(separator: str) -> int:
    digits = "".join(ch for ch in separator if ch.isdigit())
    return int(digits) if digits else 0
