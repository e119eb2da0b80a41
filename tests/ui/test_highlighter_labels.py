"""The highlighter reads labels with the same grammar as the parser and the scanner."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QApplication

from sandbox_app.core.react_format.dialects import LABEL_ROLES, Label
from sandbox_app.ui.trace.highlighter import LabelHighlighter
from tests.label_lines import LABEL_LINES


@pytest.mark.parametrize(("line", "label"), LABEL_LINES)
def test_highlighter_colours_the_label_the_parser_reads(
    qapp: QApplication, line: str, label: Label | None
) -> None:
    document = QTextDocument(line)
    highlighter = LabelHighlighter(document, qapp.palette())  # highlights on construction
    role = "action" if label == "action input" else label
    expected = -1 if role is None else LABEL_ROLES.index(role)  # block state = role index
    assert document.firstBlock().userState() == expected
    assert highlighter.document() is document
