"""The tools an imported trace names, as tools a fork can call (core/otel/otel_import.py).

A trace says what a tool is called, often its description and JSON schema, and what each
call returned; never how it works. So each becomes one of the scenario's own tools
(core/tools/mock.py), which the user can edit like any other: a ``canned`` mock answering
the inputs the trace recorded with the results it recorded (another input gets an error
that says so), or, with nothing recorded, an ``ask`` tool whose result the user types. A
tool named like a built-in is the built-in. Each is said in one notice line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sandbox_app.core.otel.otel_messages import ModelCall
from sandbox_app.core.scenarios.custom_tools import MAX_CUSTOM_TOOLS, MAX_RULES
from sandbox_app.core.tools import TOOL_NAMES
from sandbox_app.core.tools.mock import NAME, CannedRule, MockToolSpec

MAX_DESCRIPTION = 2000


def scenario_tools(
    calls: Sequence[ModelCall], results: Mapping[str, list[tuple[str, str]]]
) -> tuple[tuple[MockToolSpec, ...], tuple[str, ...], list[str]]:
    """The scenario's own tools, the enabled tools' names, and a notice per gap."""
    described: dict[str, dict[str, Any]] = {}
    for call in calls:
        for tool in call.tools:
            described.setdefault(tool["name"], tool)
    names = list(described)
    for call in calls:
        names += [c.name for c in call.calls]
    names += list(results)
    specs: list[MockToolSpec] = []
    enabled: list[str] = []
    notices: list[str] = []
    for name in dict.fromkeys(n for n in names if n):
        if name in TOOL_NAMES:
            enabled.append(name)
            notices.append(f"{name}: the trace holds no implementation; the built-in {name} runs.")
            continue
        if not NAME.fullmatch(name) or len(specs) >= MAX_CUSTOM_TOOLS:
            notices.append(
                f"{name[:60]!r}: not a name this app gives a tool (letters, digits, _; at most "
                f"40; {MAX_CUSTOM_TOOLS} tools): left out, so a fork cannot call it."
            )
            continue
        spec = _mock(name, described.get(name, {}), results.get(name, []))
        specs.append(spec)
        enabled.append(name)
        if spec.behaviour == "canned":
            notices.append(
                f"{name}: the trace holds no implementation; a mock answers the "
                f"{len(spec.rules)} input(s) it recorded, any other is an error "
                "(edit it among your tools)."
            )
        else:
            notices.append(
                f"{name}: the trace holds no implementation and no result; you are asked for "
                "its result at each call (edit it among your tools)."
            )
    return tuple(specs), tuple(enabled), notices


def _mock(name: str, described: dict[str, Any], results: list[tuple[str, str]]) -> MockToolSpec:
    description = str(described.get("description") or "").strip()[:MAX_DESCRIPTION]
    rules: dict[str, str] = {}
    for given, result in results:
        if given.strip():
            rules.setdefault(given, result)
    return MockToolSpec(
        name=name,
        description=description or f"{name} (a tool of the imported trace)",
        input_hint=_hint(described.get("parameters")),
        read_only=True,  # it replays or asks: nothing outside the app happens
        behaviour="canned" if rules else "ask",
        rules=tuple(CannedRule(given, result, "exact") for given, result in rules.items())[
            :MAX_RULES
        ],
        default=f"Error: the trace recorded no result of {name} for this input.",
    )


def _hint(parameters: Any) -> str:
    """The one parameter's name a native call fills (the engine's schema for a mock has one
    string parameter named after its hint), else ``input``."""
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    if isinstance(properties, dict) and len(properties) == 1:
        only = next(iter(properties))
        if isinstance(only, str) and NAME.fullmatch(only):
            return only
    return "input"
