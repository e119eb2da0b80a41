"""The comparison's Export button: the table copied as Markdown, then one entry per format of
core/results/exports.py's COMPARE_FORMATS and TEST_SET_FORMATS (the menu, its labels and each save
dialog's filter are read from them). A write that fails is one line in the comparison's
message label."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QApplication, QFileDialog, QLabel, QMenu, QToolButton, QWidget

from sandbox_app.core.results.exports import (
    COMPARE_FORMATS,
    TEST_SET_FORMATS,
    Comparison,
    EvalResults,
    ExportError,
    Formats,
    to_markdown,
)


class ComparisonExports:
    def __init__(
        self,
        parent: QWidget,
        comparison: Callable[[], Comparison],
        test_set: Callable[[], EvalResults],
        message: QLabel,
    ) -> None:
        self._parent, self._message = parent, message
        self._comparison, self._test_set = comparison, test_set
        self.button = QToolButton()
        self.button.setText("Export")
        self.button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.button)
        menu.addAction("Copy table (Markdown)", self.copy_table)
        for kind, comparison_format in COMPARE_FORMATS.items():
            menu.addAction(f"{comparison_format.label}…", partial(self._ask, kind))
        menu.addSeparator()  # the Test set tab's results
        for kind, results_format in TEST_SET_FORMATS.items():
            menu.addAction(f"Test set: {results_format.label}…", partial(self._ask, kind, True))
        self.button.setMenu(menu)

    def copy_table(self) -> None:
        QApplication.clipboard().setText(to_markdown(self._comparison().rows))

    def _ask(self, kind: str, test_set: bool = False) -> None:
        stem = "test-set" if test_set else "comparison"
        formats: Formats[Any] = TEST_SET_FORMATS if test_set else COMPARE_FORMATS
        exporter = formats.exporter(kind)
        name, _ = QFileDialog.getSaveFileName(
            self._parent, f"Export {stem}", stem + exporter.suffix, exporter.filter
        )
        if name:
            self.export_to(Path(name), kind, test_set)

    def export_to(self, path: Path, kind: str, test_set: bool = False) -> bool:
        """Write the comparison (or the test set's results) to ``path`` in format ``kind``
        (a ValueError naming the formats for an unknown one)."""
        try:
            if test_set:
                TEST_SET_FORMATS.exporter(kind).save(self._test_set(), path)
            else:
                COMPARE_FORMATS.exporter(kind).save(self._comparison(), path)
        except ExportError as err:
            self._message.setText(f"⚠ {err}")
            return False
        except OSError as err:
            self._message.setText(f"⚠ Cannot write {path.name}: {err.strerror or err}.")
            return False
        self._message.setText(f"Exported to {path.name}.")
        return True
