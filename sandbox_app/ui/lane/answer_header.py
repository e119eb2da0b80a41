"""A run pane's answer header: the answer, how the run ended and, where the scenario has an
expected answer, whether it was right, in the theme's answer or error colour.

A wrong answer must not look like a right one on a projector: "✘ Wrong (expected $1,680)" in
the error colour, the answer above it too (never the right answer's green), "✔ Correct" in the
answer colour, the step count kept after them (core/results/outcome.py's words, which
`react-sandbox run` prints too). A rerun of one step has no answer: its header shows the
rerun turn beside the original's.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QLabel, QSizePolicy

from sandbox_app.core.results.outcome import outcome
from sandbox_app.core.results.presentation import VERDICT_ROLES
from sandbox_app.core.running.events import RunFinished
from sandbox_app.core.running.fork import ForkOrigin
from sandbox_app.core.scenarios.scenario import Expected
from sandbox_app.ui.common.fitting import FONT_FACTOR
from sandbox_app.ui.common.plain import plain_label
from sandbox_app.ui.common.theme import styles_for


class AnswerHeader:
    """The two labels above a pane's trace (the pane lays them out)."""

    def __init__(self, answer_scale: float) -> None:
        self.answer = plain_label()
        self.answer.setObjectName("finalAnswer")
        self.answer.setWordWrap(True)
        self.answer.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = QFont(self.answer.font())
        font.setPointSizeF(font.pointSizeF() * answer_scale)
        font.setBold(True)
        self.answer.setFont(font)
        self.answer.setProperty(FONT_FACTOR, answer_scale)  # for zoom (presenter.py)
        # Never squeezed below its text (presenter mode's large fonts): the trace gives way.
        self.answer.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.status = plain_label()
        self.status.setWordWrap(True)
        self.hide()

    def hide(self) -> None:
        self.answer.hide()
        self.status.hide()

    def show(
        self,
        event: RunFinished,
        steps: int,
        expected: Expected | None,
        rerun: tuple[ForkOrigin, str] | None = None,
    ) -> None:
        """``rerun``: the run asked one step again (its origin, and the turn it got)."""
        if rerun is not None and event.status != "answered":
            origin, turn = rerun
            self.answer.setText(turn or "(the model wrote nothing)")
            self.answer.setEnabled(True)
            was = origin.original or "(nothing)"
            text = (
                f"↻ Rerun of step {origin.step} (its action was not run) · "
                f"{origin.run}'s step {origin.step} was: {was}"
            )
            style = ""
        else:
            self.answer.setText(event.answer or "No answer")
            self.answer.setEnabled(event.answer is not None)
            # The same line and colour `react-sandbox run` prints (core/results/outcome.py);
            # the answer takes its verdict's colour, a wrong one never the right one's.
            said = outcome(event, steps, expected)
            text, style = said.line, VERDICT_ROLES.get(said.correct, "")
        self.status.setText(text)
        for label in (self.answer, self.status):
            _colour(label, style)
        self.answer.show()
        self.status.show()


def _colour(label: QLabel, style: str) -> None:
    """The theme's colour for ``style`` (light or dark), or the label's own for ""."""
    parent = label.parentWidget()
    palette = QPalette(parent.palette() if parent is not None else QPalette())
    if style:
        colour = QColor(styles_for(palette)[style].color)
        palette.setColor(QPalette.ColorRole.WindowText, colour)
        palette.setColor(QPalette.ColorRole.Text, colour)
    label.setPalette(palette)
