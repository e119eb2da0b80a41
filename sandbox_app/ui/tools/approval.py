"""A person in the loop: approve a tool call before it runs (side effects need a person's
approval), or type the observation of an ask-me tool (core/tools/mock.py)."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QMessageBox,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.ui.common.plain import plain_label, set_informative


class ApprovalDialog(QMessageBox):
    """Shows the tool and its exact input; Decline is the default button."""

    def __init__(self, tool: str, input: str, lane: str = "", parent: QWidget | None = None):
        super().__init__(parent)
        where = f" in {lane}" if lane else ""
        self.setWindowTitle("Run a tool with side effects?")
        self.setIcon(QMessageBox.Icon.Warning)
        # Plain text (ui/common/plain.py): the tool's name and the model's input are shown as
        # written.
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setText(f"The model{where} wants to run {tool}, which can change things.")
        self.input_text = input
        set_informative(self, f"Exact input:\n{input}")
        self.run_button = self.addButton("Run", QMessageBox.ButtonRole.AcceptRole)
        self.decline_button = self.addButton("Decline", QMessageBox.ButtonRole.RejectRole)
        self.setDefaultButton(self.decline_button)
        self.setEscapeButton(self.decline_button)


async def ask_approval(parent: QWidget, tool: str, input: str, lane: str = "") -> bool:
    """Show the dialog without blocking the event loop; True only if the user chose Run."""
    dialog = ApprovalDialog(tool, input, lane, parent)
    answered: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    def on_finished(_: int) -> None:
        if not answered.done():
            answered.set_result(dialog.clickedButton() is dialog.run_button)

    dialog.finished.connect(on_finished)
    dialog.open()
    try:
        return await answered
    finally:
        if dialog.isVisible():  # the run was stopped while the question was open
            dialog.reject()
        dialog.deleteLater()


class AskDialog(QDialog):
    """The model called an ask-me tool: show its input, take the observation. Esc declines."""

    def __init__(self, tool: str, input: str, lane: str = "", parent: QWidget | None = None):
        super().__init__(parent)
        where = f" in {lane}" if lane else ""
        self.setWindowTitle(f"Answer for {tool}")
        self.prompt = plain_label(
            f"The model{where} called {tool} with:\n\n{input}\n\nType what the tool returns:"
        )
        self.prompt.setWordWrap(True)
        self.answer_edit = QPlainTextEdit()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Send")
        buttons.button(QDialogButtonBox.StandardButton.Cancel).setText("Decline")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.prompt)
        layout.addWidget(self.answer_edit)
        layout.addWidget(buttons)


async def ask_observation(parent: QWidget, tool: str, input: str, lane: str = "") -> str | None:
    """The observation the user typed for an ask-me call, or None (declined, or the run
    stopped while the question was open); never blocks the event loop."""
    dialog = AskDialog(tool, input, lane, parent)
    answered: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()

    def on_finished(result: int) -> None:
        if not answered.done():
            accepted = result == QDialog.DialogCode.Accepted.value
            answered.set_result(dialog.answer_edit.toPlainText() if accepted else None)

    dialog.finished.connect(on_finished)
    dialog.open()
    try:
        return await answered
    finally:
        if dialog.isVisible():
            dialog.reject()
        dialog.deleteLater()
