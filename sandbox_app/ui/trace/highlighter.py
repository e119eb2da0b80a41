"""Colour ReAct text: labels in model text, and whole lines by who wrote them in the trace.

``LabelHighlighter`` colours a line by its ReAct label (Thought / Action / Answer), carrying the
label to continuation lines; the prompt editor uses it as it is. ``TraceHighlighter`` asks the
trace which role each block has (model text, observation, step separator, …) and only applies
label rules to model text, so an observation that says "Thought:" stays an observation.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QPalette, QSyntaxHighlighter, QTextCharFormat, QTextDocument

from sandbox_app.core.react_format.dialects import LABEL_ROLES, label_role
from sandbox_app.core.results.presentation import LABEL_STYLES, Role
from sandbox_app.ui.common.theme import styles_for

__all__ = ["PLAIN_ROLES", "LabelHighlighter", "Role", "TraceHighlighter", "formats_for"]

# The window's role → style table is the theme's (ui/common/theme.py), keyed by
# core/results/presentation.py's
# role names; these roles are drawn in the palette's own text colour instead.
PLAIN_ROLES = (Role.MODEL, Role.SUMMARY)
# A block's state is the index of its label's role, so unlabelled lines can continue it.
_LABEL_STATES = LABEL_ROLES


def formats_for(palette: QPalette) -> dict[Role, QTextCharFormat]:
    """A character format for every role (core/results/presentation.py), in this palette's theme."""
    formats = {role: QTextCharFormat() for role in PLAIN_ROLES}
    formats.update({Role(key): style.char_format() for key, style in styles_for(palette).items()})
    return formats


class LabelHighlighter(QSyntaxHighlighter):
    """Colours lines by their ReAct label; unlabelled lines continue the previous label."""

    def __init__(self, document: QTextDocument, palette: QPalette) -> None:
        super().__init__(document)
        self._formats: dict[Role, QTextCharFormat] = {}
        self.set_palette(palette)

    def set_palette(self, palette: QPalette) -> None:
        self._formats = formats_for(palette)
        self.rehighlight()

    def format_for(self, role: Role) -> QTextCharFormat:
        return self._formats[role]

    def highlightBlock(self, text: str) -> None:
        self._highlight_model_text(text)

    def _highlight_model_text(self, text: str, continued: bool = False) -> None:
        kind = None if continued else label_role(text)
        if kind is None:
            state = self.previousBlockState()
            if 0 <= state < len(_LABEL_STATES):
                kind = _LABEL_STATES[state]
        if kind is None:
            self.setCurrentBlockState(-1)
            return
        self.setCurrentBlockState(_LABEL_STATES.index(kind))
        self.setFormat(0, len(text), self._formats[LABEL_STYLES[kind]])


class TraceHighlighter(LabelHighlighter):
    """Colours trace blocks by role; label rules apply only inside model text.
    ``continues(n)``: block ``n`` is the rest of a line split to keep blocks short."""

    def __init__(
        self,
        document: QTextDocument,
        palette: QPalette,
        role_of: Callable[[int], Role],
        continues: Callable[[int], bool],
    ) -> None:
        self._role_of, self._continues = role_of, continues
        super().__init__(document, palette)

    def highlightBlock(self, text: str) -> None:
        number = self.currentBlock().blockNumber()
        role = self._role_of(number)
        if role is Role.MODEL:
            self._highlight_model_text(text, continued=self._continues(number))
            return
        self.setCurrentBlockState(-1)
        self.setFormat(0, len(text), self._formats[role])
