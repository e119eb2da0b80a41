"""Trace diff: two runs side by side, step beside step, the first step where they part marked.

What is compared and each step's lines are core/results/trace_diff.py's (the trace's own
lines, with their roles); this only lays them out and colours them with the window's role
table (``highlighter.formats_for``), the same the trace view draws with. Each side is plain
text in a read-only editor, one line a block and no wrapping, with blank lines padding the
shorter step, so a step's lines stand level with the other run's and the two scroll as one.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QFontDatabase, QTextBlockFormat, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.core.results.presentation import Role
from sandbox_app.core.results.trace_diff import AlignedStep, Line, TraceDiff, diff_runs
from sandbox_app.core.running.records import RunRecord
from sandbox_app.ui.common.plain import plain_label
from sandbox_app.ui.trace.highlighter import formats_for

SAME = (
    "No difference: the same actions, inputs, observations and answer "
    "(thinking, wording and timing aside)."
)
MARK = "▶ First difference: "
NOT_REACHED: Line = ("(this run never reached this step)", Role.NOTICE)
Run = tuple[str, RunRecord]  # a title (a lane's name, a run picker's entry) and its record


class TraceDiffDialog(QDialog):
    """Pick two of ``runs`` (``left`` and ``right`` first) and see them side by side."""

    def __init__(
        self, runs: Sequence[Run], left: int, right: int, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Trace diff")
        self.resize(1200, 720)
        self.runs = list(runs)
        self.diff: TraceDiff | None = None
        self.marked_block: int | None = None  # where the first differing step starts
        self.pickers = (QComboBox(), QComboBox())
        self.sides = (_side(), _side())
        self.summary = plain_label()
        self.summary.setWordWrap(True)
        font = self.summary.font()
        font.setBold(True)
        self.summary.setFont(font)
        grid = QGridLayout()
        for column, (picker, side, index) in enumerate(
            zip(self.pickers, self.sides, (left, right), strict=True)
        ):
            picker.addItems([title for title, _ in self.runs])  # item views draw plain text
            picker.setCurrentIndex(index)
            picker.setToolTip("Which run this side shows")
            picker.currentIndexChanged.connect(self.show_diff)
            grid.addWidget(picker, 0, column)
            grid.addWidget(side, 1, column)
        grid.setRowStretch(1, 1)
        # One scroll for both: a step stays level with the other run's, a column with its own.
        for one, other in self.sides, self.sides[::-1]:
            one.verticalScrollBar().valueChanged.connect(other.verticalScrollBar().setValue)
            one.horizontalScrollBar().valueChanged.connect(other.horizontalScrollBar().setValue)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addLayout(grid, 1)
        layout.addWidget(buttons)
        self.show_diff()

    def show_diff(self) -> None:
        """Compare the two runs the pickers name and draw them."""
        left, right = (self.runs[p.currentIndex()][1] for p in self.pickers)
        self.diff = diff = diff_runs(left, right)
        first = diff.first
        self.summary.setText(SAME if first is None else first.describe())
        columns: tuple[list[Line], list[Line]] = ([], [])
        marked: list[int] = []  # the line numbers of the first differing step, on both sides
        for aligned in diff.steps:
            mark = first.what if first is not None and aligned.step == first.step else None
            start = len(columns[0])
            _add_level(columns, _step_lines(aligned, mark))
            if mark is not None:
                marked = list(range(start, len(columns[0])))
        _add_level(
            columns, ([("", Role.MODEL), *diff.left_end], [("", Role.MODEL), *diff.right_end])
        )
        if first is not None and first.step == 0:  # the runs part only in how they ended
            end = len(columns[0]) - len(diff.left_end) - 1
            marked = list(range(end, len(columns[0])))
        formats = formats_for(self.palette())
        tint = QColor(self.palette().highlight().color())
        tint.setAlpha(60)
        for side, lines in zip(self.sides, columns, strict=True):
            _draw(side, lines, formats, set(marked), tint)
        self.marked_block = marked[0] if marked else None
        if self.marked_block is not None:
            block = self.sides[0].document().findBlockByNumber(self.marked_block)
            self.sides[0].verticalScrollBar().setValue(block.firstLineNumber())

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        drawn = getattr(self, "diff", None) is not None  # not while it is being made
        if drawn and event.type() == QEvent.Type.PaletteChange:  # light/dark: new formats
            self.show_diff()

    def side_text(self, side: int) -> str:
        """What one side shows, as text (0: left, 1: right)."""
        return self.sides[side].toPlainText()


def open_diff(
    runs: Sequence[Run], left: int, right: int, parent: QWidget | None = None
) -> TraceDiffDialog:
    """Show the diff of ``runs[left]`` and ``runs[right]``; it closes with ``parent``."""
    dialog = TraceDiffDialog(runs, left, right, parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog


def _side() -> QPlainTextEdit:
    side = QPlainTextEdit()
    side.setReadOnly(True)
    side.setUndoRedoEnabled(False)
    side.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)  # a line a row: both sides level
    side.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    return side


def _step_lines(aligned: AlignedStep, mark: str | None) -> tuple[list[Line], list[Line]]:
    """Each side's lines of one step; the first difference's step under a line naming it."""
    heading = [(MARK + mark, Role.ERROR)] if mark is not None else []
    out: list[list[Line]] = []
    for view in (aligned.left, aligned.right):
        lines = list(view.lines) if view is not None else [_separator(aligned.step), NOT_REACHED]
        out.append([*heading, *lines])
    return out[0], out[1]


def _separator(step: int) -> Line:
    return (f"── Step {step} ──", Role.STEP)


def _add_level(
    columns: tuple[list[Line], list[Line]], lines: tuple[list[Line], list[Line]]
) -> None:
    """Add each side's lines, the shorter padded with blank ones: the next starts level."""
    height = max(len(lines[0]), len(lines[1]))
    for column, added in zip(columns, lines, strict=True):
        column.extend(added)
        column.extend([("", Role.MODEL)] * (height - len(added)))


def _draw(
    side: QPlainTextEdit,
    lines: list[Line],
    formats: dict[Role, QTextCharFormat],
    marked: set[int],
    tint: QColor,
) -> None:
    side.clear()
    cursor = QTextCursor(side.document())
    cursor.beginEditBlock()
    for number, (text, role) in enumerate(lines):
        if number:
            cursor.insertBlock()
        if number in marked:  # the step that parts, tinted across the whole line
            block_format = QTextBlockFormat()
            block_format.setBackground(tint)
            cursor.setBlockFormat(block_format)
        else:
            cursor.setBlockFormat(QTextBlockFormat())
        cursor.insertText(text, formats[role])  # text, never markup
    cursor.endEditBlock()
