"""Which prompt version a pane's run on screen was told, in words: "ran prompt brief
(1a2b3c4d)" — the version's name first, as the scenario's history had it when the run was
made, then its short id; an unnamed version by its short id alone.

The run pane keeps the line at the end of its controls row (the Run tab shows it there); a
lane moves it into its title row (lane_widget.py). It is redrawn whenever the run on screen
changes: a run starts, a repeat or a fork is kept, another kept run is picked, all are
forgotten.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QComboBox, QHBoxLayout

from sandbox_app.core.running.events import Notice
from sandbox_app.core.running.records import RunRecord
from sandbox_app.core.scenarios.prompt_versions import SHORT_ID, names_of
from sandbox_app.core.tools.outside import clean_description
from sandbox_app.ui.common.notice_line import NoticeLine

MAX_NAME = 60  # characters of a version's name: a label, not a note


def ran_prompt(record: RunRecord | None) -> str:
    """The line for ``record`` ("" before any run, or for a run told no version and no note):
    the version first (what the line is for), then what the run said before its first step
    (the offline model: whether its replies were written for this version, BackendKind.notes;
    the trace's first line says it whole)."""
    if record is None:
        return ""
    said: list[str] = []
    version = record.settings.prompt_version
    if version:
        history = record.scenario.prompt_history if record.scenario else ()
        name = clean_description(names_of(history).get(version, ""), MAX_NAME)  # from a file
        short = version[:SHORT_ID]
        said.append(f"ran prompt {name} ({short})" if name else f"ran prompt {short}")
    said += [e.text for e in record.events if isinstance(e, Notice) and e.step == 0]
    return " · ".join(said)


class RanPrompt:
    """The line, added to ``controls``, saying it for the run ``shown`` returns whenever
    ``picker`` (the pane's run picker) shows another run."""

    def __init__(
        self,
        controls: QHBoxLayout,
        picker: QComboBox,
        shown: Callable[[], RunRecord | None],
    ) -> None:
        # One line, cut with … where the row is narrow (the whole in its tooltip): it never
        # pushes a lane's name or status out.
        self.label = NoticeLine()
        self.label.setObjectName("lanePrompt")
        controls.addWidget(self.label, 1)  # a share of the row: a NoticeLine asks no width
        self._shown = shown
        picker.currentIndexChanged.connect(lambda _index: self.refresh())

    def refresh(self) -> None:
        """Say it again for the run on screen (the pane calls this as a run starts and ends:
        the offline model's note comes with its first events)."""
        self.label.say(ran_prompt(self._shown()))
