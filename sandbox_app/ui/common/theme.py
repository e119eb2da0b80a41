"""Colours for trace roles and ReAct labels, chosen from the palette so light and dark both read.

Each colour keeps a WCAG contrast of at least 4.5:1 against the palette's base colour (3:1
for the deliberately dim struck-through text), which a test checks for both themes.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor, QFont, QPalette, QTextCharFormat


@dataclass(frozen=True)
class Style:
    color: str
    bold: bool = False
    italic: bool = False
    strike: bool = False
    background: str | None = None

    def char_format(self) -> QTextCharFormat:
        fmt = QTextCharFormat()
        fmt.setForeground(QColor(self.color))
        if self.bold:
            fmt.setFontWeight(QFont.Weight.Bold)
        fmt.setFontItalic(self.italic)
        fmt.setFontStrikeOut(self.strike)
        if self.background:
            fmt.setBackground(QColor(self.background))
        return fmt


# Keys: the model's labels (thought, action, answer) and the trace's other roles.
LIGHT = {
    "thought": Style("#1a56b0", italic=True),
    "action": Style("#8a4b00", bold=True),
    "answer": Style("#1b6b2f", bold=True),
    "observation": Style("#5b2a86", background="#f1ebf8"),
    "error": Style("#b3261e"),
    "step": Style("#3c4043", bold=True),
    "notice": Style("#5f6368", italic=True),
    "dropped": Style("#80868b", strike=True),
    # The model's thinking: dim, italic, on a faint band, so it never reads as its answer.
    "thinking": Style("#6a6e73", italic=True, background="#f3f4f6"),
    "thinking_header": Style("#4a4f55", background="#f3f4f6"),
}
DARK = {
    "thought": Style("#8ab4f8", italic=True),
    "action": Style("#f6b26b", bold=True),
    "answer": Style("#81c995", bold=True),
    "observation": Style("#d7aefb", background="#2b2238"),
    "error": Style("#f28b82"),
    "step": Style("#e8eaed", bold=True),
    "notice": Style("#9aa0a6", italic=True),
    "dropped": Style("#80868b", strike=True),
    "thinking": Style("#9aa0a6", italic=True, background="#25272b"),
    "thinking_header": Style("#bdc1c6", background="#25272b"),
}


# Presenter mode (ui/window/presenter.py): darker or brighter still, every role at 7:1 or more
# against the base colour (WCAG AAA for text), the dim struck-through one included, so a
# washed-out projector still shows each.
HIGH_CONTRAST_LIGHT = {
    "thought": Style("#0b3d91", italic=True),
    "action": Style("#6b3300", bold=True),
    "answer": Style("#0b5a1f", bold=True),
    "observation": Style("#3d1466", background="#efe6fa"),
    "error": Style("#9c1006"),
    "step": Style("#000000", bold=True),
    "notice": Style("#303134", italic=True),
    "dropped": Style("#3c4043", strike=True),
    "thinking": Style("#303134", italic=True, background="#f1f3f4"),
    "thinking_header": Style("#202124", background="#f1f3f4"),
}
HIGH_CONTRAST_DARK = {
    "thought": Style("#b9d3fb", italic=True),
    "action": Style("#ffcc80", bold=True),
    "answer": Style("#a8e6b5", bold=True),
    "observation": Style("#eddcff", background="#2b2238"),
    "error": Style("#ffb4ab"),
    "step": Style("#ffffff", bold=True),
    "notice": Style("#dadce0", italic=True),
    "dropped": Style("#c4c7c5", strike=True),
    "thinking": Style("#dadce0", italic=True, background="#25272b"),
    "thinking_header": Style("#f1f3f4", background="#25272b"),
}
high_contrast = False  # set by presenter mode for every trace


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightnessF() < 0.5


def styles_for(palette: QPalette) -> dict[str, Style]:
    if high_contrast:
        return HIGH_CONTRAST_DARK if is_dark(palette) else HIGH_CONTRAST_LIGHT
    return DARK if is_dark(palette) else LIGHT


# The test-set grid's cell shades: the share of a cell's repeats that passed, from all failed
# through half (grey) to all passed, so 0/5, 2/5, 4/5 and 5/5 each look their own and only a
# cell that always passed is fully green. The palette's text stays 4.5:1 on every shade (7:1 in
# presenter mode, whose ends are stronger so a projector still tells them apart).
PASS_SCALES = {
    (False, False): ("#f6aea9", "#e8eaed", "#a8dab5"),
    (True, False): ("#7a2f2a", "#45484c", "#1d5230"),
    (False, True): ("#f28b82", "#dadce0", "#81c995"),
    (True, True): ("#8c1d18", "#3c4043", "#0a5224"),
}


def pass_shade(share: float, palette: QPalette) -> QColor:
    """A cell's background for ``share`` of its runs passed (0 to 1), in the palette's theme."""
    failed, middle, passed = (QColor(c) for c in PASS_SCALES[is_dark(palette), high_contrast])
    start, end, t = (failed, middle, share * 2) if share < 0.5 else (middle, passed, share * 2 - 1)

    def channels(c: QColor) -> tuple[float, float, float]:
        return c.redF(), c.greenF(), c.blueF()

    mixed = (a + (b - a) * t for a, b in zip(channels(start), channels(end), strict=True))
    return QColor.fromRgbF(*mixed)


def contrast(a: QColor, b: QColor) -> float:
    """WCAG 2 contrast ratio between two colours (1 to 21)."""

    def luminance(c: QColor) -> float:
        def channel(v: float) -> float:
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

        red, green, blue = channel(c.redF()), channel(c.greenF()), channel(c.blueF())
        return 0.2126 * red + 0.7152 * green + 0.0722 * blue

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)
