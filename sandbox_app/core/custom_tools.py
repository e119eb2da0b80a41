"""A scenario's own tools and tool policies in its file, read with one-line errors.

In the file, under ``"tools"``::

    "custom": [{"name": "weather", "description": "Current weather for a city.",
                "input_hint": "city", "read_only": true, "behaviour": "canned",
                "rules": [{"match": "contains", "pattern": "paris", "reply": "18 °C, clear"}],
                "default": "No data for that city.", "latency_s": 0.5}],
    "policies": {"search": "auto", "weather": "ask"}

A custom tool is offered to the model when its name is in ``"enabled"``, like a built-in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, cast

from sandbox_app.core.scenario_fields import Fields, ScenarioError
from sandbox_app.core.tools.mock import (
    BEHAVIOURS,
    MAX_LATENCY_S,
    NAME,
    PATTERN_KINDS,
    CannedRule,
    MockToolSpec,
)
from sandbox_app.core.tools.policy import POLICIES, Policy

MAX_CUSTOM_TOOLS = 20
MAX_RULES = 200


def custom_tools_to_list(specs: Iterable[MockToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "name": spec.name,
            "description": spec.description,
            "input_hint": spec.input_hint,
            "read_only": spec.read_only,
            "behaviour": spec.behaviour,
            "rules": [
                {"match": rule.kind, "pattern": rule.pattern, "reply": rule.reply}
                for rule in spec.rules
            ],
            "default": spec.default,
            "latency_s": spec.latency_s,
        }
        for spec in specs
    ]


def custom_tools_from_list(items: list[Any], taken: Iterable[str]) -> tuple[MockToolSpec, ...]:
    """The specs in ``items``; ``taken`` are the names already in use (the built-ins)."""
    if len(items) > MAX_CUSTOM_TOOLS:
        raise ScenarioError(f'"tools.custom" holds {len(items)} tools; at most {MAX_CUSTOM_TOOLS}.')
    seen = {name.casefold() for name in taken}
    specs = []
    for i, item in enumerate(items):
        spec = _spec(item, f"tools.custom[{i}]")
        if spec.name.casefold() in seen:
            raise ScenarioError(f'"tools.custom[{i}].name" {spec.name!r} is taken by another tool.')
        seen.add(spec.name.casefold())
        specs.append(spec)
    return tuple(specs)


def _spec(data: Any, where: str) -> MockToolSpec:
    f = Fields(data, where)
    name = f.get("name", str, "")
    if not NAME.fullmatch(name):
        raise ScenarioError(
            f'"{where}.name" must be a word of letters, digits and _ (at most 40), '
            f"not starting with a digit (got {name!r})."
        )
    description = f.get("description", str, "").strip()
    if not description:
        raise ScenarioError(f'"{where}.description" is empty: the model reads it to choose.')
    behaviour = f.get("behaviour", str, "canned")
    if behaviour not in BEHAVIOURS:
        raise ScenarioError(f'"{where}.behaviour" must be one of {", ".join(BEHAVIOURS)}.')
    rules = f.get("rules", list, [])
    if len(rules) > MAX_RULES:
        raise ScenarioError(f'"{where}.rules" holds {len(rules)} rules; at most {MAX_RULES}.')
    return MockToolSpec(
        name=name,
        description=description,
        input_hint=f.get("input_hint", str, "input").strip() or "input",
        read_only=f.get("read_only", bool, True),
        behaviour=behaviour,
        rules=tuple(_rule(rule, f"{where}.rules[{j}]") for j, rule in enumerate(rules)),
        default=f.get("default", str, ""),
        latency_s=f.number("latency_s", 0.0, (0.0, MAX_LATENCY_S)) or 0.0,
    )


def _rule(data: Any, where: str) -> CannedRule:
    f = Fields(data, where)
    kind = f.get("match", str, "contains")
    if kind not in PATTERN_KINDS:
        raise ScenarioError(f'"{where}.match" must be one of {", ".join(PATTERN_KINDS)}.')
    pattern = f.get("pattern", str, "")
    if not pattern:
        raise ScenarioError(f'"{where}.pattern" is empty.')
    if kind == "regex":
        try:
            re.compile(pattern)
        except re.error as err:
            raise ScenarioError(f'"{where}.pattern" is not a valid regex: {err}.') from None
    return CannedRule(pattern, f.get("reply", str, ""), kind)


def policies_from_dict(data: Any) -> dict[str, Policy]:
    """Each tool's policy by name; one for a tool this machine lacks (a plugin) is kept."""
    f = Fields(data, "tools.policies")
    policies: dict[str, Policy] = {}
    for name in cast(Mapping[str, Any], data):
        value = f.get(name, str, "auto")
        if value not in POLICIES:
            raise ScenarioError(
                f'"tools.policies.{name}" must be one of {", ".join(POLICIES)} (got {value!r}).'
            )
        policies[name] = cast(Policy, value)
    return policies
