"""Start the Qt application on a qasync event loop and show the main window."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication, QLabel


def run_app(scenario: str | None = None) -> int:
    app = QApplication.instance() or QApplication(sys.argv)
    label = QLabel("ReAct Sandbox")
    label.setWindowTitle("ReAct Sandbox")
    label.show()
    return app.exec()
