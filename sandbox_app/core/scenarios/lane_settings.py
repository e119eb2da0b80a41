"""The settings of a lane or a run and their valid ranges: one rule per option, shared by
``react-sandbox run``'s flags, ``eval --lane key=value`` options and the scenario file.

Every front end names the option its own way (``--max-tokens``, ``max_tokens=``,
``"lanes[0].max_tokens"``), so each check takes the name as the user wrote it; the rule and
its one-line :class:`SettingError` are the same everywhere. A value that passes here is one
the engine and the servers can take: finite, in range, of the right type.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, cast

from sandbox_app.core.react_format.dialects import DIALECTS

# The registry and the checks by name live in setting_registry.py; named here, where the
# settings are registered, for the modules that read them.
from sandbox_app.core.scenarios.setting_registry import RULES as RULES
from sandbox_app.core.scenarios.setting_registry import SETTINGS as SETTINGS
from sandbox_app.core.scenarios.setting_registry import Setting as Setting
from sandbox_app.core.scenarios.setting_registry import check as check
from sandbox_app.core.scenarios.setting_registry import parse_option as parse_option
from sandbox_app.core.scenarios.setting_registry import register as register
from sandbox_app.core.scenarios.setting_registry import unregister as unregister

# The rules and ranges live in setting_rules.py; named here too (``X as X``) for the modules
# that read them beside the settings.
from sandbox_app.core.scenarios.setting_rules import CONCURRENCY_RANGE as CONCURRENCY_RANGE
from sandbox_app.core.scenarios.setting_rules import MAX_STEPS_RANGE as MAX_STEPS_RANGE
from sandbox_app.core.scenarios.setting_rules import MAX_TOKENS_RANGE as MAX_TOKENS_RANGE
from sandbox_app.core.scenarios.setting_rules import REASONING_EFFORTS as REASONING_EFFORTS
from sandbox_app.core.scenarios.setting_rules import REPEAT_RANGE as REPEAT_RANGE
from sandbox_app.core.scenarios.setting_rules import TEMPERATURE_RANGE as TEMPERATURE_RANGE
from sandbox_app.core.scenarios.setting_rules import TIMEOUT_RANGE as TIMEOUT_RANGE
from sandbox_app.core.scenarios.setting_rules import TOKEN_BUDGET_RANGE as TOKEN_BUDGET_RANGE
from sandbox_app.core.scenarios.setting_rules import TOOL_CALLING as TOOL_CALLING
from sandbox_app.core.scenarios.setting_rules import Rule as Rule
from sandbox_app.core.scenarios.setting_rules import SettingError as SettingError
from sandbox_app.core.scenarios.setting_rules import ToolCalling as ToolCalling

# Max tokens when the user left it on Auto. 512 is plenty for one ReAct step of a model that
# answers directly (a Thought and an Action are ~60 tokens); a thinking model often reasons
# for 1,000-4,000 tokens before it writes them, and a cut inside the thinking wastes the
# whole step, so it gets 8,192: room for long thinking without letting a runaway reply cost
# more than a few cents on a paid API.
PLAIN_MAX_TOKENS = 512
THINKING_MAX_TOKENS = 8192


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
    def reasoning_effort(self) -> str | None:
        return cast("str | None", self["reasoning_effort"])

    @property
    def tool_calling(self) -> ToolCalling:
        return cast(ToolCalling, self["tool_calling"])

    @property
    def stop_on_loops(self) -> bool:
        return bool(self["stop_on_loops"])

    # Taken by some backend kinds only (core/scenarios/kind_settings.py).
    @property
    def context_window(self) -> int | None:
        return cast("int | None", self["context_window"])

    @property
    def thinking_budget(self) -> int | None:
        return cast("int | None", self["thinking_budget"])

    @property
    def think(self) -> str | None:
        return cast("str | None", self["think"])

    @property
    def keep_alive(self) -> str | None:
        return cast("str | None", self["keep_alive"])

    @property
    def prompt_cache(self) -> bool:
        return bool(self["prompt_cache"])

    # A lane's own changes to the scenario (None: the scenario's, the editor's prompt).
    @property
    def prompt(self) -> str | None:
        return cast("str | None", self["prompt"])

    @property
    def dialect(self) -> str | None:
        return cast("str | None", self["dialect"])

    @property
    def enabled_tools(self) -> tuple[str, ...] | None:
        return cast("tuple[str, ...] | None", self["enabled_tools"])

    @property
    def max_steps(self) -> int | None:
        return cast("int | None", self["max_steps"])

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        where: str = "",
        base: LaneSettings | None = None,
        lane: bool = True,
    ) -> LaneSettings:
        """The settings ``data`` holds, checked; the others are ``base``'s (default: the
        defaults). ``where`` names the object in errors as a file's path: ``"lanes[0]"``.
        ``lane`` False (a scenario's "model", a record): the lane-only settings are not read
        (there "dialect" and "max_steps" are the scenario's own)."""
        read = {
            name: setting.rule.check(data[name], f'"{where}.{name}"' if where else name)
            for name, setting in SETTINGS.items()
            if name in data and (lane or not setting.lane_only)
        }
        return (base or cls()).replace(**read)

    def to_dict(self, lane: bool = True) -> dict[str, Any]:
        """Every setting; ``lane`` False: not the lane-only ones (see :meth:`from_dict`)."""
        return {k: v for k, v in self.items() if lane or not SETTINGS[k].lane_only}

    def without_lane_changes(self) -> LaneSettings:
        """These settings with the lane-only ones back to their defaults: what is left once
        they are applied to the scenario (Scenario.with_lane)."""
        kept = {k: v for k, v in self._values.items() if not SETTINGS[k].lane_only}
        return LaneSettings(**kept)

    def given(self) -> dict[str, Any]:
        """The settings given a value (in code, a file or a flag), not left to a default."""
        return dict(self._values)

    def over(self, base: LaneSettings) -> LaneSettings:
        """``base`` with the settings given here: a lane's own over the scenario's."""
        return base.replace(**self._values)

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
        return name, SETTINGS[name].rule.parse(text, label or name)


register(
    Setting(
        "temperature",
        Rule("number", *TEMPERATURE_RANGE, nullable=True),
        0.0,
        "Temperature",
        "sampling temperature, 0-2 (default 0)",
        none_text="the server's",
        sent=True,
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
        sent=True,
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
        sent=True,
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
# The engine's own, never sent: a loop is always noticed (core/running/loops.py); this
# decides whether it also ends the run.
register(
    Setting(
        "stop_on_loops",
        Rule("switch"),
        False,
        "Stop on loops",
        "end the run with status loop when the model repeats itself: the same action a 3rd "
        "time, or two actions in turn (A, B, A, B); off by default (the loop is still noticed)",
    )
)
# Sent when set, never shown in the panel: for a reproducible comparison from a file or flag.
register(
    Setting(
        "top_p",
        Rule("number", 0.0, 1.0, nullable=True),
        None,
        help="nucleus sampling, 0-1",
        sent=True,
    )
)
register(
    Setting(
        "seed",
        Rule("whole", -(2**63), 2**63 - 1, nullable=True),
        None,
        help="sampling seed, for servers that honour one",
        sent=True,
    )
)
# A lane's own changes to the scenario, for prompt variants side by side (lane_only: see
# Setting). The prompt is a version of the scenario's history (core/scenarios/prompt_versions.py)
# named by id or name; the lane's panel offers the history's versions.
register(
    Setting(
        "prompt",
        Rule("text", nullable=True),
        None,
        "Prompt",
        "the prompt version this lane runs: the editor's (default) or one of the scenario's "
        "history, by id or name; a pinned version brings its template, dialect, tools and "
        "tool-calling mode",
        none_text="The editor",
        lane_only=True,
    )
)
register(
    Setting(
        "dialect",
        Rule("choice", nullable=True, choices=("auto", *DIALECTS)),
        None,
        "Dialect",
        "the action format this lane asks for and parses (default: the scenario's)",
        none_text="The scenario's",
        lane_only=True,
    )
)
register(
    Setting(
        "enabled_tools",
        Rule("names", nullable=True),
        None,
        "Tools",
        "the tools this lane enables, by name (default: the scenario's); 'none' for none",
        none_text="The scenario's",
        lane_only=True,
    )
)
register(
    Setting(
        "max_steps",
        Rule("whole", *MAX_STEPS_RANGE, nullable=True),
        None,
        "Max steps",
        "steps this lane may take, 1-50 (default: the scenario's)",
        none_text="The scenario's",
        lane_only=True,
    )
)

# The settings only some backend kinds take, after the general ones above.
from sandbox_app.core.scenarios import kind_settings as kind_settings  # noqa: E402
