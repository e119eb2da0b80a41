"""File → Save recording… and Open recording…, and the pace recordings play at.

Saving takes the run on screen in the Run tab, or every lane of the comparison when the
Compare tab is showing. Opening plays the recording where it belongs (one lane: the Run tab;
more: the compare lanes, table included), labelled in the status bar with the recorded models
and date (until a live run starts), and says when it was made from a prompt, tools or settings
other than the window's: it always plays what was recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QSignalBlocker
from PySide6.QtWidgets import QFileDialog

import sandbox_app
from sandbox_app.backends.registry import SCRIPTED
from sandbox_app.core.running.recording import (
    RecordedLane,
    RecordingError,
    Timed,
    recording_of,
    recordings_dir,
    save_recording,
)
from sandbox_app.core.running.recording_stream import open_recording
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.untrusted.file_reader import stored_number

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QStatusBar

    from sandbox_app.ui.lane.backend_panel import BackendPanel
    from sandbox_app.ui.window.presenter import Presenter
    from sandbox_app.ui.window.run_tabs import RunTabs

SPEEDS = (("As recorded", 1.0), ("2×", 2.0), ("4×", 4.0), ("At once", 0.0))
FILTER = "Recordings (*.json);;All files (*)"


class Stage(Protocol):
    """What recordings need of the window (MainWindow is one): the runs on screen, the Run
    tab's model panel, the presenter (its summary names the model), the scenario being edited,
    the settings the pace is kept in and the status line."""

    @property
    def settings(self) -> QSettings: ...

    @property
    def run_tabs(self) -> RunTabs: ...

    @property
    def backend_panel(self) -> BackendPanel: ...

    @property
    def presenter(self) -> Presenter: ...

    def current_scenario(self) -> Scenario: ...

    def statusBar(self) -> QStatusBar: ...


class RecordingActions:
    def __init__(self, stage: Stage) -> None:
        self.stage = stage
        # Whatever the settings file holds: a pace the menu does not offer is "as recorded".
        stored = stored_number(stage.settings.value("replay_speed", 1.0), 1.0, 0.0, 4.0)
        self.speed = stored if stored in dict(SPEEDS).values() else 1.0
        # The Run tab's panel's own backend, URL and model while it shows a recording's.
        self.before_replay: tuple[str, str, str] | None = None
        self.playing_line = ""  # the status bar's "▶ Recording of …" line, while it stands

    def live(self, scenario: Scenario) -> Scenario:
        """A live run starts (the Run tab's or a lane's: each asks its pace then): the
        recording's line leaves the status bar, and the scenario is :meth:`paced`."""
        status = self.stage.statusBar()
        if self.playing_line and status.currentMessage() == self.playing_line:
            status.clearMessage()
        self.playing_line = ""
        return self.paced(scenario)

    def paced(self, scenario: Scenario) -> Scenario:
        """The scenario as the offline model runs it at this pace (a presenter's control: the
        same as a recording's). The scenario being edited is not changed."""
        if self.speed == 1.0:
            return scenario
        tokens_per_second = scenario.script.tokens_per_second * self.speed  # 0: at once
        return scenario.with_changes(
            script=replace(scenario.script, tokens_per_second=tokens_per_second)
        )

    def set_speed(self, speed: float) -> None:
        self.speed = speed
        self.stage.settings.setValue("replay_speed", speed)

    def save_dialog(self) -> None:
        parent = self.stage.run_tabs.run_pane.window()
        name, _ = QFileDialog.getSaveFileName(parent, "Save recording", "", FILTER)
        if name:
            self.save_to(Path(name))

    def open_dialog(self) -> None:
        start = str(recordings_dir())  # the shipped ones, to begin with
        parent = self.stage.run_tabs.run_pane.window()
        name, _ = QFileDialog.getOpenFileName(parent, "Open recording", start, FILTER)
        if name:
            self.play(Path(name))

    def save_to(self, path: Path) -> bool:
        tabs = self.stage.run_tabs
        comparing, panes = tabs.comparing(), tabs.panes()
        lanes = [pane.recorded() for pane in panes]
        kept = [lane for lane in lanes if lane is not None]
        if not kept or (comparing and len(kept) < len(lanes)):
            return self._say("Nothing to record yet: run it first (every lane, in a comparison).")
        latest = panes[0].history.latest
        scenario = (latest.scenario if latest else None) or self.stage.current_scenario()
        try:
            save_recording(recording_of(scenario, kept, sandbox_app.__version__), path)
        except OSError as err:
            return self._say(f"⚠ Cannot write {path.name}: {err.strerror or err}.")
        return self._say(f"Saved a recording of {len(kept)} run(s) to {path.name}.", True)

    def play(self, path: Path) -> bool:
        try:
            recording, more = open_recording(path)  # a long one: read as it plays
        except RecordingError as err:
            return self._say(f"⚠ {err}")
        if len(recording.lanes) == 1:
            self.stage.run_tabs.show_run_tab()
            self.replay(recording.lanes[0], recording.scenario, more, self.speed)
        else:
            self.stage.run_tabs.play_comparison(recording, self.speed)
        pace = next(label for label, speed in SPEEDS if speed == self.speed)
        note = _differences(recording.scenario, self.stage.current_scenario())
        self.playing_line = f"▶ {recording.title()} · {pace}{note}"
        return self._say(self.playing_line, True)

    def replay(
        self,
        lane: RecordedLane,
        scenario: Scenario,
        more: Iterable[Timed] = (),
        speed: float | None = None,
    ) -> None:
        """Play a recorded run in the Run tab, its model shown in the panel (and so in the
        presenter's summary) until the user runs or picks another. ``more``: its events still
        being read (a long trace's, played at once) or checked (a long recording's)."""
        stage = self.stage
        if self.before_replay is None:
            choice = stage.backend_panel.choice()
            self.before_replay = (stage.backend_panel.backend_id(), choice.base_url, choice.model)
        settings = lane.settings
        self._select_quietly(settings.backend or SCRIPTED, settings.base_url, settings.model)
        if speed is None:
            speed = 0.0 if more else self.speed
        stage.run_tabs.run_pane.replay(lane, scenario, speed, more)
        if stage.presenter.on:
            stage.presenter.apply()

    def leave(self) -> None:
        """Before a run (or saving settings): the panel's own choice again, if it shows a
        recording's."""
        if self.before_replay is not None:
            self._select_quietly(*self.before_replay)
            self.before_replay = None

    def _select_quietly(self, backend: str, base_url: str, model: str) -> None:
        panel = self.stage.backend_panel
        # Not an edit of the scenario's model settings, nor the user's own choice: the panel
        # says nothing of it ("file": a recording's URL gets no key until the user confirms).
        with QSignalBlocker(panel):
            panel.select(backend, base_url, model, "file")

    def _say(self, text: str, ok: bool = False) -> bool:
        self.stage.statusBar().showMessage(text)
        return ok


def _differences(recorded: Scenario, shown: Scenario) -> str:
    """What the window shows that the recording was not made with, as a note, or ""."""
    checks: dict[str, Callable[[Scenario], object]] = {
        "prompt": lambda s: (s.system_prompt, s.dialect),
        "question": lambda s: s.question,
        "tools": lambda s: (s.enabled_tools, s.documents, s.custom_tools),
        "settings": lambda s: (s.max_steps, s.model),
    }
    differ = [name for name, key in checks.items() if key(recorded) != key(shown)]
    if not differ:
        return ""
    return (
        f" — recorded with another {', '.join(differ)} than the window shows; it plays what "
        "was recorded"
    )
