"""The written part of a trace: the role of each block, and the edits made to blocks already
written (dropping blocks from the top to bound memory, striking through what a step-through
edit replaced). :class:`~sandbox_app.ui.trace.trace_view.TraceView` writes; this keeps the books."""

from __future__ import annotations

from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from sandbox_app.core.results.presentation import Role
from sandbox_app.ui.trace.highlighter import TraceHighlighter
from sandbox_app.ui.trace.thinking_regions import ThinkingRegions


class TraceBlocks(QPlainTextEdit):
    """The block bookkeeping TraceView sets up in its constructor."""

    _roles: list[Role]
    _steps: dict[int, int]  # step number → block number of its separator
    _continued: set[int]  # blocks that continue a split long line
    _model_start: int | None  # first block of this step's model text
    _line_break_due: bool
    trimmed_chars: int
    thinking: ThinkingRegions
    highlighter: TraceHighlighter

    def _trim_top(self, chars: int) -> None:
        """Drop whole blocks from the top, at least ``chars`` characters."""
        document = self.document()
        block, removed, count = document.firstBlock(), 0, 0
        while removed < chars and block.isValid() and block != document.lastBlock():
            removed += block.length()
            count += 1
            block = block.next()
        region = self.thinking.split_by(count)
        if region is None:
            self.trimmed_chars += self._remove_blocks(0, count)
        else:  # the cut falls inside a thinking region: its header stays, to fold it by
            self.trimmed_chars += self._remove_blocks(region.header + 1, count)
            self.trimmed_chars += self._remove_blocks(0, region.header)

    def _remove_blocks(self, first: int, stop: int) -> int:
        """Remove blocks ``first`` to ``stop`` (exclusive, or to the end); the characters gone."""
        document = self.document()
        at_end, count = stop >= document.blockCount(), stop - first
        if count <= 0:
            return 0
        # Block numbers past ``stop`` move up by ``count``: the bookkeeping with them, before
        # the edit, since the highlighter asks for roles as the document changes.
        del self._roles[first:stop]
        self._roles = self._roles or [Role.NOTICE]
        gone = range(first, stop)
        self._steps = {s: b - count * (b >= stop) for s, b in self._steps.items() if b not in gone}
        # Less ``first``: what it continued is gone, so it starts a line.
        self._continued = {b - count * (b >= stop) for b in self._continued if b not in gone}
        self._continued.discard(first)
        self.thinking.remove_blocks(first, stop)
        if self._model_start is not None and self._model_start >= first:
            self._model_start = None if at_end else max(first, self._model_start - count)
        start = document.findBlockByNumber(first).position() - (at_end and first > 0)
        after = document.findBlockByNumber(stop)
        end = after.position() if after.isValid() else document.characterCount() - 1
        cursor = QTextCursor(document)  # at the end, from the end of the block before: it stays
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        return end - start

    def _strike_original(self, role: Role) -> None:
        """Step-through: the turn's model text (``role`` MODEL), or the observation just
        written, did not run as it stands: struck through (what ran comes next, in its own
        colour)."""
        roles, last = self._roles, len(self._roles) - 1
        if role is Role.MODEL:
            first = self._model_start if self._model_start is not None else last + 1
            struck = [b for b in range(first, last + 1) if roles[b] is Role.MODEL]
        else:
            struck = []
            while last >= 0 and roles[last] in (Role.OBSERVATION, Role.ERROR):
                struck.append(last)
                last -= 1
        for number in struck:
            roles[number] = Role.DROPPED
            self.highlighter.rehighlightBlock(self.document().findBlockByNumber(number))
        self._model_start = None  # what ran is this step's model text from here on
        self._line_break_due = True
