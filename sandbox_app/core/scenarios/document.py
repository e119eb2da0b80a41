"""The scenario being edited: which file it belongs to, what that file holds, and edits kept
across a restart with that identity attached.

Closing the window never loses edits (an editor's "hot exit"): they are kept as
:class:`KeptEdits` and come back next time *as what they were*: edits to a file go back to
that file only, and untitled edits stay untitled, so Save asks for a name. The baseline of an
untitled document travels with its edits; a file's baseline is whatever the file holds now.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.scenario_file import (
    load_scenario,
    save_scenario,
    scenario_from_dict,
    scenario_to_dict,
    scenarios_dir,
)
from sandbox_app.core.untrusted.file_reader import parse_json

KEPT_EDITS_VERSION = 2  # version 1 stored the edited scenario alone, without its file


@dataclass(frozen=True)
class KeptEdits:
    """Unsaved edits set aside when the window closed."""

    edited: Scenario
    path: Path | None  # the file they belong to; None: an untitled scenario
    baseline: Scenario  # what the edits started from (for a file: its content at the time)

    def to_json(self) -> str:
        return json.dumps(
            {
                "kept_edits": KEPT_EDITS_VERSION,
                "path": None if self.path is None else str(self.path),
                "edited": scenario_to_dict(self.edited),
                "baseline": scenario_to_dict(self.baseline),
            },
            ensure_ascii=False,
        )

    @staticmethod
    def from_json(text: str) -> KeptEdits | None:
        """Read what :meth:`to_json` wrote; None for a damaged entry (never an exception)."""
        try:
            data: Any = parse_json(text, "the kept edits", "kept edits")  # depth-limited
            if isinstance(data, dict) and data.get("kept_edits") == KEPT_EDITS_VERSION:
                path = data.get("path")
                return KeptEdits(
                    scenario_from_dict(data.get("edited")),
                    Path(path) if isinstance(path, str) and path else None,
                    scenario_from_dict(data.get("baseline")),
                )
            # An entry from an older version names no file: it can only come back untitled,
            # since guessing its file is how edits were once written to the wrong one.
            edited = scenario_from_dict(data)
        except (ValueError, RecursionError):  # ScenarioError is a ValueError
            return None
        return KeptEdits(edited, None, Scenario(title=edited.title))


class ScenarioDocument:
    """Where the scenario lives (``path``) and what was last opened or saved (``saved``)."""

    def __init__(self, saved: Scenario, path: Path | None = None) -> None:
        self.saved = saved
        self.path = path

    @classmethod
    def open(cls, path: str | Path) -> ScenarioDocument:
        """Raises :class:`ScenarioError` with one line; nothing changes on failure."""
        return cls(load_scenario(path), Path(path))

    @property
    def title(self) -> str:
        return self.saved.title

    @property
    def needs_name(self) -> bool:
        """Save must ask where: untitled, or a built-in example (never overwritten)."""
        return self.path is None or self.path.resolve().parent == scenarios_dir().resolve()

    def is_modified(self, current: Scenario) -> bool:
        """Whether the user changed anything. The prompt history's runs are not an edit: a
        Run alone never asks to be saved (the history rides with the next Save or kept
        edits); a version named, noted or starred is the user's, and is."""
        if _annotations(current) != _annotations(self.saved):
            return True
        return current.with_changes(prompt_history=self.saved.prompt_history) != self.saved

    def save(self, current: Scenario, path: Path | None = None) -> None:
        """Write ``current`` to ``path`` (Save as) or to the document's own file.

        Raises OSError (:class:`~sandbox_app.core.scenarios.scenario_file.SaveRefused` for a
        read-only file);
        the document is unchanged then.
        """
        target = path or self.path
        if target is None:
            raise ValueError("an untitled scenario needs a file name (Save as)")
        save_scenario(current, target)
        self.saved, self.path = current, target

    def keep(self, current: Scenario) -> KeptEdits | None:
        """The edits to set aside at close, or None when there are none."""
        if not self.is_modified(current):
            return None
        return KeptEdits(current, self.path, self.saved)

    @classmethod
    def restore(cls, kept: KeptEdits) -> tuple[ScenarioDocument, str]:
        """The document kept edits belong to, and a one-line notice if it could not be found.

        A file that can no longer be read gives its edits back as an untitled scenario: they
        are never lost, and never written anywhere without the user choosing where.
        """
        if kept.path is None:
            return cls(kept.baseline), ""
        try:
            return cls.open(kept.path), ""
        except ScenarioError as err:
            notice = (
                f"Your unsaved edits to {kept.path.name} are back, untitled: "
                f"the file can no longer be opened ({err})"
            )
            return cls(kept.baseline), notice


def _annotations(scenario: Scenario) -> dict[str, tuple[str, str, bool]]:
    """What the user wrote on the history's versions: name, note and star by id."""
    return {
        e.id: (e.name, e.note, e.starred)
        for e in scenario.prompt_history
        if e.name or e.note or e.starred
    }
