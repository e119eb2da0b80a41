"""Ask the user before a tool with side effects runs (seed 002: a person approves them)."""

from __future__ import annotations

import asyncio
import html

from PySide6.QtWidgets import QMessageBox, QWidget


class ApprovalDialog(QMessageBox):
    """Shows the tool and its exact input; Decline is the default button."""

    def __init__(self, tool: str, input: str, lane: str = "", parent: QWidget | None = None):
        super().__init__(parent)
        where = f" in {lane}" if lane else ""
        self.setWindowTitle("Run a tool with side effects?")
        self.setIcon(QMessageBox.Icon.Warning)
        self.setText(f"The model{where} wants to run <b>{tool}</b>, which can change things.")
        self.input_text = input
        self.setInformativeText(f"Exact input:<pre>{html.escape(input)}</pre>")
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
