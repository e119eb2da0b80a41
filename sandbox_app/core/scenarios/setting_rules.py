"""What a setting's value may be: one :class:`Rule` per kind (a number in a range, a whole
number, one of some choices, a yes/no switch, a line of text, a list of names), and its check
of a typed value (JSON's) or of text (a flag's, an ``eval --lane`` option's), each failing
with one line naming the option as the user wrote it. Which option has which rule is
core/scenarios/lane_settings.py's registry.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
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
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
# How the model calls tools: "react" writes Action lines the prompt asks for; "native" uses
# the API's tool calling (core/running/native_tools.py).
ToolCalling = Literal["react", "native"]
TOOL_CALLING: tuple[ToolCalling, ...] = ("react", "native")
# A switch as the command line may spell it (`eval --lane …,stop_on_loops=yes`); a file says
# JSON's true or false, never a word, so a typo there is not read as "off".
SWITCH_WORDS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}
# A text setting's longest value (a prompt version's id or name): a line, never a document.
MAX_TEXT = 200
# What separates names written as text (`eval --lane …,enabled_tools=calculator+search`: the
# comma already separates the lane's options there).
_NAME_SEPARATORS = re.compile(r"[\s,;+]+")


class SettingError(ValueError):
    """A lane or run option that cannot be used; one line naming the option as written."""


@dataclass(frozen=True)
class Rule:
    kind: Literal["number", "whole", "choice", "switch", "text", "names"]
    low: float = 0.0
    high: float = math.inf
    above_low: bool = False  # the low end itself is refused (a timeout of 0 s)
    nullable: bool = False  # null / None means "the default" (auto, the server's)
    choices: tuple[str, ...] = ()

    def wants(self) -> str:
        if self.kind == "switch":
            return "true or false"
        if self.kind == "text":
            return f"text of one line, at most {MAX_TEXT} characters"
        if self.kind == "names":
            return "a list of names"
        if self.kind == "choice":
            if self.choices == TOOL_CALLING:
                return '"react" or "native"'
            return f"one of {', '.join(self.choices)}" + (" or null" if self.nullable else "")
        if self.above_low:
            return f"above {_shown(self.low)} and at most {_shown(self.high)}"
        return f"from {_shown(self.low)} to {_shown(self.high)}"

    def check(self, value: Any, label: str) -> Any:
        """``value`` if this rule allows it (a typed value: JSON's or a flag's)."""
        shown = json.dumps(value)[:40]  # NaN, null, "text": as a JSON reader wrote it
        if value is None and self.nullable:
            return None
        if self.kind == "switch":
            if not isinstance(value, bool):
                raise SettingError(f"{label} must be true or false (got {shown}).")
            return value
        if self.kind == "text":
            return self._text(value, label, shown)
        if self.kind == "names":
            return self._names(value, label, shown)
        if self.kind == "choice":
            if not isinstance(value, str):
                raise SettingError(f"{label} must be text (got {shown}).")
            if value not in self.choices:
                raise SettingError(f"{label} must be {self.wants()} (got {shown}).")
            return value
        # bool is an int in Python; "max_tokens": true is still wrong. NaN and infinity are
        # numbers to Python's json and float(), never a setting anyone means.
        if self.kind == "whole" and (isinstance(value, bool) or not isinstance(value, int)):
            raise SettingError(f"{label} must be a whole number (got {shown}).")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise SettingError(f"{label} must be a number (got {shown}).")
        if not math.isfinite(value):
            raise SettingError(f"{label} must be a number (got {shown}).")
        if not self.low <= value <= self.high or (self.above_low and value == self.low):
            raise SettingError(f"{label} must be {self.wants()} (got {_shown(value)}).")
        return float(value) if self.kind == "number" else value

    def _text(self, value: Any, label: str, shown: str) -> str:
        if not isinstance(value, str):
            raise SettingError(f"{label} must be text (got {shown}).")
        line = value.strip()
        if not line or "\n" in line or len(line) > MAX_TEXT:
            raise SettingError(f"{label} must be {self.wants()} (got {shown}).")
        return line

    def _names(self, value: Any, label: str, shown: str) -> tuple[str, ...]:
        # A file's JSON list, or a tuple made in code; each name a line of text.
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise SettingError(f"{label} must be a list of names (got {shown}).")
        names = tuple(dict.fromkeys(v.strip() for v in value if v.strip()))
        if any(len(name) > MAX_TEXT or "\n" in name for name in names):
            raise SettingError(f"{label} must be {self.wants()} (got {shown}).")
        return names

    def parse(self, text: str, label: str) -> Any:
        """The value command-line ``text`` ("0.7", "auto", "native", "yes") means, checked."""
        word = text.strip()
        if self.nullable and word.lower() in ("auto", "default"):  # the server's own, or Auto
            return None
        if self.kind == "switch":
            if word.lower() not in SWITCH_WORDS:
                words = "/".join(SWITCH_WORDS)
                raise SettingError(f"{label} must be one of {words} (got {word[:40]!r}).")
            return SWITCH_WORDS[word.lower()]
        if self.kind == "choice" or self.kind == "text":
            return self.check(word, label)
        if self.kind == "names":  # "calculator+search", "calculator search"; "none": no tools
            names = [] if word.lower() == "none" else _NAME_SEPARATORS.split(word)
            return self.check(names, label)
        try:
            value: float = int(word) if self.kind == "whole" else float(word)
        except ValueError:
            kind = "a number" if self.kind == "number" else "a whole number"
            kind = f"auto or {kind}" if self.nullable and self.kind == "whole" else kind
            raise SettingError(
                f"{label} must be {kind} {self.wants()} (got {word[:40]!r})."
            ) from None
        return self.check(value, label)


def _shown(number: float) -> str:
    """200000 and 0.5, as written (not 1e+09 nor 200000.0); a huge or tiny one as 1e+300."""
    if float(number).is_integer() and abs(number) < 1e15:
        return str(int(number))
    return f"{number:g}"
