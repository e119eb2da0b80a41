"""The comparison's Export button: the table copied as Markdown, or written as Markdown, CSV or
JSON (every lane's trace), and the test set's results in its formats (core/exports.py,
core/eval_report.py). A write that fails is one line in the comparison's message label."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from PySide6.QtWidgets import QApplication, QFileDialog, QLabel, QMenu, QToolButton, QWidget

from sandbox_app.core.exports import to_markdown

TEST_SET_KINDS = (("md", "Markdown"), ("csv", "CSV"), ("json", "JSON"), ("html", "HTML"))


class ComparisonExports:
    def __init__(
        self,
        parent: QWidget,
        comparison: Callable[[str], str],
        test_set: Callable[[str], str],
        rows: Callable[[], list[dict[str, str]]],
        message: QLabel,
    ) -> None:
        self._parent, self._message, self._rows = parent, message, rows
        self._writers = {False: comparison, True: test_set}
        self.button = QToolButton()
        self.button.setText("Export")
        self.button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.button)
        menu.addAction("Copy table (Markdown)", self.copy_table)
        menu.addAction("Markdown…", lambda: self._ask("md"))
        menu.addAction("CSV…", lambda: self._ask("csv"))
        menu.addAction("JSON with every trace…", lambda: self._ask("json"))
        menu.addSeparator()  # the Test set tab's results
        for kind, label in TEST_SET_KINDS:
            menu.addAction(f"Test set: {label}…", partial(self._ask, kind, True))
        self.button.setMenu(menu)

    def copy_table(self) -> None:
        QApplication.clipboard().setText(to_markdown(self._rows()))

    def _ask(self, kind: str, test_set: bool = False) -> None:
        stem = "test-set" if test_set else "comparison"
        name, _ = QFileDialog.getSaveFileName(self._parent, f"Export {stem}", f"{stem}.{kind}")
        if name:
            self.export_to(Path(name), kind, test_set)

    def export_to(self, path: Path, kind: str, test_set: bool = False) -> bool:
        text = self._writers[test_set](kind)
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as err:
            self._message.setText(f"⚠ Cannot write {path.name}: {err.strerror or err}.")
            return False
        self._message.setText(f"Exported to {path.name}.")
        return True
