"""Widgets that fit a small screen or a large zoom instead of widening the window.

A push button is at least 80 px wide whatever its text; a tool button is as wide as its text,
so a row of them fits beside the editors on an 800-px screen and at presenter sizes on a
1280-px projector. A panel whose row of buttons cannot shrink goes in a scroll area: it
scrolls when the window is narrow, and the window keeps the width of the screen.
"""

from __future__ import annotations

from PySide6.QtWidgets import QScrollArea, QToolButton, QWidget


def tool_button(text: str) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    return button


def scrolling(widget: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    return area
