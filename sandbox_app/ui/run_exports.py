"""File → Export run…: the Run tab's run on screen as Markdown, a self-contained HTML page,
a JSON recording, or the trace as a PNG for slides (core/run_export.py, core/recording.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog

from sandbox_app.core.run_export import run_html, run_markdown
from sandbox_app.ui.theme import LIGHT

if TYPE_CHECKING:
    from sandbox_app.ui.main_window import MainWindow

FILTERS = "Markdown (*.md);;HTML page (*.html);;Recording (*.json);;PNG image (*.png)"


def export_run_dialog(window: MainWindow) -> None:
    name, _ = QFileDialog.getSaveFileName(window, "Export run", "", FILTERS)
    if name:
        export_run(window, Path(name))


def export_run(window: MainWindow, path: Path) -> bool:
    """Write the run on screen in the Run tab to ``path``, its format by the file's suffix."""
    pane = window.run_pane
    record = pane.shown_record()
    kind = path.suffix.lower()
    if record is None or not record.events:
        return _say(window, "Nothing to export yet: run it first.")
    if kind == ".json":
        window.tabs.setCurrentIndex(0)
        return window.recordings.save_to(path)
    try:
        if kind == ".png":
            pane.trace.flush_all()
            if not pane.trace.viewport().grab().save(str(path), "PNG"):
                raise OSError(f"cannot write {path.name}")
        elif kind in (".html", ".htm"):
            path.write_text(run_html(record, LIGHT), encoding="utf-8")
        elif kind == ".md":
            path.write_text(run_markdown(record), encoding="utf-8")
        else:
            return _say(window, f"⚠ {path.name}: use .md, .html, .json or .png.")
    except OSError as err:
        return _say(window, f"⚠ Cannot write {path.name}: {err.strerror or err}.")
    return _say(window, f"Exported the run to {path.name}.", True)


def _say(window: MainWindow, text: str, ok: bool = False) -> bool:
    window.statusBar().showMessage(text)
    return ok
