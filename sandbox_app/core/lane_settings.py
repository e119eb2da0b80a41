"""The settings of a lane or a run and their valid ranges: one rule per option, shared by
``react-sandbox run``'s flags, ``eval --lane key=value`` options and the scenario file.

Every front end names the option its own way (``--max-tokens``, ``max_tokens=``,
``"lanes[0].max_tokens"``), so each check takes the name as the user wrote it; the rule and
its one-line :class:`SettingError` are the same everywhere. A value that passes here is one
the engine and the servers can take: finite, in range, of the right type.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

TEMPERATURE_RANGE = (0.0, 2.0)  # what OpenAI-compatible servers accept
MAX_TOKENS_RANGE = (1, 200_000)
MAX_STEPS_RANGE = (1, 50)
# A day: longer is never meant, and a huge number overflows the event loop's timers.
TIMEOUT_RANGE = (0.0, 86_400.0)
# Repeats of one case on one lane: enough to estimate a pass rate to a point, and a typo
# (an extra zero or five) is refused instead of planning a run that never ends.
REPEAT_RANGE = (1, 1_000)
CONCURRENCY_RANGE = (1, 64)  # requests at once per server (as the window's spin box)
TOKEN_BUDGET_RANGE = (1, 1_000_000_000)
# How hard a reasoning model thinks (OpenAI's reasoning_effort, also read by Ollama, llama.cpp,
# DeepSeek and OpenRouter); None sends nothing: the server's default.
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high")
# How the model calls tools: "react" writes Action lines the prompt asks for; "native" uses
# the API's tool calling (core/native_tools.py).
ToolCalling = Literal["react", "native"]
TOOL_CALLING: tuple[ToolCalling, ...] = ("react", "native")


class SettingError(ValueError):
    """A lane or run option that cannot be used; one line naming the option as written."""


@dataclass(frozen=True)
class _Rule:
    kind: Literal["number", "whole", "choice"]
    low: float = 0.0
    high: float = math.inf
    above_low: bool = False  # the low end itself is refused (a timeout of 0 s)
    nullable: bool = False  # null / None means "the default" (auto, the server's)
    choices: tuple[str, ...] = ()

    def wants(self) -> str:
        if self.kind == "choice":
            if self.choices == TOOL_CALLING:
                return '"react" or "native"'
            return f"one of {', '.join(self.choices)}" + (" or null" if self.nullable else "")
        if self.above_low:
            return f"above {_shown(self.low)} and at most {_shown(self.high)}"
        return f"from {_shown(self.low)} to {_shown(self.high)}"


def _shown(number: float) -> str:
    """200000 and 0.5, as written (not 1e+09 nor 200000.0); a huge or tiny one as 1e+300."""
    if float(number).is_integer() and abs(number) < 1e15:
        return str(int(number))
    return f"{number:g}"


RULES: dict[str, _Rule] = {
    "temperature": _Rule("number", *TEMPERATURE_RANGE, nullable=True),
    "max_tokens": _Rule("whole", *MAX_TOKENS_RANGE, nullable=True),
    "reasoning_effort": _Rule("choice", nullable=True, choices=REASONING_EFFORTS),
    "tool_calling": _Rule("choice", choices=TOOL_CALLING),
    "timeout": _Rule("number", *TIMEOUT_RANGE, above_low=True),
    "repeat": _Rule("whole", *REPEAT_RANGE),
    "concurrency": _Rule("whole", *CONCURRENCY_RANGE),
    "max_steps": _Rule("whole", *MAX_STEPS_RANGE),
    "token_budget": _Rule("whole", *TOKEN_BUDGET_RANGE),
}


def check(name: str, value: Any, label: str | None = None) -> Any:
    """``value`` if option ``name`` may have it (a typed value: JSON's or a flag's)."""
    rule, label = RULES[name], label or name
    shown = json.dumps(value)[:40]  # NaN, null, "text": as a JSON reader wrote it
    if value is None and rule.nullable:
        return None
    if rule.kind == "choice":
        if not isinstance(value, str):
            raise SettingError(f"{label} must be text (got {shown}).")
        if value not in rule.choices:
            raise SettingError(f"{label} must be {rule.wants()} (got {shown}).")
        return value
    # bool is an int in Python; "max_tokens": true is still wrong. NaN and infinity are
    # numbers to Python's json and float(), never a setting anyone means.
    if rule.kind == "whole" and (isinstance(value, bool) or not isinstance(value, int)):
        raise SettingError(f"{label} must be a whole number (got {shown}).")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise SettingError(f"{label} must be a number (got {shown}).")
    if not rule.low <= value <= rule.high or (rule.above_low and value == rule.low):
        raise SettingError(f"{label} must be {rule.wants()} (got {_shown(value)}).")
    return float(value) if rule.kind == "number" else value


def parse_option(name: str, text: str, label: str | None = None) -> Any:
    """Option ``name`` from command-line ``text`` ("0.7", "auto", "native"), checked."""
    rule, label = RULES.get(name), label or name
    if rule is None:
        raise SettingError(f"{label}: unknown option; known: {', '.join(RULES)}.")
    word = text.strip()
    if rule.kind == "choice":
        return check(name, word, label)
    if rule.nullable and rule.kind == "whole" and word.lower() == "auto":
        return None
    try:
        value: float = int(word) if rule.kind == "whole" else float(word)
    except ValueError:
        kind = "a number" if rule.kind == "number" else "a whole number"
        kind = f"auto or {kind}" if rule.nullable and rule.kind == "whole" else kind
        raise SettingError(f"{label} must be {kind} {rule.wants()} (got {word[:40]!r}).") from None
    return check(name, value, label)


@dataclass(frozen=True)
class LaneSettings:
    """What a lane, or the model panel, sets on the scenario's ModelParams (by the same names
    in ModelParams, LaneConfig and the window's BackendChoice)."""

    temperature: float | None = 0.0  # None: the server's default
    max_tokens: int | None = None  # None: Auto (core/model_traits.py)
    reasoning_effort: str | None = None  # one of REASONING_EFFORTS, or None
    tool_calling: ToolCalling = "react"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "") -> LaneSettings:
        """The settings ``data`` holds (others keep their defaults; other keys are not read).
        ``where`` prefixes the names in errors as a file's path: ``"lanes[0].max_tokens"``."""
        read = {
            name: check(name, data[name], f'"{where}.{name}"' if where else name)
            for name in LANE_SETTINGS
            if name in data
        }
        return cls(**read)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def parse_option(name: str, text: str, label: str | None = None) -> tuple[str, Any]:
        """One ``name=text`` lane option, checked; a name that is not a lane setting is
        refused (``repeat=`` belongs to the whole evaluation, not a lane)."""
        if name not in LANE_SETTINGS:
            raise SettingError(
                f"{label or name}: not a lane option; use "
                + ", ".join(f"{known}=" for known in LANE_SETTINGS[:-1])
                + f" or {LANE_SETTINGS[-1]}="
            )
        return name, parse_option(name, text, label)


LANE_SETTINGS: tuple[str, ...] = tuple(f.name for f in fields(LaneSettings))
