"""Prompt versions: what the model is told apart from the question, kept as a history.

A :class:`PromptVersion` is the effective system template (the scenario's, or the default),
the dialect, the enabled tools each with its description and input hint, and the
tool-calling mode. Its id is the sha256 of a canonical JSON of those, so the same words give
the same id wherever and whenever they were run; it is shown as its first 8 hex digits.

The history holds one entry per id, most recently used last. Running a version that differs
from the last entry's makes it the last: a new entry, or an older one moved to the end with
its name, note, star and run count. One entry per id, not one per return, because the id
*is* the content: a name, a star or a pass rate belongs to the words, and two entries of one
id would split its run count and make "find by id" answer twice. The history is capped at
:data:`MAX_HISTORY`, the least recently used unstarred entries dropped first.

No Qt, no file format (prompt_history_file.py), no Scenario import (scenario.py holds the
history and imports this): :func:`version_of` takes anything with the scenario's prompt fields.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cached_property
from typing import Any, Protocol

from sandbox_app.core.react_format.prompts import DEFAULT_TEMPLATE
from sandbox_app.core.scenarios.lane_settings import LaneSettings
from sandbox_app.core.tools import Tool

MAX_HISTORY = 200
SHORT_ID = 8  # hex digits shown: ~4 billion values, plenty for one scenario's 200


class VersionError(ValueError):
    """A version reference that names none or several versions; one line saying which."""


@dataclass(frozen=True)
class ToolText:
    """What the prompt says of one tool."""

    name: str
    description: str
    input_hint: str


@dataclass(frozen=True)
class PromptVersion:
    template: str  # the effective template: the default one written out, never None
    dialect: str  # the scenario's choice ("auto" included: it changes what is parsed)
    tools: tuple[ToolText, ...]  # in prompt order
    tool_calling: str  # "react" or "native"

    def to_dict(self) -> dict[str, Any]:
        return {
            "template": self.template,
            "dialect": self.dialect,
            "tools": [
                {"name": t.name, "description": t.description, "input_hint": t.input_hint}
                for t in self.tools
            ],
            "tool_calling": self.tool_calling,
        }

    @cached_property
    def id(self) -> str:
        """sha256 of the canonical JSON (sorted keys, no spaces, UTF-8): stable across runs,
        machines and Python versions."""
        canonical = json.dumps(
            self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    @property
    def short(self) -> str:
        return self.id[:SHORT_ID]

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tools)


class Prompted(Protocol):
    """The scenario's fields a version is made of (core/scenarios/scenario.py's Scenario)."""

    @property
    def system_prompt(self) -> str | None: ...
    @property
    def dialect(self) -> str: ...
    @property
    def model(self) -> LaneSettings: ...


def version_of(scenario: Prompted, tools: Iterable[Tool]) -> PromptVersion:
    """The version a run of ``scenario`` with ``tools`` (the run's own, in prompt order) is
    told. ``scenario.model`` is the run's lane settings (a lane's tool-calling mode counts)."""
    return PromptVersion(
        template=DEFAULT_TEMPLATE if scenario.system_prompt is None else scenario.system_prompt,
        dialect=scenario.dialect,
        tools=tuple(ToolText(t.name, t.description, t.input_hint) for t in tools),
        tool_calling=scenario.model.tool_calling,
    )


@dataclass(frozen=True)
class PromptEntry:
    """One version in a scenario's history."""

    version: PromptVersion
    time: datetime  # when it was first run
    last_used: datetime
    name: str = ""
    note: str = ""
    starred: bool = False
    runs: int = 0  # runs made with it (a Repeat of N counts N)
    # Runs with an expected answer that gave one, and how many of those were right: the pass
    # rate measured with these words (a stopped run, or one with nothing to check, is neither).
    checked: int = 0
    passed: int = 0

    @property
    def id(self) -> str:
        return self.version.id

    @property
    def short(self) -> str:
        return self.version.short

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.checked if self.checked else None

    @property
    def label(self) -> str:
        """The name if it has one, else the short id."""
        return self.name or self.short


History = tuple[PromptEntry, ...]


def record(history: History, version: PromptVersion, now: datetime, runs: int = 1) -> History:
    """``history`` after ``runs`` runs of ``version``: the last entry counted again when it is
    the same, else the version made (or moved to be) the last."""
    if history and history[-1].id == version.id:
        last = history[-1]
        return (*history[:-1], replace(last, runs=last.runs + runs, last_used=now))
    earlier = next((e for e in history if e.id == version.id), None)
    rest = tuple(e for e in history if e.id != version.id)
    if earlier is None:
        entry = PromptEntry(version, time=now, last_used=now, runs=runs)
    else:
        entry = replace(earlier, runs=earlier.runs + runs, last_used=now)
    return capped((*rest, entry))


def added(
    history: History, version: PromptVersion, now: datetime, *, name: str = "", note: str = ""
) -> History:
    """``history`` with ``version`` as a new unstarred entry, last (an optimizer's candidate:
    proposed, not run by the user); unchanged when the history holds it already (its name,
    star and note are the user's). No other entry moves."""
    if any(e.id == version.id for e in history):
        return history
    return capped((*history, PromptEntry(version, now, now, name=name, note=note)))


def graded(history: History, version_id: str, passed: bool) -> History:
    """``history`` with one checked answer of version ``version_id`` counted (a version no
    longer in the history, dropped by the cap, is left out)."""
    return edited(
        history,
        version_id,
        lambda e: replace(e, checked=e.checked + 1, passed=e.passed + int(passed)),
    )


def edited(
    history: History, version_id: str, change: Callable[[PromptEntry], PromptEntry]
) -> History:
    """``history`` with the entry of ``version_id`` changed (named, starred, noted, graded)."""
    return tuple(change(e) if e.id == version_id else e for e in history)


def capped(history: History, limit: int = MAX_HISTORY) -> History:
    """At most ``limit`` entries, the oldest unstarred dropped first; starred entries and the
    last one are always kept (so many stars may leave more than ``limit``)."""
    extra = len(history) - limit
    if extra <= 0:
        return history
    kept: list[PromptEntry] = []
    for i, entry in enumerate(history):
        if extra > 0 and not entry.starred and i < len(history) - 1:
            extra -= 1
            continue
        kept.append(entry)
    return tuple(kept)


def names_of(history: History) -> dict[str, str]:
    """Each named version's id → its name (how a comparison says a version)."""
    return {entry.id: entry.name for entry in history if entry.name}


def version_label(version: str, names: Mapping[str, str]) -> str:
    """``brief (31bfb942)``: a version's name first, its short id second; unnamed, the id."""
    name, short = names.get(version, ""), version[:SHORT_ID] or "—"
    return f"{name} ({short})" if name else short


def find(history: History, ref: str) -> PromptEntry:
    """The entry ``ref`` names: its name (any case) or a prefix of its id. Raises
    :class:`VersionError` (one line) for none or several."""
    wanted = ref.strip()
    if not wanted:
        raise VersionError("name a prompt version by its id (or the start of it) or its name")
    folded = wanted.casefold()
    found = [e for e in history if e.name.casefold() == folded or e.id.startswith(folded)]
    if not found:
        if not history:
            raise VersionError(f"no prompt version {wanted!r}: this scenario has no history yet")
        known = ", ".join(e.short + (f" ({e.name})" if e.name else "") for e in history[-5:])
        more = f" (last {min(5, len(history))} of {len(history)})" if len(history) > 5 else ""
        raise VersionError(f"no prompt version {wanted!r}; the history has {known}{more}")
    if len(found) > 1:
        names = ", ".join(e.short + (f" ({e.name})" if e.name else "") for e in found[:5])
        raise VersionError(
            f"{wanted!r} matches {len(found)} prompt versions ({names}); give more of the id"
        )
    return found[0]
