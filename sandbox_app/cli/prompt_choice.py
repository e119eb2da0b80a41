"""``--prompt VERSION`` for ``run`` and ``eval``: a version of the scenario's prompt history
(core/scenarios/prompt_versions.py) picked by id prefix or name, and what it makes of the
scenario (``run``) or of the lanes (``eval``: each version × each lane).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from sandbox_app.application.backend_choice import BackendChoice
from sandbox_app.application.eval_runner import unpinned
from sandbox_app.core.scenarios.prompt_versions import SHORT_ID, PromptEntry, VersionError, find
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.tools import tool_names


def pick(scenario: Scenario, ref: str) -> PromptEntry:
    """The version ``--prompt ref`` names; ValueError (one line) when it names none or
    several, or uses a tool the scenario no longer has."""
    try:
        entry = find(scenario.prompt_history, ref)
    except VersionError as err:
        raise ValueError(f"--prompt: {err}") from None
    if not scenario.mcp_servers:  # with MCP servers, their tools are known once connected
        known = tool_names(scenario.custom_tools)
        missing = [name for name in entry.version.tool_names if name not in known]
        if missing:
            raise ValueError(
                f"--prompt {ref}: version {entry.short} enables tool {missing[0]!r}, "
                "which this scenario does not have"
            )
    return entry


def with_version(scenario: Scenario, ref: str | None) -> Scenario:
    """``run --prompt``: the scenario told what the version says (the flags after it, such
    as --dialect or --tools, still change it)."""
    if ref is None:
        return scenario
    return scenario.with_prompt(pick(scenario, ref).version)


def lanes_by_version(
    lanes: Sequence[BackendChoice], scenario: Scenario, refs: Sequence[str]
) -> list[BackendChoice]:
    """``eval --prompt A --prompt B``: each version × each lane, titled ``LANE @ VERSION``
    (its name, else its short id). A version's tool-calling mode is part of what the model
    is told, so it is the lane's for that version. A lane pinned to a version the history
    lacks (a file's ``lanes[i].prompt``, ``--lane …,prompt=``) is refused: one line."""
    if missing := unpinned(scenario, lanes):
        raise ValueError(missing)
    if not refs:
        return list(lanes)
    entries = [pick(scenario, ref) for ref in refs]
    ids = [e.id for e in entries]
    if len(set(ids)) < len(ids):
        twice = next(e for e in entries if ids.count(e.id) > 1)
        raise ValueError(f"--prompt names version {twice.short} twice")
    return [
        replace(
            lane,
            label=f"{lane.label} @ {entry.label}",
            settings=lane.settings.replace(tool_calling=entry.version.tool_calling),
            prompt=entry.version,
        )
        for entry in entries
        for lane in lanes
    ]


def versions_note(ids: Iterable[object]) -> str:
    """`` · prompt a9c0387f`` for a summary row: the versions a lane's results were run with
    (a lane tally's ``versions``: several when a resumed file spans an edit; none in results
    made before versions)."""
    seen = dict.fromkeys(i[:SHORT_ID] for i in ids if isinstance(i, str) and i)
    return f" · prompt {', '.join(seen)}" if seen else ""
