"""Reading a scenario file's JSON: typed fields whose errors name the field's full path in
one line (``"lanes[0].max_tokens" must be from 1 to 200000 (got -3)``)."""

from __future__ import annotations

import json
import math
from typing import Any

from sandbox_app.core.react_format.variables import VariableError, checked
from sandbox_app.core.scenarios.lane_settings import LaneSettings, SettingError, check
from sandbox_app.core.scenarios.scenario import MATCH_RULES, Expected
from sandbox_app.core.scenarios.trajectory_spec import SpecError, TrajectorySpec
from sandbox_app.core.untrusted import safe_regex
from sandbox_app.core.untrusted.file_reader import ReadError


class ScenarioError(ReadError):
    """A scenario file that cannot be used; the message says which file and what is wrong."""


def read_expected(data: dict[str, Any] | None, where: str = "expected") -> Expected | None:
    if data is None:
        return None
    e = Fields(data, where)
    match = e.get("match", str, "contains")
    if match not in MATCH_RULES:
        raise ScenarioError(f'"{where}.match" must be one of {", ".join(MATCH_RULES)}.')
    answer = e.get("answer", str, "")
    if match == "regex":  # refused now, in one line, rather than never matching later
        try:
            safe_regex.check(answer, ignore_case=True)
        except safe_regex.PatternError as err:
            raise ScenarioError(f'"{where}.answer" {err}.') from None
    return Expected(answer, match, e.number("tolerance", 1e-9, (0.0, math.inf)) or 0.0)


def expected_to_dict(expected: Expected | None) -> dict[str, Any] | None:
    """What :func:`read_expected` reads: the scenario file's ``expected`` and ``run --json``'s."""
    if expected is None:
        return None
    return {"answer": expected.answer, "match": expected.match, "tolerance": expected.tolerance}


class Fields:
    """Typed access to one JSON object, with errors that name the field's full path."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, dict):
            raise ScenarioError(f"{where} must be a JSON object.")
        self._data = data
        self._prefix = "" if where == "the file" else where + "."

    def get(self, key: str, kind: type, default: Any) -> Any:
        value = self._data.get(key, default)
        if value is None and default is None:
            return None
        # bool is an int in Python; a scenario saying "max_steps": true is still wrong.
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ScenarioError(
                f'"{self._prefix}{key}" must be {_KIND_NAMES[kind]} (got {json.dumps(value)[:40]}).'
            )
        return value

    def number(self, key: str, default: float | None, bounds: tuple[float, float]) -> float | None:
        value = self._data.get(key, default)
        if value is None:
            return None
        # Python's json reads NaN and Infinity; neither is a setting anyone means.
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise ScenarioError(
                f'"{self._prefix}{key}" must be a number (got {json.dumps(value)[:40]}).'
            )
        self._check_range(key, value, bounds)
        return float(value)

    def whole(self, key: str, default: int, bounds: tuple[int, int]) -> int:
        value: int = self.get(key, int, default)
        self._check_range(key, value, bounds)
        return value

    def lane_settings(self, base: LaneSettings | None = None, lane: bool = True) -> LaneSettings:
        """The lane settings this object holds, by the rules every front end shares; the
        others are ``base``'s. ``lane`` False (the scenario's "model"): not the lane-only."""
        try:
            return LaneSettings.from_dict(self._data, self._prefix.rstrip("."), base, lane)
        except SettingError as err:
            raise ScenarioError(str(err)) from None

    def setting(self, key: str, default: Any) -> Any:
        """A run setting (core/scenarios/lane_settings.py's ``RULES``), by the shared rule."""
        try:
            return check(key, self._data.get(key, default), f'"{self._prefix}{key}"')
        except SettingError as err:
            raise ScenarioError(str(err)) from None

    def variables(self) -> dict[str, str]:
        """Its ``variables`` object ({{name}} → text) by the one rule for them
        (core/react_format/variables.py); absent: none."""
        try:
            return checked(self.get("variables", dict, {}))
        except VariableError as err:
            raise ScenarioError(f'"{self._prefix}variables": {err}.') from None

    def checks(self) -> TrajectorySpec:
        """Its ``checks`` object (trajectory checks: core/scenarios/trajectory_spec.py); absent:
        none."""
        if self._data.get("checks") is None:
            return TrajectorySpec()
        try:
            return TrajectorySpec.from_dict(self._data["checks"], f"{self._prefix}checks")
        except SpecError as err:
            raise ScenarioError(str(err)) from None

    def _check_range(self, key: str, value: float, bounds: tuple[float, float]) -> None:
        low, high = bounds
        if not low <= value <= high:
            where = f"at least {low:g}" if high == math.inf else f"from {low:g} to {high:g}"
            raise ScenarioError(f'"{self._prefix}{key}" must be {where} (got {value:g}).')

    def strings(self, key: str, default: list[str]) -> list[str]:
        value = self.get(key, list, default)
        if not all(isinstance(item, str) for item in value):
            raise ScenarioError(f'"{self._prefix}{key}" must be a list of strings.')
        return list(value)


_KIND_NAMES = {
    str: "text",
    int: "a whole number",
    dict: "an object",
    list: "a list",
    bool: "true or false",
}
