"""A long trace as rows: what a view that lays out only the rows on screen draws.

A trace of 30,000 steps is some 12 million characters; a text document holds ~66 bytes of
layout and formats a character (850 MB measured for that trace in a QPlainTextEdit), so a
long trace is kept here instead, as rows of at most :data:`ROW_CHARS` characters, each with
the role that styles it (core/results/presentation.py's, a model line by its label:
``LineStyles``), and drawn by a list view that asks only for the rows it shows
(ui/trace/trace_list.py). The rows are made from the pieces Copy trace writes
(trace_text.PlainText without marks), so they say what the exports say.

The rows' text is kept in blocks (:class:`RowTexts`): a block of rows is one string with its
rows' offsets, not a string a row (49 bytes of object each, ~10 MB of a 30,000-step trace's
120,000 rows).

One piece of text over :data:`FOLD_CHARS` (a 10 MB tool observation, a 5 MB reply) is never
made into rows whole: its first page is, then one fold row saying what it is and its size
("observation 10.0 MB — show more"); each :meth:`TraceRows.show_more` adds the next
:data:`PAGE_CHARS`. The text itself stays whole in its event, so every export keeps it whole.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from sandbox_app.core.results.presentation import LineStyles, Piece, Role
from sandbox_app.core.results.trace_text import TraceText
from sandbox_app.core.running.events import Event

ROW_CHARS = 160  # a line longer than this goes on over the rows after it
BLOCK_ROWS = 256  # rows joined into one block
FOLD_CHARS = 64 * 1024  # a piece longer than this is folded
PAGE_CHARS = 64 * 1024  # what Show more adds
_ROLES = tuple(Role)
_INDEX = {role: i for i, role in enumerate(_ROLES)}
_WHAT = {Role.OBSERVATION: "observation", Role.ERROR: "observation", Role.MODEL: "reply"}


def size_words(text: str) -> str:
    """``10.0 MB``: the text's size as UTF-8, as a file of it would be."""
    return _size(len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass")))


def _size(size: int) -> str:
    for unit, scale in (("MB", 1e6), ("KB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} bytes"


@dataclass
class Fold:
    """A piece shown a page at a time: its role, its whole text, how much is shown."""

    role: Role
    text: str
    shown: int

    def line(self) -> str:
        what = _WHAT.get(self.role, "text")
        return f"⋯ {what} {size_words(self.text)} — show more ({_size(self.shown)} shown)"


class RowTexts:
    """Rows of text, as a list of them reads and changes (an index, the last one, a slice
    replaced), held as blocks: the rows before the last :data:`BLOCK_ROWS` to
    ``2 * BLOCK_ROWS`` are joined a block at a time, each with its rows' offsets. A change
    inside a block (a fold's page shown) makes that block again."""

    def __init__(self) -> None:
        self._blocks: list[str] = []
        self._ends: list[array[int]] = []  # each block's rows' end offsets
        self._firsts: list[int] = []  # each block's first row
        self._sealed = 0  # rows in blocks
        self._tail: list[str] = []  # the rows after them, as strings

    def __len__(self) -> int:
        return self._sealed + len(self._tail)

    def __getitem__(self, row: int) -> str:
        row = row + len(self) if row < 0 else row
        if row >= self._sealed:
            return self._tail[row - self._sealed]
        block = bisect_right(self._firsts, row) - 1
        at, ends = row - self._firsts[block], self._ends[block]
        return self._blocks[block][ends[at - 1] if at else 0 : ends[at]]

    def rows(self, start: int, stop: int) -> Iterator[str]:
        for row in range(start, min(stop, len(self))):
            yield self[row]

    def append(self, text: str) -> None:
        self._tail.append(text)
        if len(self._tail) >= 2 * BLOCK_ROWS:  # the last rows stay strings: a reply goes on
            self._seal(self._tail[:BLOCK_ROWS])
            del self._tail[:BLOCK_ROWS]

    def __setitem__(self, row: int, text: str) -> None:
        row = row + len(self) if row < 0 else row
        self.replace(row, row + 1, [text])

    def replace(self, start: int, stop: int, texts: list[str]) -> None:
        """Rows ``start`` to ``stop`` (within one block, or the last rows) become ``texts``."""
        if start >= self._sealed:
            self._tail[start - self._sealed : stop - self._sealed] = texts
            return
        block = bisect_right(self._firsts, start) - 1
        first = self._firsts[block]
        rows = list(self.rows(first, first + len(self._ends[block])))
        rows[start - first : stop - first] = texts
        after = (self._blocks[block + 1 :], self._ends[block + 1 :])
        del self._blocks[block:], self._ends[block:], self._firsts[block:]
        self._sealed = first
        for i in range(0, len(rows), BLOCK_ROWS):
            self._seal(rows[i : i + BLOCK_ROWS])
        for text, ends in zip(*after, strict=True):
            self._blocks.append(text)
            self._ends.append(ends)
            self._firsts.append(self._sealed)
            self._sealed += len(ends)

    def _seal(self, rows: list[str]) -> None:
        ends = array("I")
        end = 0
        for text in rows:
            end += len(text)
            ends.append(end)
        self._blocks.append("".join(rows))
        self._ends.append(ends)
        self._firsts.append(self._sealed)
        self._sealed += len(rows)


class TraceRows:
    """Events in, rows out. ``count`` rows; :meth:`text` and :meth:`role` of row ``i``;
    :meth:`step_row` where step k's separator is; :meth:`find` the rows holding a text."""

    def __init__(self) -> None:
        self._trace = TraceText(marks=False)
        self._text = RowTexts()
        self._roles = array("B")
        self._steps: dict[int, int] = {}  # step → its separator's row
        self.folds: dict[int, Fold] = {}  # fold row → what it folds
        self._styles = LineStyles()
        self._line_open = False  # the last row's line may go on with the next piece
        self.changed_last = False  # the last add changed the row that was last before it

    @property
    def count(self) -> int:
        return len(self._text)

    def text(self, row: int) -> str:
        return self._text[row]

    def role(self, row: int) -> Role:
        return _ROLES[self._roles[row]]

    def step_row(self, step: int) -> int | None:
        return self._steps.get(step)

    @property
    def steps(self) -> int:
        return len(self._steps)

    def add(self, events: list[Event]) -> int:
        """Add the rows these events write; how many rows there are now."""
        self.changed_last = False
        for event in events:
            for piece in self._trace.written(event):
                self._piece(piece)
        return len(self._text)

    def _piece(self, piece: Piece) -> None:
        role, text = piece.role, piece.text
        if len(text) > FOLD_CHARS:
            self._lines(role, text[:PAGE_CHARS])
            if self._line_open:
                self._line_open = False  # the fold row starts a line of its own
            fold = Fold(role, text, PAGE_CHARS)
            self.folds[len(self._text)] = fold
            self._append(role, fold.line())
            return
        if role is Role.STEP:
            self._steps[_step_of(text)] = len(self._text)  # a change of role began a line
        self._lines(role, text)

    def _lines(self, role: Role, text: str) -> None:
        lines = text.split("\n")
        for i, line in enumerate(lines):
            if i == len(lines) - 1 and not line:
                self._line_open = False  # a trailing newline: the next piece starts a line
                break
            if i == 0 and self._line_open and self._text:
                self._go_on(line)
            else:
                style = self._styles.of(role, line)
                for start in range(0, max(len(line), 1), ROW_CHARS):
                    self._append(style, line[start : start + ROW_CHARS])
            self._line_open = i == len(lines) - 1

    def _go_on(self, text: str) -> None:
        """Text that continues the last row's line (a streamed reply)."""
        last, role = self._text[-1], self._roles[-1]
        room = ROW_CHARS - len(last)
        self._text[-1] = last + text[:room]
        self.changed_last = True
        for start in range(room, len(text), ROW_CHARS):
            self._text.append(text[start : start + ROW_CHARS])
            self._roles.append(role)

    def _append(self, role: Role, text: str) -> None:
        self._text.append(text)
        self._roles.append(_INDEX[role])

    def show_more(self, row: int) -> int:
        """Show the next page of the text folded at ``row``; how many rows were added there
        (0: not a fold). The fold row stays under them until the whole text is shown."""
        fold = self.folds.pop(row, None)
        if fold is None:
            return 0
        page = fold.text[fold.shown : fold.shown + PAGE_CHARS]
        fold.shown += len(page)
        rows: list[str] = []
        styles: list[int] = []
        for line in page.split("\n"):
            for start in range(0, max(len(line), 1), ROW_CHARS):
                rows.append(line[start : start + ROW_CHARS])
                styles.append(_INDEX[fold.role])
        done = fold.shown >= len(fold.text)
        if done:  # the fold row becomes the last row of text
            self._text.replace(row, row + 1, rows)
            self._roles[row : row + 1] = array("B", styles)
            added = len(rows) - 1
        else:
            self._text.replace(row, row, rows)
            self._roles[row:row] = array("B", styles)
            added = len(rows)
            self._text[row + added] = fold.line()
        self._shift(row, added)
        if not done:
            self.folds[row + added] = fold
        return added

    def _shift(self, row: int, added: int) -> None:
        """Rows past ``row`` moved down by ``added``: the books with them."""
        self._steps = {s: r + added * (r > row) for s, r in self._steps.items()}
        self.folds = {r + added * (r > row): f for r, f in self.folds.items()}

    def find(self, needle: str, start: int, stop: int) -> list[int]:
        """The rows from ``start`` to ``stop`` holding ``needle`` (any case), one entry a
        match: a row with it twice is there twice. Searching is done a slice at a time by
        the caller, so that a long trace never blocks a frame."""
        wanted = needle.casefold()
        if not wanted:
            return []
        out: list[int] = []
        for row, text in enumerate(self._text.rows(start, stop), start):
            if wanted in text.casefold():
                out.extend([row] * text.casefold().count(wanted))
        return out


def _step_of(separator: str) -> int:
    """``── Step 12 ──`` → 12."""
    words = separator.split()
    return int(words[2]) if len(words) > 2 and words[2].isdigit() else 0


__all__ = ["FOLD_CHARS", "PAGE_CHARS", "ROW_CHARS", "Fold", "RowTexts", "TraceRows", "size_words"]
