"""A second desktop font for the window tests, so a layout is not tuned to one font alone.

CI machines have DejaVu Sans only; desktops have others, with taller lines: Noto Sans (the
default of several Linux desktops) spaces its lines a fifth wider than DejaVu Sans, and a
presenter layout that held under DejaVu showed 4.8 trace lines where it needs 8. The tests
carry Noto Sans (tests/data/fonts, OFL) and register it with Qt, so every machine has it.
``REACT_SANDBOX_TEST_FONT=noto`` runs the whole window suite with it as the application's
font (``.ci/run`` does, after the suite); ``test_first_screen.py`` tries both in one run.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtGui import QFont, QFontDatabase, QFontInfo
from PySide6.QtWidgets import QApplication

FONTS = Path(__file__).parents[1] / "data" / "fonts"
NOTO = "Noto Sans"
CHOSEN = "REACT_SANDBOX_TEST_FONT"  # "noto": the second font for the whole suite


def second_font() -> str:
    """Noto Sans's family name, registered with Qt from the tests' own copy (once)."""
    if NOTO not in QFontDatabase.families():
        for path in sorted(FONTS.glob("*.ttf")):
            if QFontDatabase.addApplicationFont(str(path)) < 0:
                raise RuntimeError(f"Qt could not load the test font {path.name}")
    return NOTO


def with_family(app: QApplication, family: str) -> QFont:
    """The application's font now, then set to ``family`` at the same size; returns the one
    it had, to put back."""
    before = QFont(app.font())
    font = QFont(before)
    font.setFamily(family)
    app.setFont(font)
    return before


def apply_chosen(app: QApplication) -> str:
    """The font ``REACT_SANDBOX_TEST_FONT`` asks for made the application's; its name."""
    if os.environ.get(CHOSEN, "").lower() == "noto":
        with_family(app, second_font())
        shown = QFontInfo(app.font()).family()
        if shown != NOTO:  # a fallback font would pass every layout test for nothing
            raise RuntimeError(f"{CHOSEN}=noto, but Qt draws with {shown}")
    return app.font().family()
