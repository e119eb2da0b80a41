"""File → Open trace…: a trace from elsewhere (core/otel/otel_import.py) opened like a
recording, its scenario made the one being edited.

The trace's scenario (its system prompt, question, tool-calling mode and tools: the mocks
and ask-me tools standing in for implementations the trace lacks) replaces the window's
scenario as an untitled one, unsaved edits offered for saving first as File → Open does; its
run plays in the Run tab through the recording player; Fork from step k then goes on live
with the model the panel shows and those tools. A file that cannot be read is one line in
the status bar and changes nothing.

A long trace (more than its first read: core/otel/otel_import.TraceStream) is shown as it is
read, at once whatever the pace: its first steps are on screen while the rest of the file is
read, in the long trace's rows (ui/trace/trace_stack.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtWidgets import QFileDialog

from sandbox_app.core.running.recording import RecordedLane
from sandbox_app.core.scenarios.document import ScenarioDocument

if TYPE_CHECKING:  # the trace reader is imported when a trace is first opened
    from PySide6.QtWidgets import QStatusBar

    from sandbox_app.core.otel.otel_import import ImportedTrace, TraceStream
    from sandbox_app.ui.window.file_actions import FileActions
    from sandbox_app.ui.window.recordings import RecordingActions
    from sandbox_app.ui.window.run_tabs import RunTabs

FILTER = "OpenTelemetry traces (*.json *.jsonl *.pb *.otlp *.bin);;All files (*)"


class TraceStage(Protocol):
    """What opening a trace needs of the window (MainWindow is one)."""

    @property
    def files(self) -> FileActions: ...

    @property
    def recordings(self) -> RecordingActions: ...

    @property
    def run_tabs(self) -> RunTabs: ...

    def statusBar(self) -> QStatusBar: ...


class TraceActions:
    def __init__(self, stage: TraceStage) -> None:
        self.stage = stage
        self.last: ImportedTrace | None = None  # the (short) trace opened last
        self.reading: TraceStream | None = None  # the long trace opened last, being read

    def open_dialog(self) -> None:
        parent = self.stage.run_tabs.run_pane.window()
        name, _ = QFileDialog.getOpenFileName(parent, "Open trace", "", FILTER)
        if name:
            self.open(Path(name))

    def open(self, path: Path) -> bool:
        """Read the trace; on success offer to save unsaved edits, then show it."""
        from sandbox_app.core.otel.otel_import import TraceStream, whole
        from sandbox_app.core.otel.otel_spans import TraceError

        try:
            stream = TraceStream(path)
            trace = whole(stream) if stream.done else None  # short: read, and paced
        except TraceError as err:
            self.stage.statusBar().showMessage(f"⚠ {err}")
            return False
        question = (
            f"Save the edits to “{self.stage.files.document.title}” before opening the trace?"
        )
        self.stage.files.replace_scenario(lambda: self._show(stream, trace, path), question)
        return True

    def _show(self, stream: TraceStream, trace: ImportedTrace | None, path: Path) -> None:
        stage = self.stage
        self.last, self.reading = trace, None if trace else stream
        stage.files.workspace.model.show(ScenarioDocument(stream.scenario))
        stage.run_tabs.show_run_tab()
        if trace is not None:
            stage.recordings.replay(trace.lane, stream.scenario)
        else:
            lane = RecordedLane(stream.settings, ())
            stage.recordings.replay(lane, stream.scenario, stream.timed())
        gaps = len(stream.notices)
        said = f" · {gaps} notice(s) above the trace" if gaps else ""
        model = stream.settings.model or "an unnamed model"
        stage.statusBar().showMessage(
            f"▶ Trace of {model} from {path.name}{said} · right-click a step to fork it live"
        )
