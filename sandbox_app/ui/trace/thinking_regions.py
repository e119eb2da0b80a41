"""The model's thinking in the trace: each stretch of it is a region under one header line.

A region is a header block and the blocks of thinking text after it. While the thinking
streams the region is open and its header counts up ("▾ Thinking… 3.2 s · ~410 tokens");
once the model moves on it folds to its header ("▸ Thought for 3.2 s · 410 tokens — click to
show"): its text blocks are hidden (``QTextBlock.setVisible``), which QPlainTextEdit lays
out as zero lines, so a folded region costs one line on screen and nothing to scroll past.
The trace (trace_view.py) owns the blocks; this keeps which of them form which region.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QTextCursor, QTextDocument

from sandbox_app.core.running.metrics import StepMetrics
from sandbox_app.ui.common.frames import Phase, frame_clock


@dataclass
class Region:
    step: int
    header: int  # block number of the header line
    end: int  # block number of its last text block (the header's while it has none)
    started: float  # perf_counter() at the first reasoning
    chars: int = 0
    seconds: float | None = None  # how long it thought; None while it is still thinking
    tokens: int | None = None  # from the step's metrics; None: estimated from the text
    estimated: bool = True
    folded: bool = False
    settled: bool = False  # the step's metrics have been looked at

    @property
    def live(self) -> bool:
        return self.seconds is None

    def header_text(self) -> str:
        # About four characters a token, as core/running/metrics.py estimates.
        estimate = (self.chars + 3) // 4
        if self.seconds is None:
            took = time.perf_counter() - self.started
            return f"▾ Thinking… {took:.1f} s · ~{estimate:,} tokens"
        tokens = estimate if self.tokens is None else self.tokens
        approx = "~" if self.estimated else ""
        arrow, verb = ("▸", "show") if self.folded else ("▾", "hide")
        return (
            f"{arrow} Thought for {self.seconds:.1f} s · {approx}{tokens:,} tokens"
            f" — click to {verb}"
        )


HEADER_TICK_MS = 250  # a live header counts its seconds up even while no text comes
HEADER_REDRAW_S = 0.1  # and is redrawn at most this often (its numbers, not every token)


class ThinkingRegions(QObject):
    """The regions of one trace document, in document order; only the last can be live.

    While a region is live, the trace's ``flush`` is scheduled on the frame clock every
    HEADER_TICK_MS; it redraws the live header (``show_live``), so at most once a frame.
    """

    def __init__(self, document: QTextDocument, flush: Callable[[], None]) -> None:
        super().__init__(document)
        self._document = document
        self.regions: list[Region] = []
        self.metrics: dict[int, StepMetrics] = {}  # by step, as StepFinished brings them
        self.show_all = False  # unfold every region, and keep new ones open (View menu)
        self.next_since: float | None = None  # when the next region's thinking really began
        # Ended in the trace's edit block, drawn after it (``draw_ended``): a layout told of
        # changed blocks mid-edit would take the edit's own changes with it, unhighlighted.
        self._ended: list[Region] = []
        self._settled: list[Region] = []
        self._drawn_at = 0.0  # when the live header was last written
        self._tick = QTimer(self)
        self._tick.setInterval(HEADER_TICK_MS)
        self._tick.timeout.connect(lambda: frame_clock().schedule(flush, Phase.DRAW))

    @property
    def live(self) -> Region | None:
        last = self.regions[-1] if self.regions else None
        return last if last is not None and last.live else None

    def clear(self) -> None:
        self.regions.clear()
        self.metrics.clear()
        self.next_since = None
        self._ended.clear()
        self._settled.clear()
        self._tick.stop()

    def begin(self, cursor: QTextCursor, step: int) -> Region:
        """A live region whose header line is written at ``cursor`` (an empty header block)."""
        since, self.next_since = self.next_since or time.perf_counter(), None
        region = Region(step, cursor.blockNumber(), cursor.blockNumber(), since)
        self.regions.append(region)
        cursor.insertText(region.header_text())
        self._tick.start()
        return region

    def show_live(self) -> None:
        """Redraw the live region's header if it is HEADER_REDRAW_S old: O(1) a frame."""
        region, now = self.live, time.perf_counter()
        if region is not None and now - self._drawn_at >= HEADER_REDRAW_S:
            self._drawn_at = now
            self.show_header(region)

    def end_live(self, settle: bool = False) -> None:
        """The model moved on: the live region stops counting, to fold in ``draw_ended``.

        With ``settle`` (a step or run ended), ended regions get their step's metrics.
        """
        region = self.live
        if region is not None:
            self._tick.stop()
            region.seconds = time.perf_counter() - region.started
            self._ended.append(region)
        if settle:
            self.settle()

    def draw_ended(self) -> None:
        """Fold the regions that ended (unless show_all) and redraw their headers."""
        ended, settled, self._ended, self._settled = self._ended, self._settled, [], []
        for region in ended:
            if self.show_all:
                self.show_header(region)
            else:
                self.set_folded(region, True)
        for region in settled:
            self.show_header(region)

    def set_show_all(self, on: bool) -> None:
        self.show_all = on
        for region in self.regions:
            if not region.live:
                self.set_folded(region, not on)

    def toggle(self, header: int) -> bool:
        """Fold or unfold the ended region whose header is block ``header``."""
        region = self.at_header(header)
        if region is None or region.live:
            return False
        self.set_folded(region, not region.folded)
        return True

    def settle(self) -> None:
        """Give ended regions their step's measured numbers: exact when the server said so.

        A step's metrics count all its thinking, so only a step that thought once gets them.
        """
        per_step = Counter(r.step for r in self.regions)
        for region in self.regions:
            metrics = self.metrics.get(region.step)
            if metrics is None or region.live or region.settled:
                continue
            region.settled = True
            if per_step[region.step] == 1:
                if metrics.reasoning_tokens:
                    region.tokens = metrics.reasoning_tokens
                    region.estimated = metrics.reasoning_estimated
                if metrics.thinking_s is not None:
                    region.seconds = metrics.thinking_s
                self._settled.append(region)

    def at_header(self, block_number: int) -> Region | None:
        for region in self.regions:
            if region.header == block_number:
                return region
        return None

    def split_by(self, block_number: int) -> Region | None:
        """The region whose text the start of block ``block_number`` falls inside, if any."""
        for region in self.regions:
            if region.header < block_number <= region.end:
                return region
        return None

    def show_header(self, region: Region) -> None:
        """Write the header line, if it changed: one block, whatever the region's size."""
        text = region.header_text()
        block = self._document.findBlockByNumber(region.header)
        if block.text() != text:
            cursor = QTextCursor(block)
            cursor.movePosition(
                QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor
            )
            cursor.insertText(text)

    def set_folded(self, region: Region, folded: bool) -> None:
        """Hide or show the region's text blocks; the header line stays."""
        if region.folded == folded:
            return
        region.folded = folded
        first = self._document.findBlockByNumber(region.header + 1)
        block = first
        for _ in range(region.end - region.header):
            block.setVisible(not folded)
            block = block.next()
        if first.isValid():
            # The layout only looks at visibility when told the blocks changed.
            stop = block.position() if block.isValid() else self._document.characterCount()
            self._document.markContentsDirty(first.position(), stop - first.position())
        self.show_header(region)

    def remove_blocks(self, first: int, stop: int) -> None:
        """Blocks ``first`` to ``stop`` (exclusive) are going: drop or shift the regions."""
        count, kept = stop - first, []
        for region in self.regions:
            if first <= region.header < stop:
                continue
            if region.header >= stop:
                region.header -= count
                region.end -= count
            elif region.end >= stop:
                region.end -= count
            elif region.end >= first:
                region.end = first - 1
            kept.append(region)
        self.regions = kept
        if self.live is None:
            self._tick.stop()
