"""A scenario's own tools and tool policies in its file, read with one-line errors.

In the file, under ``"tools"``::

    "custom": [{"name": "weather", "description": "Current weather for a city.",
                "input_hint": "city", "read_only": true, "behaviour": "canned",
                "rules": [{"match": "contains", "pattern": "paris", "reply": "18 °C, clear"}],
                "default": "No data for that city.", "latency_s": 0.5}],
    "policies": {"search": "auto", "weather": "ask"},
    "mcp": [{"name": "files", "command": "python", "args": ["files_server.py"],
             "env": {"ROOT": "/tmp"}, "secret_env": ["FILES_TOKEN"]},
            {"name": "web", "url": "http://127.0.0.1:8000/mcp"}]

A custom tool is offered to the model when its name is in ``"enabled"``, like a built-in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, cast

from sandbox_app.core.scenarios.scenario_fields import Fields, ScenarioError
from sandbox_app.core.tools.mcp_server import McpServerSpec
from sandbox_app.core.tools.mock import (
    BEHAVIOURS,
    MAX_LATENCY_S,
    NAME,
    PATTERN_KINDS,
    CannedRule,
    MockToolSpec,
)
from sandbox_app.core.tools.policy import POLICIES, Policy
from sandbox_app.core.untrusted import safe_regex

MAX_CUSTOM_TOOLS = 20
MAX_MCP_SERVERS = 8
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
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
    name = _name(f, where)
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


def _name(f: Fields, where: str) -> str:
    """A tool's or a server's name: what the prompt and the toggles show."""
    name: str = f.get("name", str, "")
    if not NAME.fullmatch(name):
        raise ScenarioError(
            f'"{where}.name" must be a word of letters, digits and _ (at most 40), '
            f"not starting with a digit (got {name!r})."
        )
    return name


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
            safe_regex.check(pattern)
        except safe_regex.PatternError as err:
            raise ScenarioError(f'"{where}.pattern" {err}.') from None
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


def mcp_servers_to_list(specs: Iterable[McpServerSpec]) -> list[dict[str, Any]]:
    out = []
    for spec in specs:
        item: dict[str, Any] = {"name": spec.name, "timeout_s": spec.timeout_s}
        if spec.url:
            item["url"] = spec.url
        else:
            item |= {"command": spec.command, "args": list(spec.args), "env": dict(spec.env)}
        if spec.secret_env:
            item["secret_env"] = list(spec.secret_env)
        out.append(item)
    return out


def mcp_servers_from_list(items: list[Any]) -> tuple[McpServerSpec, ...]:
    if len(items) > MAX_MCP_SERVERS:
        raise ScenarioError(f'"tools.mcp" holds {len(items)} servers; at most {MAX_MCP_SERVERS}.')
    specs: list[McpServerSpec] = []
    for i, item in enumerate(items):
        spec = _server(item, f"tools.mcp[{i}]")
        if any(other.name == spec.name for other in specs):
            raise ScenarioError(f'"tools.mcp[{i}].name" {spec.name!r} names another server too.')
        specs.append(spec)
    return tuple(specs)


def _server(data: Any, where: str) -> McpServerSpec:
    f = Fields(data, where)
    name = _name(f, where)
    command, url = f.get("command", str, "").strip(), f.get("url", str, "").strip()
    if bool(command) == bool(url):
        raise ScenarioError(f'"{where}" needs a "command" (stdio) or a "url" (HTTP), not both.')
    if url and not url.startswith(("http://", "https://")):
        raise ScenarioError(f'"{where}.url" must start with http:// or https://.')
    env = f.get("env", dict, {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise ScenarioError(f'"{where}.env" must map names to text.')
    secret_env = tuple(f.strings("secret_env", []))
    bad = next((n for n in (*env, *secret_env) if not ENV_NAME.fullmatch(n)), None)
    if bad is not None:
        raise ScenarioError(f'"{where}": {bad!r} is not an environment variable name.')
    return McpServerSpec(
        name=name,
        command=command,
        args=tuple(f.strings("args", [])),
        env=dict(env),
        secret_env=secret_env,
        url=url,
        timeout_s=f.number("timeout_s", 10.0, (0.5, 300.0)) or 10.0,
    )
