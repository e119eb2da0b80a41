"""The blind pairwise review: two lanes' answers to each case of an evaluation side by side, on
sides drawn at random per case, the person choosing the better one or a tie, by keyboard.

Sides come from the review's seed and the case (``side_of``): the same seed shows the same
sides, and the seed is kept with each choice. Which lane is on which side is never shown
while choosing; the win rate (core/comparing/agreement.py: the first lane's share of the
choices that were not ties, with its 95 % Wilson interval; ties counted apart) names them
only once every case is chosen. Keys: ← or 1 the left answer, → or 2 the right one, ↓ or 3 a
tie (1/2/3 for keyboards without arrows, ↓ as "neither side"). Each choice is stored as it
is made (core/history/history_grades.py), so closing the dialog loses nothing and opening
it again goes on at the first case not chosen.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QGridLayout,
    QHBoxLayout,
    QInputDialog,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.core.comparing.agreement import win_rate
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.history.history_grades import Choice, PairChoice, choices, choose
from sandbox_app.core.history.history_schema import HistoryError
from sandbox_app.ui.common.plain import message_box, plain_label

KEYS: dict[Qt.Key, str] = {
    Qt.Key.Key_Left: "left",
    Qt.Key.Key_1: "left",
    Qt.Key.Key_Right: "right",
    Qt.Key.Key_2: "right",
    Qt.Key.Key_Down: "tie",
    Qt.Key.Key_3: "tie",
}


@dataclass(frozen=True)
class PairCase:
    case: int
    question: str
    first: str  # the first lane's answer (its first repeat's)
    second: str


def pair_cases(store: HistoryStore, evaluation: int, first: str, second: str) -> list[PairCase]:
    """Each case both lanes answered, with the answer of each one's first repeat."""
    answers: dict[tuple[str, int], tuple[int, str, str]] = {}
    for result in store.results(evaluation):
        if result.lane not in (first, second):
            continue
        held = answers.get((result.lane, result.case))
        if held is None or result.repeat < held[0]:
            said = result.answer if result.answer is not None else f"(no answer: {result.status})"
            answers[(result.lane, result.case)] = (result.repeat, result.question or "", said)
    cases = sorted({case for _, case in answers})
    return [
        PairCase(
            case, answers[(first, case)][1], answers[(first, case)][2], answers[(second, case)][2]
        )
        for case in cases
        if (first, case) in answers and (second, case) in answers
    ]


def side_of(seed: int, case: int) -> bool:
    """Whether the first lane's answer is on the left for ``case``: a coin per case, drawn
    from the seed (the same seed, the same sides)."""
    return random.Random(f"{seed}:{case}").random() < 0.5


class PairwiseReview(QDialog):
    """Choose between lanes ``first`` and ``second`` of ``evaluation``, case by case."""

    def __init__(
        self,
        store: HistoryStore,
        evaluation: int,
        first: str,
        second: str,
        parent: QWidget | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Blind pairwise review · evaluation #{evaluation}")
        self.resize(1000, 560)
        self.store, self.evaluation, self.first, self.second = store, evaluation, first, second
        self.seed = random.SystemRandom().randrange(2**31) if seed is None else seed
        self.cases = pair_cases(store, evaluation, first, second)
        self.chosen: dict[int, Choice] = {
            c.case: c.choice
            for c in choices(store, evaluation)
            if (c.first, c.second) == (first, second)
        }
        self.at = 0
        self.progress = plain_label()
        self.question = plain_label()
        self.question.setWordWrap(True)
        self.left, self.right = QPlainTextEdit(), QPlainTextEdit()
        answers = QGridLayout()
        for column, (name, view) in enumerate((("Answer A", self.left), ("Answer B", self.right))):
            view.setReadOnly(True)
            view.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the arrows are the choice, not a scroll
            answers.addWidget(plain_label(name), 0, column)
            answers.addWidget(view, 1, column)
        self.left_button = QPushButton("← A is better  (1)")
        self.tie_button = QPushButton("↓ Tie  (3)")
        self.right_button = QPushButton("B is better →  (2)")
        self.summary = plain_label()
        self.summary.setWordWrap(True)
        buttons = QHBoxLayout()
        for button, side in (
            (self.left_button, "left"),
            (self.tie_button, "tie"),
            (self.right_button, "right"),
        ):
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            button.clicked.connect(lambda _=False, s=side: self.pick(s))
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.progress)
        layout.addWidget(self.question)
        layout.addLayout(answers, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.summary)
        self._go_to(self._next_open(0))

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # The dialog holds the focus (its answers and buttons take none): every key is its.
        side = KEYS.get(Qt.Key(event.key()))
        if side is not None and not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            self.pick(side)
            return
        super().keyPressEvent(event)

    def pick(self, side: str) -> None:
        """The answer on ``side`` ("left", "right") is better, or "tie"; stored, then on."""
        if self.at >= len(self.cases):
            return
        case = self.cases[self.at]
        first_left = side_of(self.seed, case.case)
        choice: Choice = (
            "tie" if side == "tie" else "first" if (side == "left") == first_left else "second"
        )
        try:
            choose(
                self.store,
                self.evaluation,
                PairChoice(case.case, self.first, self.second, first_left, self.seed, choice),
            )
        except HistoryError as err:
            self.summary.setText(f"⚠ {err}")
            return
        self.chosen[case.case] = choice
        self._go_to(self._next_open(self.at + 1))

    def _next_open(self, start: int) -> int:
        """The first case from ``start`` not chosen yet (the end when every one is)."""
        for index in range(start, len(self.cases)):
            if self.cases[index].case not in self.chosen:
                return index
        return len(self.cases)

    def _go_to(self, index: int) -> None:
        self.at = index
        done = index >= len(self.cases)
        for button in (self.left_button, self.tie_button, self.right_button):
            button.setEnabled(not done)
        count = len(self.cases)
        if done:
            self.progress.setText(f"All {count} cases chosen")
            self.question.setText("")
            self.left.setPlainText("")
            self.right.setPlainText("")
            self.summary.setText(
                self.win_rate() if count else "These lanes share no answered case."
            )
            return
        case = self.cases[index]
        self.progress.setText(
            f"Case {case.case + 1} · {index + 1} of {count} · {len(self.chosen)} chosen · "
            "which answer is better? ← / 1 A, → / 2 B, ↓ / 3 tie"
        )
        self.question.setText(case.question)
        first_left = side_of(self.seed, case.case)
        self.left.setPlainText(case.first if first_left else case.second)
        self.right.setPlainText(case.second if first_left else case.first)
        self.summary.setText("")

    def win_rate(self) -> str:
        """The win rate, lanes named: said once every case is chosen."""
        return win_rate(self.chosen.values()).words(self.first, self.second)


def open_review(
    store: HistoryStore, evaluation: int, parent: QWidget, pair: tuple[str, str] | None = None
) -> QDialog | None:
    """Open the review of ``pair`` of ``evaluation``'s lanes (None: its two lanes, or first a
    list of its pairs to pick from when it has more); a problem is said in a message."""
    try:
        lanes = store.evaluation(evaluation, tallied=False).lanes
    except HistoryError as err:
        return _said(parent, str(err))
    pairs = [(a, b) for i, a in enumerate(lanes) for b in lanes[i + 1 :]]
    if pair is None and len(pairs) > 1:
        names = [f"{a}  vs  {b}" for a, b in pairs]
        ask = QInputDialog(parent)
        ask.setWindowTitle("Pairwise review")
        ask.setLabelText("Which two lanes?")
        ask.setComboBoxItems(names)
        ask.textValueSelected.connect(
            lambda text: open_review(store, evaluation, parent, pairs[names.index(text)])
        )
        ask.open()
        return ask
    pair = pair or (pairs[0] if pairs else None)
    if pair is None:
        return _said(parent, "A pairwise review needs an evaluation of two lanes or more.")
    try:
        dialog = PairwiseReview(store, evaluation, *pair, parent=parent)
    except HistoryError as err:
        return _said(parent, str(err))
    dialog.open()
    return dialog


def _said(parent: QWidget, text: str) -> QDialog:
    box = message_box(QMessageBox.Icon.Warning, "Pairwise review", text, parent=parent)
    box.open()
    return box
