"""The one rule for text in Qt widgets: what a file, a model, a tool or a server wrote is shown
as plain text, never read as markup.

A QLabel or QMessageBox left at Qt's default (``AutoText``) renders anything that looks like
HTML: a scenario file's error could show a heading, a clickable external link or a local
image; a tool's input could hide itself. So every label here is made by :func:`plain_label`,
every message box by :func:`message_box` (its text and informative text ``PlainText``), and
every tooltip (Qt guesses rich text in those too) goes through :func:`tip`. App-written
markup (a bold heading) is :func:`rich_label` with a literal string, and only the About box
and the shortcuts table (app-written, every word) use QMessageBox's static functions;
tests/ui/test_plain_text.py checks the ui package for any other way in. Status-bar messages,
window titles, item views and buttons draw plain text by themselves.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMessageBox, QWidget

PLAIN = Qt.TextFormat.PlainText

# A message box lays its text out whole (no scroll area can be put round its grid), so a long
# text (a server's 400-line error) stood 6,863 px tall on a 720-px screen. It shows this much;
# the whole text is under Show Details…, which scrolls.
SHOWN_LINES = 12
SHOWN_CHARS = 900


def plain_label(text: str = "", parent: QWidget | None = None, *, wrap: bool = False) -> QLabel:
    """A label whose text is shown exactly as given, whatever it holds; ``wrap``: its lines
    wrapped at its width (else its longest line is the least width of all around it)."""
    label = QLabel(parent)
    label.setTextFormat(PLAIN)
    label.setWordWrap(wrap)
    label.setText(text)
    return label


def rich_label(markup: str, parent: QWidget | None = None) -> QLabel:
    """A label of markup the app wrote (a string literal: the test checks every call)."""
    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setText(markup)
    return label


def message_box(
    icon: QMessageBox.Icon,
    title: str,
    text: str,
    buttons: QMessageBox.StandardButton = QMessageBox.StandardButton.NoButton,
    parent: QWidget | None = None,
    informative: str = "",
) -> QMessageBox:
    """A message box that shows ``text`` and ``informative`` as plain text."""
    box = QMessageBox(icon, title, "", buttons, parent)
    box.setTextFormat(PLAIN)
    shown = _head(text)
    box.setText(shown)
    if shown != text:
        box.setDetailedText(text)
    for label in box.findChildren(QLabel, "qt_msgbox_label"):
        label.setOpenExternalLinks(False)  # nothing in it is a link: no click leaves the app
    if informative:
        set_informative(box, informative)
    return box


def _head(text: str) -> str:
    """``text`` if it is short enough to show in a message box, else its first lines."""
    head = "\n".join(text.splitlines()[:SHOWN_LINES])[:SHOWN_CHARS]
    if head == text:
        return text
    return head.rstrip() + "\n… (all of it under Show Details…)"


def set_informative(box: QMessageBox, text: str) -> None:
    """``box``'s informative text, as plain text (QMessageBox's text format covers only its
    main text: the informative label it makes is AutoText and opens external links); a long
    one cut as the main text is, the whole of it added to the details."""
    shown = _head(text)
    if shown != text:
        detail = box.detailedText()
        box.setDetailedText(f"{detail}\n\n{text}" if detail else text)
    box.setInformativeText(shown)
    for label in box.findChildren(QLabel, "qt_msgbox_informativelabel"):
        label.setTextFormat(PLAIN)
        label.setOpenExternalLinks(False)


def tip(text: str) -> str:
    """A tooltip that shows ``text`` as it is: Qt reads a tooltip as rich text when it looks
    like HTML, so it is made rich text on purpose, escaped, with its line breaks kept."""
    if not text:
        return ""
    return f"<p style='white-space:pre-wrap'>{html.escape(text, quote=True)}</p>"


__all__ = [
    "message_box",
    "plain_label",
    "rich_label",
    "set_informative",
    "tip",
]
