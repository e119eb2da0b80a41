"""A dialog for a list of named things edited one at a time: the scenario's own tools, its
MCP servers.

The list on the left, with Add and Remove; the selected one's form on the right (its Name
first); one line that says what is wrong; OK and Cancel. A subclass adds its form's rows and
says how a draft shows in the form (:meth:`show_draft`) and how the form makes one again
(:meth:`form_draft`); checking the drafts on OK is its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, Protocol, TypeVar

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from sandbox_app.ui.common.plain import plain_label


class Named(Protocol):
    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=Named)


class DraftsDialog(QDialog, Generic[T]):
    def __init__(
        self, title: str, drafts: Sequence[T], add_text: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.drafts = list(drafts)
        self.shown: int | None = None  # the draft the form shows
        self.item_list = QListWidget()
        self.add_button = QPushButton(add_text)
        self.remove_button = QPushButton("Remove")
        self.name_edit = QLineEdit()
        self.form = QWidget()
        self.form_layout = QFormLayout(self.form)
        self.form_layout.addRow("Name", self.name_edit)
        self.message = plain_label()
        self.message.setWordWrap(True)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        left = QVBoxLayout()
        left.addWidget(self.item_list, 1)
        row = QHBoxLayout()
        row.addWidget(self.add_button)
        row.addWidget(self.remove_button)
        left.addLayout(row)
        body = QHBoxLayout()
        body.addLayout(left, 1)
        body.addWidget(self.form, 3)
        layout = QVBoxLayout(self)
        layout.addLayout(body, 1)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self.item_list.currentRowChanged.connect(self._on_item_list_current_row_changed)
        self.remove_button.clicked.connect(self._on_remove_button_clicked)
        self.name_edit.textChanged.connect(self._on_name_edit_text_changed)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)

    # ---- for subclasses ---------------------------------------------------------------

    def show_draft(self, draft: T | None) -> None:
        """Put ``draft`` (None: no draft is selected) into the form, its name included."""
        raise NotImplementedError

    def form_draft(self, draft: T) -> T:
        """``draft`` as the form says it is now."""
        raise NotImplementedError

    def fill(self) -> None:
        """List the drafts and show the first; a subclass calls this once its form is built."""
        for draft in self.drafts:
            self.item_list.addItem(draft.name)
        self.item_list.setCurrentRow(0 if self.drafts else -1)
        self._show(self.item_list.currentRow())

    def add_draft(self, draft: T) -> None:
        self.keep_form()
        self.drafts.append(draft)
        self.item_list.addItem(draft.name)
        self.item_list.setCurrentRow(len(self.drafts) - 1)
        self.name_edit.setFocus()
        self.name_edit.selectAll()

    def free_name(self, stem: str, taken: Sequence[str] = ()) -> str:
        """``stem_1``, ``stem_2``…: the first no draft (nor ``taken``) has."""
        used = {*taken, *(draft.name for draft in self.drafts)}
        return next(f"{stem}_{n}" for n in range(1, 1000) if f"{stem}_{n}" not in used)

    def keep_form(self) -> None:
        """Write the form into the draft it shows."""
        if self.shown is not None:
            self.drafts[self.shown] = self.form_draft(self.drafts[self.shown])

    # ---- the list ---------------------------------------------------------------------

    def _show(self, index: int) -> None:
        self.shown = index if 0 <= index < len(self.drafts) else None
        self.form.setEnabled(self.shown is not None)
        self.show_draft(self.drafts[index] if self.shown is not None else None)

    def _on_item_list_current_row_changed(self, row: int) -> None:
        if row != self.shown:
            self.keep_form()
            self._show(row)

    def _on_name_edit_text_changed(self, text: str) -> None:
        item = self.item_list.currentItem()
        if item is not None and self.shown is not None:
            item.setText(text)

    def _on_remove_button_clicked(self) -> None:
        row = self.item_list.currentRow()
        if row < 0:
            return
        self.shown = None  # the form's draft is going: nothing to keep
        del self.drafts[row]
        self.item_list.takeItem(row)
        self._show(self.item_list.currentRow())
