"""Colour ReAct text: labels in model text, and whole lines by who wrote them in the trace.

``LabelHighlighter`` colours a line by its ReAct label (Thought / Action / Answer), carrying the
label to continuation lines; the prompt editor uses it as it is. ``TraceHighlighter`` asks the
trace which role each block has (model text, observation, step separator, …) and only applies
label rules to model text, so an observation that says "Thought:" stays an observation.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum

from PySide6.QtGui import QPalette, QSyntaxHighlighter, QTextCharFormat, QTextDocument

from sandbox_app.core.dialects import LABEL_ROLES, label_role
from sandbox_app.ui.theme import styles_for


class Role(IntEnum):
    """Who wrote a block of the trace."""

    MODEL = 0
    MODEL_CONTINUED = 1  # the rest of a model line split to keep blocks short
    OBSERVATION = 2
    STEP = 3
    ERROR = 4
    NOTICE = 5
    DROPPED = 6
    THINKING = 7  # the model's reasoning: never read for labels
    THINKING_HEADER = 8  # the line above it: how long it thought, click to fold or unfold


_ROLE_STYLE = {
    Role.OBSERVATION: "observation",
    Role.STEP: "step",
    Role.ERROR: "error",
    Role.NOTICE: "notice",
    Role.DROPPED: "dropped",
    Role.THINKING: "thinking",
    Role.THINKING_HEADER: "thinking_header",
}
# A block's state is the index of its label's role, so unlabelled lines can continue it.
_LABEL_STATES = LABEL_ROLES


class LabelHighlighter(QSyntaxHighlighter):
    """Colours lines by their ReAct label; unlabelled lines continue the previous label."""

    def __init__(self, document: QTextDocument, palette: QPalette) -> None:
        super().__init__(document)
        self._formats: dict[str, QTextCharFormat] = {}
        self.set_palette(palette)

    def set_palette(self, palette: QPalette) -> None:
        self._formats = {key: style.char_format() for key, style in styles_for(palette).items()}
        self.rehighlight()

    def format_for(self, key: str) -> QTextCharFormat:
        return self._formats[key]

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
        self.setFormat(0, len(text), self._formats[kind])


class TraceHighlighter(LabelHighlighter):
    """Colours trace blocks by role; label rules apply only inside model text."""

    def __init__(
        self, document: QTextDocument, palette: QPalette, role_of: Callable[[int], Role]
    ) -> None:
        self._role_of = role_of
        super().__init__(document, palette)

    def highlightBlock(self, text: str) -> None:
        role = self._role_of(self.currentBlock().blockNumber())
        if role in (Role.MODEL, Role.MODEL_CONTINUED):
            self._highlight_model_text(text, continued=role is Role.MODEL_CONTINUED)
            return
        self.setCurrentBlockState(-1)
        self.setFormat(0, len(text), self.format_for(_ROLE_STYLE[role]))
