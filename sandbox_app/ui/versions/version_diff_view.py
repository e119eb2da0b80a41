"""Two prompt versions' differences drawn as text: core/scenarios/prompt_diff.py's result, the
changes that are not words named a line each, then each changed text (the template, a tool's
description or input hint) with its removed words struck through in the theme's error colour
and its added words underlined in its answer colour.

Every word is inserted as plain text with a character format, never as HTML: a template or a
tool description that holds markup shows as the characters it is.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtGui import QColor, QFont, QFontDatabase, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from sandbox_app.core.scenarios.prompt_diff import Op, PartDiff, VersionDiff
from sandbox_app.ui.common.theme import styles_for


class VersionDiffView(QPlainTextEdit):
    """Read-only; :meth:`show_diff` draws one diff, :meth:`show_note` a line of the app's."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setPlaceholderText(
            "Select two versions and press Diff (or one: its difference from the editor)."
        )
        self._shown: tuple[str, VersionDiff] | None = None

    def show_diff(self, title: str, diff: VersionDiff) -> None:
        self._shown = (title, diff)
        self.clear()
        cursor = QTextCursor(self.document())
        bold = QTextCharFormat()
        bold.setFontWeight(QFont.Weight.Bold)
        plain = QTextCharFormat()
        cursor.insertText(title, bold)
        if diff.same:
            cursor.insertText("\nNo difference: the same words, dialect, tools and mode.", plain)
        for line in diff.named:
            cursor.insertText("\n• ", plain)
            cursor.insertText(line, bold)
        first_change = -1
        for part in diff.changed_parts:
            at = self._part(cursor, part, bold)
            first_change = at if first_change < 0 else first_change
        self.moveCursor(QTextCursor.MoveOperation.Start)
        if first_change >= 0:  # a long template: its first change in view, not its top
            shown = QTextCursor(self.document())
            shown.setPosition(first_change)
            self.setTextCursor(shown)
            self.ensureCursorVisible()

    def retitle(self, title: str) -> None:
        """The header with the versions' names now (one named since): the diff under it and
        where it is scrolled stay."""
        if self._shown is None or self._shown[0] == title:
            return
        self._shown = (title, self._shown[1])
        cursor = QTextCursor(self.document().firstBlock())
        cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
        bold = QTextCharFormat()
        bold.setFontWeight(QFont.Weight.Bold)
        cursor.insertText(title, bold)

    def _part(self, cursor: QTextCursor, part: PartDiff, bold: QTextCharFormat) -> int:
        """Draws ``part``; returns where its first change starts."""
        cursor.insertText(f"\n\n{part.label}\n", bold)
        formats = self._formats()
        first, last = -1, ""
        for piece in part.pieces:
            if piece.op != "same" and first < 0:
                first = cursor.position()
            # A removed word right before an added one (or the other way) would read as one
            # word ("AnswerSearch"): a plain space between them, in neither's style.
            turned = {last, piece.op} == {"removed", "added"}
            if turned and piece.text[:1] > " ":
                cursor.insertText(" ", formats["same"])
            cursor.insertText(piece.text, formats[piece.op])
            last = piece.op if not piece.text[-1:].isspace() else ""
        return first

    def _formats(self) -> dict[Op, QTextCharFormat]:
        styles = styles_for(self.palette())
        removed = QTextCharFormat()
        removed.setForeground(QColor(styles["error"].color))
        removed.setFontStrikeOut(True)
        added = QTextCharFormat()
        added.setForeground(QColor(styles["answer"].color))
        added.setFontUnderline(True)  # not by colour alone
        return {"same": QTextCharFormat(), "removed": removed, "added": added}

    def show_note(self, text: str) -> None:
        self._shown = None
        self.setPlainText(text)

    def marked(self, op: Op) -> list[str]:
        """The runs of text drawn as ``op`` ("removed": struck through; "added":
        underlined), in order: what a reader sees marked."""
        found: list[str] = []
        block = self.document().begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                fragment = it.fragment()
                fmt = fragment.charFormat()
                kind = "removed" if fmt.fontStrikeOut() else "added" if fmt.fontUnderline() else ""
                if kind == op:
                    found.append(fragment.text())
                it += 1
            block = block.next()
        return found

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._shown is not None:
            self.show_diff(*self._shown)  # the system switched light/dark: its colours
