"""What a test-set run's path is checked against (trajectory checks), as the scenario file
holds it: ``"checks": {...}`` on the scenario (the defaults) and on a case (over them).

    {"tools_called": ["search", "calculator"], "order": "in_order", "never": ["delete_file"],
     "inputs": [{"tool": "search", "match": "contains", "value": "Brightgrid"}],
     "max_steps": 4, "no_format_errors": true, "no_fabrication": true,
     "max_tokens": 2000, "max_cost": 0.01, "max_seconds": 30}

Every key is optional; a case's key replaces the scenario's (``over``), so a case can ask for
other tools without repeating the limits. ``order``: ``any`` (each tool called at least once),
``in_order`` (called in this order, other calls between allowed) or ``exact`` (exactly this
sequence). An input check passes when one call of the tool has a matching input: ``exact``,
``contains`` (both ignoring case), ``regex`` (core/untrusted/safe_regex.py) or ``json`` (the
input, read as a JSON object, holds every field of ``value``, an object).
core/results/trajectory.py computes the checks from a finished run.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from typing import Any, Literal, cast

from sandbox_app.core.untrusted import safe_regex

Order = Literal["any", "in_order", "exact"]
ORDERS: tuple[Order, ...] = ("any", "in_order", "exact")
InputMatch = Literal["exact", "contains", "regex", "json"]
INPUT_MATCHES: tuple[InputMatch, ...] = ("exact", "contains", "regex", "json")
MAX_LIMIT = 10**9  # a bound past any real run: the file's numbers stay numbers


class SpecError(ValueError):
    """A bad ``checks`` object; the message is one line naming the field."""


@dataclass(frozen=True)
class InputCheck:
    tool: str
    match: InputMatch
    value: str  # for "json": the object as compact JSON text (kept immutable)

    def to_dict(self) -> dict[str, Any]:
        value: Any = json.loads(self.value) if self.match == "json" else self.value
        return {"tool": self.tool, "match": self.match, "value": value}


@dataclass(frozen=True)
class TrajectorySpec:
    """Each field None: not said here (the scenario's default, or no check)."""

    tools_called: tuple[str, ...] | None = None
    order: Order | None = None
    never: tuple[str, ...] | None = None
    inputs: tuple[InputCheck, ...] | None = None
    max_steps: int | None = None
    no_format_errors: bool | None = None
    no_fabrication: bool | None = None
    max_tokens: int | None = None
    max_cost: float | None = None
    max_seconds: float | None = None

    def over(self, base: TrajectorySpec) -> TrajectorySpec:
        """These checks over ``base``'s: each key said here wins."""
        said = {f.name: getattr(self, f.name) for f in fields(self)}
        return replace(base, **{k: v for k, v in said.items() if v is not None})

    @property
    def empty(self) -> bool:
        return not self.to_dict()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            if f.name == "inputs":
                value = [check.to_dict() for check in value]
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @staticmethod
    def from_dict(data: Any, where: str = "checks") -> TrajectorySpec:
        """The checks an object holds; SpecError (one line, naming ``where``'s field) if bad."""
        if not isinstance(data, dict):
            raise SpecError(f'"{where}" must be a JSON object.')
        unknown = sorted(set(data) - {f.name for f in fields(TrajectorySpec)})
        if unknown:
            known = ", ".join(f.name for f in fields(TrajectorySpec))
            raise SpecError(f'"{where}" has no check "{unknown[0]}"; known: {known}.')
        order = data.get("order")
        if order is not None and order not in ORDERS:
            raise SpecError(f'"{where}.order" must be one of {", ".join(ORDERS)}.')
        return TrajectorySpec(
            tools_called=_names(data, "tools_called", where),
            order=cast(Order | None, order),
            never=_names(data, "never", where),
            inputs=_inputs(data.get("inputs"), f"{where}.inputs"),
            max_steps=_whole(data, "max_steps", where),
            no_format_errors=_flag(data, "no_format_errors", where),
            no_fabrication=_flag(data, "no_fabrication", where),
            max_tokens=_whole(data, "max_tokens", where),
            max_cost=_bound(data, "max_cost", where),
            max_seconds=_bound(data, "max_seconds", where),
        )


def names_in(text: str) -> list[str]:
    """Tool names as a cell or a CSV column writes them: separated by commas, ``|`` or spaces
    (a tool's name is one word: ``search calculator`` is two tools)."""
    return [name for name in re.split(r"[\s,|]+", text) if name]


def unknown_tools(specs: Iterable[TrajectorySpec], known: Iterable[str]) -> list[str]:
    """The tool names the checks say (called or never) that no tool has, in order, once."""
    have = set(known)
    said = (n for spec in specs for n in (*(spec.tools_called or ()), *(spec.never or ())))
    return list(dict.fromkeys(name for name in said if name not in have))


def _names(data: dict[str, Any], key: str, where: str) -> tuple[str, ...] | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise SpecError(f'"{where}.{key}" must be a list of tool names.')
    return tuple(v.strip() for v in value)


def _flag(data: dict[str, Any], key: str, where: str) -> bool | None:
    value = data.get(key)
    if value is not None and not isinstance(value, bool):
        raise SpecError(f'"{where}.{key}" must be true or false (got {_shown(value)}).')
    return value


def _whole(data: dict[str, Any], key: str, where: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_LIMIT:
        shown = _shown(value)
        raise SpecError(f'"{where}.{key}" must be a whole number, at least 0 (got {shown}).')
    return value


def _bound(data: dict[str, Any], key: str, where: str) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    number = not isinstance(value, bool) and isinstance(value, int | float)
    if not number or not math.isfinite(value) or not 0 <= value <= MAX_LIMIT:
        raise SpecError(f'"{where}.{key}" must be a number, at least 0 (got {_shown(value)}).')
    return float(value)


def _inputs(value: Any, where: str) -> tuple[InputCheck, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise SpecError(f'"{where}" must be a list of {{"tool", "match", "value"}} objects.')
    return tuple(_input(item, f"{where}[{i}]") for i, item in enumerate(value))


def _input(item: Any, where: str) -> InputCheck:
    if not isinstance(item, dict):
        raise SpecError(f'"{where}" must be a JSON object.')
    tool, match, value = item.get("tool"), item.get("match", "contains"), item.get("value")
    if not isinstance(tool, str) or not tool.strip():
        raise SpecError(f'"{where}.tool" must name a tool.')
    if match not in INPUT_MATCHES:
        raise SpecError(f'"{where}.match" must be one of {", ".join(INPUT_MATCHES)}.')
    if match == "json":
        if not isinstance(value, dict):
            raise SpecError(f'"{where}.value" must be a JSON object for match "json".')
        return InputCheck(tool.strip(), match, json.dumps(value, ensure_ascii=False))
    if not isinstance(value, str) or not value:
        raise SpecError(f'"{where}.value" must be text.')
    if match == "regex":  # refused when read, in one line, rather than never matching later
        try:
            safe_regex.check(value, ignore_case=True)
        except safe_regex.PatternError as err:
            raise SpecError(f'"{where}.value" {err}.') from None
    return InputCheck(tool.strip(), cast(InputMatch, match), value)


def _shown(value: Any) -> str:
    return json.dumps(value)[:40]
