"""Help → About: what this is, which version, under which licence, on which Qt and Python."""

from __future__ import annotations

import platform

import PySide6
from PySide6.QtCore import qVersion
from PySide6.QtWidgets import QMessageBox, QWidget

from sandbox_app import HOMEPAGE, LICENSE, __version__


def about_text() -> str:
    return (
        f"<h3>ReAct Sandbox {__version__}</h3>"
        "<p>Edit a ReAct prompt, run it against a model, watch the "
        "Thought → Action → Observation trace, compare models.</p>"
        f"<p>Licence: {LICENSE}. Qt {qVersion()} (PySide6 {PySide6.__version__}, LGPLv3), "
        f"Python {platform.python_version()}.</p>"
        f'<p><a href="{HOMEPAGE}">{HOMEPAGE}</a></p>'
    )


def show_about(parent: QWidget) -> None:
    QMessageBox.about(parent, "About ReAct Sandbox", about_text())
