"""Scenario files: JSON with a ``version`` field, validated on load with one-line messages
that name the bad field.

Loading never modifies the file; saving is atomic (temp file, then replace), so a crash
mid-save never leaves half a scenario; a symbolic link is saved through to its target and a
read-only file is refused.
"""

from __future__ import annotations

import json
import math
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, BinaryIO

from sandbox_app.core.react_format.dialects import DIALECTS
from sandbox_app.core.scenarios.custom_tools import (
    custom_tools_from_list,
    custom_tools_to_list,
    mcp_servers_from_list,
    mcp_servers_to_list,
    policies_from_dict,
)
from sandbox_app.core.scenarios.judge_file import judge_from_dict, judge_to_dict
from sandbox_app.core.scenarios.lane_settings import SETTINGS
from sandbox_app.core.scenarios.prompt_history_file import KEY as HISTORY_KEY
from sandbox_app.core.scenarios.prompt_history_file import history_from_list, history_to_list
from sandbox_app.core.scenarios.scenario import (
    MAX_LANES,
    LaneConfig,
    PromptReplies,
    Scenario,
    Script,
)
from sandbox_app.core.scenarios.scenario_fields import (
    Fields,
    ScenarioError,
    expected_to_dict,
    read_expected,
)
from sandbox_app.core.scenarios.test_set import cases_from_list, cases_to_list
from sandbox_app.core.tools import BRIGHTGRID_DOCUMENTS, TOOL_NAMES
from sandbox_app.core.tools.plugins import installed
from sandbox_app.core.untrusted.file_reader import (
    ReadError,
    decode,
    display_name,
    parse_json,
    read_json,
    read_stream,
)

VERSION = 1
MAX_FILE_BYTES = 5 * 1024 * 1024


def scenarios_dir() -> Path:
    """Built-in scenarios: ``resources/`` beside the package (a checkout) or inside it (a wheel)."""
    package = Path(__file__).resolve().parents[2]
    for candidate in (package / "resources", package.parent / "resources"):
        if (candidate / "scenarios").is_dir():
            return candidate / "scenarios"
    return package.parent / "resources" / "scenarios"


def builtin_scenarios() -> list[Path]:
    return sorted(scenarios_dir().glob("*.json"))


def default_scenario() -> Scenario:
    return load_scenario(scenarios_dir() / "brightgrid.json")


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file. Raises :class:`ScenarioError` with one clear line."""
    try:
        data = read_json(path, MAX_FILE_BYTES, "a scenario")
    except ReadError as err:
        raise ScenarioError(str(err)) from None
    try:
        return scenario_from_dict(data)
    except ScenarioError as err:
        raise ScenarioError(f"{display_name(path)}: {err}") from None


def load_scenario_stream(stream: BinaryIO, name: str = "standard input") -> Scenario:
    """A scenario from an open stream (``-`` on the command line), read by the same rules as a
    file: its size, encoding and depth limits, then the same checks."""
    try:
        raw = read_stream(stream, MAX_FILE_BYTES, "a scenario", name)
        data = parse_json(decode(raw, name), name, "a scenario")  # read_json's rules
    except ReadError as err:
        raise ScenarioError(str(err)) from None
    try:
        return scenario_from_dict(data)
    except ScenarioError as err:
        raise ScenarioError(f"{name}: {err}") from None


class SaveRefused(OSError):
    """A save that would harm the user's files (a read-only file); the message says why."""


def save_scenario(scenario: Scenario, path: str | Path) -> None:
    """Write atomically: a failed write leaves the old file (or none) untouched.

    A symbolic link is saved through to its target (the link stays a link), and a read-only
    file is refused with :class:`SaveRefused` rather than silently replaced: replacing works
    on the folder, so it would succeed whatever the file's own mode says.
    """
    path = Path(os.path.realpath(path))
    if path.exists() and _read_only(path):
        raise SaveRefused(f"{path.name} is read-only; use Save as to write a copy.")
    text = json.dumps(scenario_to_dict(scenario), indent=2, ensure_ascii=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        # mkstemp makes the file private (0600); keep the old file's mode, or the usual one.
        os.chmod(tmp, path.stat().st_mode & 0o777 if path.exists() else 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read_only(path: Path) -> bool:
    # os.access alone says yes to root (CI, containers), so the mode's write bits count too.
    mode = path.stat().st_mode
    return not os.access(path, os.W_OK) or not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)


def scenario_to_dict(s: Scenario) -> dict[str, Any]:
    return {
        "version": VERSION,
        "title": s.title,
        "description": s.description,
        "question": s.question,
        "dialect": s.dialect,
        "system_prompt": s.system_prompt,
        "tools": {
            "enabled": list(s.enabled_tools),
            "documents": list(s.documents),
            "custom": custom_tools_to_list(s.custom_tools),
            "policies": dict(s.policies),
            "mcp": mcp_servers_to_list(s.mcp_servers),
        },
        "max_steps": s.max_steps,
        "model": s.model.to_dict(lane=False),  # a lane's own changes are only a lane's
        "expected": expected_to_dict(s.expected),
        "script": {
            "tokens_per_second": s.script.tokens_per_second,
            "ignore_stop": s.script.ignore_stop,
            "replies": list(s.script.replies),
            **({"question": s.script.question} if s.script.question != s.question else {}),
            # Only when there are some: a script without is written as it always was.
            **({"by_prompt": _by_prompt_to_list(s.script)} if s.script.by_prompt else {}),
            **({"reflections": list(s.script.reflections)} if s.script.reflections else {}),
            **({"generated_cases": list(g)} if (g := s.script.generated_cases) else {}),
        },
        "lanes": [
            {
                "backend": lane.backend,
                "base_url": lane.base_url,
                "model": lane.model,
                **_lane_settings(lane),
            }
            for lane in s.lanes
        ],
        "test_set": cases_to_list(s.test_set),
        # The test set's default trajectory checks, only when there are some.
        **({"checks": s.checks.to_dict()} if not s.checks.empty else {}),
        # Written only when there are some: a scenario without keeps the file it always had.
        **({"variables": dict(s.variables)} if s.variables else {}),
        # Only when there is one: a file run nowhere yet is written as it always was.
        **({HISTORY_KEY: history_to_list(s.prompt_history)} if s.prompt_history else {}),
        # Judged answers: written only when there is a rubric or a judge.
        **({"rubric": s.rubric} if s.rubric else {}),
        **({"judge": judge_to_dict(s.judge)} if s.judge is not None else {}),
    }


def scenario_from_dict(data: Any) -> Scenario:
    d = Fields(data, "the file")
    version = data.get("version") if isinstance(data, dict) else None
    if version != VERSION:
        raise ScenarioError(f'unknown "version" {version!r}; this app reads version {VERSION}.')
    tools = Fields(d.get("tools", dict, {}), "tools")
    model = Fields(d.get("model", dict, {}), "model")
    script = Fields(d.get("script", dict, {}), "script")
    enabled = tuple(tools.strings("enabled", ["calculator", "search"]))
    custom = custom_tools_from_list(tools.get("custom", list, []), TOOL_NAMES)
    plugins = [tool.name for tool in installed().tools]
    known = (*TOOL_NAMES, *(spec.name for spec in custom), *plugins)
    mcp = mcp_servers_from_list(tools.get("mcp", list, []))
    unknown = [t for t in enabled if t not in known]
    if unknown and not mcp:  # with MCP servers, their tools are known once connected
        raise ScenarioError(
            f'"tools.enabled" names unknown tool {unknown[0]!r}; known: {", ".join(known)}.'
        )
    dialect = d.get("dialect", str, "bracket")
    if dialect not in (*DIALECTS, "auto"):
        raise ScenarioError(f'"dialect" must be one of auto, {", ".join(DIALECTS)}.')
    max_steps = d.setting("max_steps", 5)
    return Scenario(
        title=d.get("title", str, "Untitled"),
        description=d.get("description", str, ""),
        question=d.get("question", str, ""),
        dialect=dialect,  # checked against DIALECTS above
        system_prompt=d.get("system_prompt", str, None),
        enabled_tools=enabled,
        documents=tuple(tools.strings("documents", list(BRIGHTGRID_DOCUMENTS))),
        custom_tools=custom,
        policies=policies_from_dict(tools.get("policies", dict, {})),
        mcp_servers=mcp,
        max_steps=max_steps,
        model=model.lane_settings(lane=False),
        expected=read_expected(d.get("expected", dict, None)),
        script=Script(
            replies=tuple(script.strings("replies", [])),
            # 0 is meaningful: the replies stream instantly (as in the tests and benchmarks).
            tokens_per_second=script.number("tokens_per_second", 40.0, (0.0, math.inf)) or 0.0,
            ignore_stop=script.get("ignore_stop", bool, False),
            # Written only when it differs; absent, the replies answer the file's own question
            # ("" written: replies for any question, as scripts built in code).
            question=script.get("question", str, d.get("question", str, "")),
            by_prompt=_by_prompt(script.get("by_prompt", list, [])),
            reflections=tuple(script.strings("reflections", [])),
            generated_cases=tuple(script.strings("generated_cases", [])),
        ),
        lanes=_lanes(d.get("lanes", list, [])),
        test_set=cases_from_list(d.get("test_set", list, [])),
        checks=d.checks(),
        variables=d.variables(),
        prompt_history=history_from_list(d.get(HISTORY_KEY, list, [])),
        rubric=d.get("rubric", str, "").strip(),
        judge=None if data.get("judge") is None else judge_from_dict(data["judge"]),
    )


def _by_prompt_to_list(script: Script) -> list[dict[str, Any]]:
    return [{"prompt": p.prompt, "replies": list(p.replies)} for p in script.by_prompt]


def _by_prompt(items: list[Any]) -> tuple[PromptReplies, ...]:
    """``script.by_prompt``: replies for a prompt version named by its name or id (start)."""
    made: list[PromptReplies] = []
    for i, item in enumerate(items):
        entry = Fields(item, f"script.by_prompt[{i}]")
        prompt = entry.get("prompt", str, "").strip()
        if not prompt:
            raise ScenarioError(
                f'"script.by_prompt[{i}].prompt" must name a prompt version (its name or id).'
            )
        if any(p.prompt.casefold() == prompt.casefold() for p in made):
            raise ScenarioError(f'"script.by_prompt[{i}].prompt" names {prompt!r} twice.')
        made.append(PromptReplies(prompt, tuple(entry.strings("replies", []))))
    return tuple(made)


def _lane_settings(lane: LaneConfig) -> dict[str, Any]:
    """A lane's settings as its file entry holds them: a lane-only one (its prompt version,
    dialect, tools, max steps) only when the lane has its own, so a lane that runs the
    scenario's is written as it always was."""
    given = lane.settings.given()
    return {k: v for k, v in given.items() if v is not None or not SETTINGS[k].lane_only}


def _lanes(items: list[Any]) -> tuple[LaneConfig, ...]:
    if len(items) > MAX_LANES:  # a lane the window cannot show would be saved unseen
        raise ScenarioError(
            f'"lanes" holds {len(items)} lanes; a comparison has at most {MAX_LANES}.'
        )
    return tuple(_lane(item, i) for i, item in enumerate(items))


# Files written before backend ids named lanes by display label; these become ids on reading
# (the backend registry is the one that knows every id; an unknown one is reported there).
_LABELS_BEFORE_IDS = {"scripted (offline)": "scripted", "custom url": "custom"}


def _backend_id(label: str) -> str:
    folded = label.strip().casefold()
    return _LABELS_BEFORE_IDS.get(folded, folded.replace(" ", "").replace(".", ""))


def _lane(data: Any, index: int) -> LaneConfig:
    """A lane: a whole model configuration of its own (a setting it does not name has its
    default, not the scenario's)."""
    lane = Fields(data, f"lanes[{index}]")
    settings = lane.lane_settings()  # the same rules as `eval --lane` and `run`'s flags
    return LaneConfig(
        backend=_backend_id(lane.get("backend", str, "scripted")),
        base_url=lane.get("base_url", str, ""),
        model=lane.get("model", str, ""),
        settings=settings.replace(temperature=settings.temperature or 0.0),
    )
