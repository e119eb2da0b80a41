"""File → Export run…: the Run tab's run on screen in one of core/results/exports.py's run formats
(Markdown, a self-contained HTML page, a JSON recording), or the trace as a PNG for slides.

The PNG is drawn from the run's record, not grabbed from the screen: a title (the question),
the model and the answer, then the trace in large type in the high-contrast colours, the
thinking folded to one line a block, no "click to fold" hints, cropped to the text."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QImage,
    QImageWriter,
    QPainter,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QFileDialog

from sandbox_app import __version__
from sandbox_app.core.results.exports import RUN_FORMATS, Exporter, ExportError, RunExport
from sandbox_app.core.results.run_export import slide_lines
from sandbox_app.core.running.recording import recording_of
from sandbox_app.core.running.records import RunRecord
from sandbox_app.ui.common.theme import HIGH_CONTRAST_LIGHT, LIGHT

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStatusBar

    from sandbox_app.ui.window.run_tabs import RunTab

SLIDE_POINTS = 20.0  # read from the back of a room on a 1280-px projector
SLIDE_WIDTH = 1600  # px at most; lines wrap beyond it
MARGIN = 24  # px around the text
MAX_HEIGHT = 30000  # px: QImage's limit is 32,767; a longer run is an HTML export


def slide_png(run: RunExport) -> bytes:
    """The slide as a PNG file's bytes (ExportError when too tall for one picture)."""
    image = slide_image(run.record)
    if image.isNull():
        raise ExportError("The run is too long for one picture: export .html.")
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QImageWriter(buffer, QByteArray(b"PNG"))
    if not writer.write(image):
        raise ExportError(f"Cannot draw the picture: {writer.errorString()}.")
    return bytes(buffer.data().data())


# Core's run formats and the PNG, the one format only Qt can draw: added here rather than
# registered into core's table, so core stays Qt-free and what the CLI sees never depends on
# whether the window's modules were imported.
RUN_EXPORTS = RUN_FORMATS.plus(Exporter("png", "PNG image", ".png", slide_png))
FILTERS = RUN_EXPORTS.dialog_filter()


def export_run_dialog(tab: RunTab) -> None:
    name, chosen = QFileDialog.getSaveFileName(tab.run_pane.window(), "Export run", "", FILTERS)
    if name:
        export_run(tab, Path(name), chosen)


def export_run(tab: RunTab, path: Path, chosen_filter: str = "") -> bool:
    """Write the run on screen in the Run tab to ``path``, its format by the file's suffix
    (or, for a name without one, the dialog's chosen filter, whose suffix it then gets)."""
    pane, status = tab.run_pane, tab.statusBar()
    record = pane.shown_record()
    if record is None or not record.events:
        return _say(status, "Nothing to export yet: run it first.")
    exporter = RUN_EXPORTS.for_path(path, chosen_filter)
    if exporter is None:
        return _say(status, f"⚠ {path.name}: use {RUN_EXPORTS.suffixes()}.")
    if not path.suffix:
        path = path.with_suffix(exporter.suffix)
    lane = pane.recorded()  # the run with its timing, for a recording
    scenario = record.scenario or tab.current_scenario()
    recording = recording_of(scenario, [lane], __version__) if lane is not None else None
    try:
        exporter.save(RunExport(record, LIGHT, recording), path)
    except ExportError as err:
        return _say(status, f"⚠ {err}")
    except OSError as err:
        return _say(status, f"⚠ Cannot write {path.name}: {err.strerror or err}.")
    return _say(status, f"Exported the run to {path.name}.", True)


def slide_document(record: RunRecord) -> QTextDocument:
    """The run as a slide shows it, laid out at most SLIDE_WIDTH pixels wide (then narrower if
    the text is: the picture is cropped to it). Written as plain text, never markup."""
    document = QTextDocument()
    document.setDocumentMargin(MARGIN)
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setPointSizeF(SLIDE_POINTS)
    document.setDefaultFont(font)
    title, subtitle, trace = slide_lines(record)
    cursor = QTextCursor(document)
    heading = QTextCharFormat()
    heading.setFontWeight(QFont.Weight.Bold)
    heading.setFontPointSize(SLIDE_POINTS * 1.3)
    cursor.insertText(title, heading)
    cursor.insertBlock()
    cursor.insertText(subtitle, HIGH_CONTRAST_LIGHT["step"].char_format())
    cursor.insertBlock()
    for line, role in trace:
        cursor.insertBlock()
        style = HIGH_CONTRAST_LIGHT.get(role)
        cursor.insertText(line, style.char_format() if style else QTextCharFormat())
    document.setTextWidth(SLIDE_WIDTH)
    document.setTextWidth(min(SLIDE_WIDTH, math.ceil(document.idealWidth())))
    return document


def slide_image(record: RunRecord) -> QImage:
    """The slide as a picture (a null image when it would be too tall for one)."""
    document = slide_document(record)
    width, height = math.ceil(document.textWidth()), math.ceil(document.size().height())
    if height > MAX_HEIGHT:
        return QImage()
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    document.drawContents(painter)
    painter.end()
    return image


def _say(status: QStatusBar, text: str, ok: bool = False) -> bool:
    status.showMessage(text)
    return ok
