"""The window's export menus and save dialogs are read from the one registry
(core/results/exports.py,
ui/window/run_exports.py): every format appears with its label and suffix and writes a file; a
format added to the registry appears without touching the menu's code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QLabel, QWidget
from pytestqt.qtbot import QtBot

from sandbox_app.core.results.exports import (
    COMPARE_FORMATS,
    TEST_SET_FORMATS,
    Comparison,
    EvalResults,
    Exporter,
)
from sandbox_app.ui.compare import compare_exports
from sandbox_app.ui.window.main_window import MainWindow
from sandbox_app.ui.window.run_exports import RUN_EXPORTS, export_run
from tests.ui.test_run_exports import finished_run


class SaveDialog:
    """QFileDialog.getSaveFileName, answered with ``answer`` and each call's arguments kept."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[str, str, str]] = []  # title, proposed name, filter
        self.answer: tuple[str, str] = ("", "")
        monkeypatch.setattr(QFileDialog, "getSaveFileName", self)

    def __call__(self, _parent: QWidget, title: str, name: str, filters: str) -> tuple[str, str]:
        self.calls.append((title, name, filters))
        return self.answer


def _menu_texts(actions: list[QAction]) -> list[str]:
    return [action.text() for action in actions if not action.isSeparator()]


def test_the_export_button_offers_every_registered_format_and_writes_it(
    window: MainWindow, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    dialog = SaveDialog(monkeypatch)
    menu = window.compare.export_button.menu()
    entries: list[tuple[str, str, Exporter[Any], str]] = [
        *((kind, f"{e.label}…", e, "comparison") for kind, e in COMPARE_FORMATS.items()),
        *((kind, f"Test set: {e.label}…", e, "test-set") for kind, e in TEST_SET_FORMATS.items()),
    ]
    assert _menu_texts(menu.actions()) == [
        "Copy table (Markdown)",
        *(text for _, text, _, _ in entries),
    ]
    actions = {action.text(): action for action in menu.actions()}
    for kind, text, exporter, stem in entries:
        path = tmp_path / f"{stem}-{kind}{exporter.suffix}"
        dialog.answer = (str(path), exporter.filter)
        actions[text].trigger()
        # The dialog proposes the format's suffix and offers its filter; the file is written.
        assert dialog.calls[-1][1:] == (f"{stem}{exporter.suffix}", exporter.filter)
        assert f"(*{exporter.suffix})" in exporter.filter
        assert path.stat().st_size > 0, text
        assert window.compare.message.text() == f"Exported to {path.name}."


def test_an_unknown_format_is_an_error_naming_the_known_ones(
    window: MainWindow, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match=r"unknown export format 'xlsx'; choose md, csv, json$"):
        window.compare.exports.export_to(tmp_path / "c.xlsx", "xlsx")
    with pytest.raises(ValueError, match=r"choose md, csv, json, html$"):
        window.compare.exports.export_to(tmp_path / "t.xlsx", "xlsx", test_set=True)
    assert not (tmp_path / "c.xlsx").exists()
    assert not (tmp_path / "t.xlsx").exists()


def test_a_format_added_to_the_registry_is_in_the_menu(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    plain = Exporter[Comparison]("txt", "Plain text", ".txt", lambda c: f"{c.title}\n")
    monkeypatch.setattr(compare_exports, "COMPARE_FORMATS", COMPARE_FORMATS.plus(plain))
    parent, message = QWidget(), QLabel()
    qtbot.addWidget(parent)
    exports = compare_exports.ComparisonExports(
        parent,
        lambda: Comparison("A title", "Q", [], []),
        lambda: EvalResults("", [], [], []),
        message,
    )
    dialog = SaveDialog(monkeypatch)
    dialog.answer = (str(tmp_path / "c.txt"), plain.filter)
    menu = exports.button.menu()
    (action,) = [a for a in menu.actions() if a.text() == "Plain text…"]
    action.trigger()
    assert dialog.calls == [("Export comparison", "comparison.txt", "Plain text (*.txt)")]
    assert (tmp_path / "c.txt").read_text(encoding="utf-8") == "A title\n"


def test_export_run_offers_every_registered_format_and_writes_it(
    qtbot: QtBot, window: MainWindow, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    finished_run(qtbot, window)
    dialog = SaveDialog(monkeypatch)
    (action,) = [a for a in window.findChildren(QAction) if a.text() == "&Export run…"]
    assert [kind for kind in RUN_EXPORTS] == ["md", "html", "json", "png"]
    for kind, exporter in RUN_EXPORTS.items():
        path = tmp_path / f"run-{kind}{exporter.suffix}"
        dialog.answer = (str(path), exporter.filter)
        action.trigger()
        assert path.stat().st_size > 0, kind
        assert window.statusBar().currentMessage() == f"Exported the run to {path.name}."
    # One filter per format, each with its label and suffix, in the registry's order.
    filters = dialog.calls[-1][2].split(";;")
    assert filters == [e.filter for e in RUN_EXPORTS.values()]
    assert filters[0] == "Markdown (*.md)"
    assert filters[-1] == "PNG image (*.png)"


def test_a_name_without_a_suffix_takes_the_chosen_filters(
    qtbot: QtBot, window: MainWindow, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    finished_run(qtbot, window)
    dialog = SaveDialog(monkeypatch)
    dialog.answer = (str(tmp_path / "slides"), RUN_EXPORTS.exporter("png").filter)
    (action,) = [a for a in window.findChildren(QAction) if a.text() == "&Export run…"]
    action.trigger()
    assert (tmp_path / "slides.png").read_bytes().startswith(b"\x89PNG")
    assert not export_run(window, tmp_path / "run.txt")
    assert window.statusBar().currentMessage() == "⚠ run.txt: use .md, .html, .json or .png."
