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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from sandbox_app.core.running.model_traits import PLAIN_MAX_TOKENS, THINKING_MAX_TOKENS

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
# the API's tool calling (core/react_format/native_tools.py).
ToolCalling = Literal["react", "native"]
TOOL_CALLING: tuple[ToolCalling, ...] = ("react", "native")


class SettingError(ValueError):
    """A lane or run option that cannot be used; one line naming the option as written."""


@dataclass(frozen=True)
class Rule:
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


# The options of a whole run or evaluation (not of one lane): the command line's flags and
# the scenario file's "max_steps". The lane settings' rules are in SETTINGS, below.
RULES: dict[str, Rule] = {
    "timeout": Rule("number", *TIMEOUT_RANGE, above_low=True),
    "repeat": Rule("whole", *REPEAT_RANGE),
    "concurrency": Rule("whole", *CONCURRENCY_RANGE),
    "max_steps": Rule("whole", *MAX_STEPS_RANGE),
    "token_budget": Rule("whole", *TOKEN_BUDGET_RANGE),
}


def check(name: str, value: Any, label: str | None = None) -> Any:
    """``value`` if option ``name`` may have it (a typed value: JSON's or a flag's)."""
    rule, label = _rule_for(name), label or name
    if rule is None:
        raise KeyError(name)
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
    rule, label = _rule_for(name), label or name
    if rule is None:
        raise SettingError(f"{label}: unknown option; known: {', '.join([*RULES, *SETTINGS])}.")
    word = text.strip()
    if rule.nullable and word.lower() in ("auto", "default"):  # the server's own, or Auto
        return None
    if rule.kind == "choice":
        return check(name, word, label)
    try:
        value: float = int(word) if rule.kind == "whole" else float(word)
    except ValueError:
        kind = "a number" if rule.kind == "number" else "a whole number"
        kind = f"auto or {kind}" if rule.nullable and rule.kind == "whole" else kind
        raise SettingError(f"{label} must be {kind} {rule.wants()} (got {word[:40]!r}).") from None
    return check(name, value, label)


# ---- the lane settings: one registry, read by every front end ---------------------------


@dataclass(frozen=True)
class Setting:
    """One lane setting: what a compare lane, the model panel, a scenario file's ``"model"``
    and ``lanes[i]``, ``run``'s flags and ``eval --lane name=value`` can set, by one rule.

    ``name`` is the file's key and the ``--lane`` option; the flag is ``--`` + it with
    dashes. A setting with a ``label`` gets a row in the model panel
    (ui/lane/lane_settings_form.py);
    one without is set by files and the command line only.
    """

    name: str
    rule: Rule
    default: Any
    label: str = ""
    help: str = ""
    none_text: str = ""  # what None is called where it is shown: "Auto", "Server default"
    choice_texts: tuple[tuple[str, str], ...] = ()  # a choice's value → the panel's words
    # The request body's key for it: set, its value is sent as it is (the six below are
    # sent by backends/request_body.py's own rules, which know which models refuse what).
    request_key: str = ""

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


# Every lane setting, in the order the panel shows them. A new one is one register() call
# (and, if servers are sent it, a line in backends/request_body.py); the file, the flags,
# `eval --lane` and the panel read it from here.
SETTINGS: dict[str, Setting] = {}


def register(setting: Setting) -> Setting:
    if setting.name in SETTINGS or setting.name in RULES:
        raise ValueError(f"lane setting {setting.name!r} is registered twice")
    SETTINGS[setting.name] = setting
    return setting


def unregister(name: str) -> None:
    """Take a setting out again (a test's own, once it is done)."""
    SETTINGS.pop(name, None)


def _rule_for(name: str) -> Rule | None:
    setting = SETTINGS.get(name)
    return setting.rule if setting is not None else RULES.get(name)


class LaneSettings(Mapping[str, Any]):
    """The value of every registered lane setting: a lane's, the model panel's, a scenario's
    ``model``, a run record's. Immutable; a setting not given has its default.

    Built in code (``LaneSettings(max_tokens=12)``) values are taken as they are; from a
    file or a flag they pass :func:`check` first (:meth:`from_dict`, :meth:`parse_option`).
    """

    __slots__ = ("_values",)

    def __init__(self, **values: Any) -> None:
        unknown = [name for name in values if name not in SETTINGS]
        if unknown:
            raise TypeError(f"not a lane setting: {unknown[0]}")
        self._values: dict[str, Any] = dict(values)

    # A setting registered after this value was made (a plug-in's, a test's) has its default.
    def __getitem__(self, name: str) -> Any:
        if name in self._values:
            return self._values[name]
        return SETTINGS[name].default

    def __iter__(self) -> Iterator[str]:
        return iter(SETTINGS)

    def __len__(self) -> int:
        return len(SETTINGS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        return dict(self.items()) == dict(other.items())

    def __hash__(self) -> int:
        return hash(tuple(self.items()))

    def __repr__(self) -> str:
        return f"LaneSettings({', '.join(f'{k}={v!r}' for k, v in self.items())})"

    def replace(self, **changes: Any) -> LaneSettings:
        return LaneSettings(**{**self._values, **changes})

    # The settings the engine and the request body read, typed.
    @property
    def temperature(self) -> float | None:
        return cast("float | None", self["temperature"])

    @property
    def max_tokens(self) -> int | None:
        return cast("int | None", self["max_tokens"])

    @property
    def top_p(self) -> float | None:
        return cast("float | None", self["top_p"])

    @property
    def seed(self) -> int | None:
        return cast("int | None", self["seed"])

    @property
    def reasoning_effort(self) -> str | None:
        return cast("str | None", self["reasoning_effort"])

    @property
    def tool_calling(self) -> ToolCalling:
        return cast(ToolCalling, self["tool_calling"])

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], where: str = "", base: LaneSettings | None = None
    ) -> LaneSettings:
        """The settings ``data`` holds, checked; the others are ``base``'s (default: the
        defaults). ``where`` names the object in errors as a file's path: ``"lanes[0]"``."""
        read = {
            name: check(name, data[name], f'"{where}.{name}"' if where else name)
            for name in SETTINGS
            if name in data
        }
        return (base or cls()).replace(**read)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.items())

    def given(self) -> dict[str, Any]:
        """The settings given a value (in code, a file or a flag), not left to a default."""
        return dict(self._values)

    def over(self, base: LaneSettings) -> LaneSettings:
        """``base`` with the settings given here: a lane's own over the scenario's."""
        return base.replace(**self._values)

    def request_extras(self) -> tuple[tuple[str, Any], ...]:
        """What the settings with a ``request_key`` add to a request (those set only)."""
        return tuple(
            (setting.request_key, self[name])
            for name, setting in SETTINGS.items()
            if setting.request_key and self[name] is not None
        )

    @staticmethod
    def parse_option(name: str, text: str, label: str | None = None) -> tuple[str, Any]:
        """One ``name=text`` lane option, checked; a name that is not a lane setting is
        refused (``repeat=`` belongs to the whole evaluation, not a lane)."""
        if name not in SETTINGS:
            names = [f"{known}=" for known in SETTINGS]
            raise SettingError(
                f"{label or name}: not a lane option; use "
                + ", ".join(names[:-1])
                + f" or {names[-1]}"
            )
        return name, parse_option(name, text, label)


register(
    Setting(
        "temperature",
        Rule("number", *TEMPERATURE_RANGE, nullable=True),
        0.0,
        "Temperature",
        "sampling temperature, 0-2 (default 0)",
        none_text="the server's",
    )
)
register(
    Setting(
        "max_tokens",
        Rule("whole", *MAX_TOKENS_RANGE, nullable=True),
        None,
        "Max tokens",
        f"per model reply: a number, or auto ({PLAIN_MAX_TOKENS}; {THINKING_MAX_TOKENS} for a "
        "model that thinks)",
        none_text="Auto",
    )
)
register(
    Setting(
        "reasoning_effort",
        Rule("choice", nullable=True, choices=REASONING_EFFORTS),
        None,
        "Reasoning",
        "how hard a reasoning model thinks (reasoning_effort; default: the server's); most "
        "other models ignore it",
        none_text="Server default",
    )
)
register(
    Setting(
        "tool_calling",
        Rule("choice", choices=TOOL_CALLING),
        "react",
        "Tool calls",
        "react: the prompt asks for Action lines (default); native: the tools go to the API "
        "as JSON schemas and the model answers with tool calls (the server must support them)",
        choice_texts=(("react", "ReAct text"), ("native", "Native tool calls")),
    )
)
# Sent when set, never shown in the panel: for a reproducible comparison from a file or flag.
register(
    Setting("top_p", Rule("number", 0.0, 1.0, nullable=True), None, help="nucleus sampling, 0-1")
)
register(
    Setting(
        "seed",
        Rule("whole", -(2**63), 2**63 - 1, nullable=True),
        None,
        help="sampling seed, for servers that honour one",
    )
)
