"""A scenario's prompt history in its file (the ``prompt_history`` key): written only when
there is one, so a file without it is saved as before; read with one-line errors naming the
entry and field.

Each entry holds its version's words and its id; the id is checked against the words on
reading, so a hand-edited entry is refused rather than kept under an id that is not its own.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sandbox_app.core.react_format.dialects import DIALECTS
from sandbox_app.core.scenarios.lane_settings import TOOL_CALLING
from sandbox_app.core.scenarios.prompt_versions import (
    MAX_HISTORY,
    History,
    PromptEntry,
    PromptVersion,
    ToolText,
    capped,
)
from sandbox_app.core.scenarios.scenario_fields import Fields, ScenarioError

KEY = "prompt_history"
# Far past MAX_HISTORY (starred entries are kept beyond it) but bounded: a file cannot make
# the app hold a million versions.
MAX_ENTRIES = 10 * MAX_HISTORY


def history_to_list(history: History) -> list[dict[str, Any]]:
    return [
        {
            "id": entry.id,
            "time": _time_text(entry.time),
            "last_used": _time_text(entry.last_used),
            "name": entry.name,
            "note": entry.note,
            "starred": entry.starred,
            "runs": entry.runs,
            "checked": entry.checked,
            "passed": entry.passed,
            **entry.version.to_dict(),
        }
        for entry in history
    ]


def history_from_list(items: list[Any]) -> History:
    if len(items) > MAX_ENTRIES:
        raise ScenarioError(f'"{KEY}" holds {len(items)} versions; at most {MAX_ENTRIES}.')
    history = tuple(_entry(item, i) for i, item in enumerate(items))
    seen: set[str] = set()
    for i, entry in enumerate(history):
        if entry.id in seen:
            raise ScenarioError(f'"{KEY}[{i}]" repeats version {entry.short}; each id once.')
        seen.add(entry.id)
    return capped(history)


def _entry(data: Any, index: int) -> PromptEntry:
    where = f"{KEY}[{index}]"
    e = Fields(data, where)
    dialect = e.get("dialect", str, "bracket")
    if dialect not in (*DIALECTS, "auto"):
        raise ScenarioError(f'"{where}.dialect" must be one of auto, {", ".join(DIALECTS)}.')
    tool_calling = e.get("tool_calling", str, "react")
    if tool_calling not in TOOL_CALLING:
        raise ScenarioError(f'"{where}.tool_calling" must be one of {", ".join(TOOL_CALLING)}.')
    tools = []
    for j, item in enumerate(e.get("tools", list, [])):
        t = Fields(item, f"{where}.tools[{j}]")
        tools.append(
            ToolText(
                t.get("name", str, ""), t.get("description", str, ""), t.get("input_hint", str, "")
            )
        )
    version = PromptVersion(e.get("template", str, ""), dialect, tuple(tools), tool_calling)
    stored = e.get("id", str, version.id)
    if stored != version.id:
        raise ScenarioError(
            f'"{where}.id" is {stored[:12]!r} but its words make {version.short}: '
            "the entry was edited by hand"
        )
    first = _time(e, "time", where)
    checked = e.whole("checked", 0, (0, 2**53))
    passed = e.whole("passed", 0, (0, 2**53))
    if passed > checked:
        raise ScenarioError(f'"{where}.passed" is {passed}, more than the {checked} checked.')
    return PromptEntry(
        version,
        time=first,
        last_used=_time(e, "last_used", where, first),
        name=e.get("name", str, ""),
        note=e.get("note", str, ""),
        starred=e.get("starred", bool, False),
        runs=e.whole("runs", 0, (0, 2**53)),
        checked=checked,
        passed=passed,
    )


def _time_text(when: datetime) -> str:
    return when.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _time(e: Fields, key: str, where: str, default: datetime | None = None) -> datetime:
    text = e.get(key, str, None)
    if text is None:
        if default is None:
            raise ScenarioError(f'"{where}.{key}" is missing (when the version was first run).')
        return default
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ScenarioError(
            f'"{where}.{key}" must be a time such as 2025-01-31T09:30:00Z (got {text[:40]!r}).'
        ) from None
    # A time without a zone is taken as UTC, as the app writes it.
    return when if when.tzinfo else when.replace(tzinfo=UTC)
