"""The buttons that open Improve prompt… (the Versions tab, the Test set tab) and Generate
cases… (the test set editor): made where they sit, their dialogs opened by the window's
``Improving`` (ui/optimizing/opening.py), imported at the first click only."""

from __future__ import annotations

from PySide6.QtWidgets import QBoxLayout, QPushButton


def improve_button(row: QBoxLayout) -> QPushButton:
    """Improve prompt…, added to ``row``."""
    button = QPushButton("Improve prompt…")
    button.setToolTip(
        "A reflection model reads the failing cases and proposes new prompts; the best is "
        "checked on held-out cases. Nothing replaces the editor until you accept it."
    )
    row.addWidget(button)
    return button


def generate_button(row: QBoxLayout, at: int = -1) -> QPushButton:
    """Generate cases…, inserted in ``row`` at ``at`` (-1: last)."""
    button = QPushButton("Generate cases…")
    button.setToolTip("A model proposes new cases from the prompt, the tools and these cases")
    row.insertWidget(at, button)
    return button
