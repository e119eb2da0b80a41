"""A table column edited by choosing from a list (a match rule, a pattern kind), never typed."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex
from PySide6.QtWidgets import QComboBox, QStyledItemDelegate, QStyleOptionViewItem, QWidget

Index = QModelIndex | QPersistentModelIndex


class ChoiceDelegate(QStyledItemDelegate):
    def __init__(self, choices: Sequence[str], parent: QWidget) -> None:
        super().__init__(parent)
        self.choices = list(choices)

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: Index) -> QWidget:
        editor = QComboBox(parent)
        editor.addItems(self.choices)
        return editor

    def setEditorData(self, editor: QWidget, index: Index) -> None:
        assert isinstance(editor, QComboBox)
        editor.setCurrentText(str(index.data()))

    def setModelData(self, editor: QWidget, model: QAbstractItemModel, index: Index) -> None:
        assert isinstance(editor, QComboBox)
        model.setData(index, editor.currentText())
