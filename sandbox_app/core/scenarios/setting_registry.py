"""The registry of settings: the options of a whole run (``RULES``) and the lane settings
(``SETTINGS``: one :class:`Setting` each, added by :func:`register`), and the checks that
read an option by name. Which settings there are is core/scenarios/lane_settings.py's
register() calls; what a value may be is setting_rules.py's :class:`Rule`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sandbox_app.core.scenarios.setting_rules import (
    CONCURRENCY_RANGE,
    MAX_STEPS_RANGE,
    REPEAT_RANGE,
    TIMEOUT_RANGE,
    TOKEN_BUDGET_RANGE,
    Rule,
    SettingError,
)

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
    rule = _rule_for(name)
    if rule is None:
        raise KeyError(name)
    return rule.check(value, label or name)


def parse_option(name: str, text: str, label: str | None = None) -> Any:
    """Option ``name`` from command-line ``text`` ("0.7", "auto", "native", "yes"), checked."""
    rule, label = _rule_for(name), label or name
    if rule is None:
        known = ", ".join(dict.fromkeys([*RULES, *SETTINGS]))
        raise SettingError(f"{label}: unknown option; known: {known}.")
    return rule.parse(text, label)


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
    # A request parameter: each backend kind sends it where its request fields say
    # (backends/catalogue/request_fields.py: a line per kind), or refuses a run that sets it.
    sent: bool = False
    # Sent as it is, under this key, by every kind that passes settings through (at its
    # body's top level, or in Ollama's options, Gemini's generationConfig); refused by others.
    request_key: str = ""
    # A compare lane's own change to the scenario it runs (its prompt version, dialect, tools,
    # max steps): in a lane's file entry, `eval --lane` and a lane's panel only. The scenario
    # has these as fields of its own (and `run` as flags), so they are never in its "model"
    # nor `run`'s setting flags; the run is built with them applied (Scenario.with_lane), and
    # its record keeps what they made (dialect, max_steps, prompt_version), not them.
    lane_only: bool = False
    # Taken by some backend kinds only (core/scenarios/kind_settings.py): the panel shows its
    # row for a kind that names it in ``BackendKind.settings``; other kinds ignore its value.
    kind_specific: bool = False
    # Changes how a run is served, never what the model answers (how long a server keeps the
    # model loaded, a prompt cache): two arms that differ only here are one arm
    # (core/comparing/arms.py), so a comparison never names it as the factor.
    same_answer: bool = False

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


# Every lane setting, in the order the panel shows them. A new one is one register() call
# (and, if servers are sent it, a line per kind in backends/catalogue/request_fields.py); the file,
# the flags, `eval --lane` and the panel read it from here.
SETTINGS: dict[str, Setting] = {}


def register(setting: Setting) -> Setting:
    if setting.name in SETTINGS or (setting.name in RULES and not setting.lane_only):
        raise ValueError(f"lane setting {setting.name!r} is registered twice")
    SETTINGS[setting.name] = setting
    return setting


def unregister(name: str) -> None:
    """Take a setting out again (a test's own, once it is done)."""
    SETTINGS.pop(name, None)


def _rule_for(name: str) -> Rule | None:
    """A run option's rule first: a lane's own ``max_steps`` (None: the scenario's) is read
    through :class:`LaneSettings`, the scenario's and `run`'s (a number) through this."""
    setting = SETTINGS.get(name)
    return RULES.get(name) or (setting.rule if setting is not None else None)
