"""Scenarios: the unit users save, share and load: a run's input (run_input.py) and the
document around it (title, expected answer, lanes, test set, checks, judge, prompt history).

The types live here (the lane and run settings' ranges in lane_settings.py); reading and
writing files is scenario_file.py.
A scenario never holds an API key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal, cast

# The lane and run settings and their ranges live in lane_settings.py (one rule for the file,
# the command line and the window); named here too, beside the types that hold them.
from sandbox_app.core.scenarios.judge_spec import JudgeSpec
from sandbox_app.core.scenarios.lane_settings import MAX_STEPS_RANGE as MAX_STEPS_RANGE
from sandbox_app.core.scenarios.lane_settings import MAX_TOKENS_RANGE as MAX_TOKENS_RANGE
from sandbox_app.core.scenarios.lane_settings import REASONING_EFFORTS as REASONING_EFFORTS
from sandbox_app.core.scenarios.lane_settings import SETTINGS
from sandbox_app.core.scenarios.lane_settings import TEMPERATURE_RANGE as TEMPERATURE_RANGE
from sandbox_app.core.scenarios.lane_settings import TOOL_CALLING as TOOL_CALLING
from sandbox_app.core.scenarios.lane_settings import LaneSettings as LaneSettings
from sandbox_app.core.scenarios.lane_settings import ToolCalling as ToolCalling
from sandbox_app.core.scenarios.prompt_versions import History, PromptVersion, find

# The run's input and its parts, named here too for the modules that import them from here.
from sandbox_app.core.scenarios.run_input import DialectChoice as DialectChoice
from sandbox_app.core.scenarios.run_input import PromptReplies as PromptReplies
from sandbox_app.core.scenarios.run_input import RunInput
from sandbox_app.core.scenarios.run_input import Script as Script
from sandbox_app.core.scenarios.trajectory_spec import TrajectorySpec

MatchRule = Literal["exact", "contains", "number", "regex"]
MATCH_RULES: tuple[MatchRule, ...] = ("exact", "contains", "number", "regex")


@dataclass(frozen=True)
class Expected:
    answer: str
    match: MatchRule = "contains"
    tolerance: float = 1e-9  # for "number": how far the answer may be from the expected value


@dataclass(frozen=True)
class EvalCase:
    """One case of a scenario's test set (core/scenarios/test_set.py): a question and its expected
    answer,
    optionally its own search documents and, for the offline model, its own replies."""

    question: str
    expected: Expected
    documents: tuple[str, ...] | None = None  # None: the scenario's
    replies: tuple[str, ...] = ()  # the scripted model's replies for this case
    # Its own {{name}} values (core/react_format/variables.py), over the scenario's.
    variables: Mapping[str, str] = field(default_factory=dict)
    # Its trajectory checks (core/scenarios/trajectory_spec.py), over the scenario's.
    checks: TrajectorySpec = field(default_factory=TrajectorySpec)
    # Judged answers (core/scenarios/judge_spec.py): its own rubric, over the scenario's, and
    # the offline judge's verdicts on this case's answer.
    rubric: str = ""
    judge_replies: tuple[str, ...] = ()


MIN_LANES, MAX_LANES = 2, 4  # a comparison needs two; four still fit beside the editor


@dataclass(frozen=True)
class LaneConfig:
    """One model in a comparison, in the scenario file's words. Never holds an API key (that
    stays in the keyring/env).

    The same lane as application/backend_choice.py's ``BackendChoice`` before its backend is
    resolved: a backend id and URL as the file wrote them, which core holds without knowing
    the backend kinds; ``config_for`` turns them into the choice's ``BackendConfig`` (the kind,
    a timeout, where the URL came from) when a lane is built or ``eval`` reads the file."""

    # A backend id (backends/registry.py: "scripted", "ollama", …, "custom"); files written
    # before ids hold display labels ("Scripted (offline)", "Custom URL"), still understood.
    backend: str = "scripted"
    base_url: str = ""
    model: str = ""
    # Every lane setting (core/scenarios/lane_settings.py): temperature, max tokens, tool
    # calling… A lane has each one its panel shows (not given: the default); one the panel
    # does not show (top_p, seed) is the scenario's unless the lane names it.
    settings: LaneSettings = field(default_factory=LaneSettings)

    def __post_init__(self) -> None:
        shown = {name: s.default for name, s in SETTINGS.items() if s.label}
        settings = LaneSettings(**shown).replace(**self.settings.given())
        object.__setattr__(self, "settings", settings)


@dataclass(frozen=True)
class Scenario(RunInput):
    """The document a user saves, shares and loads: the run's input (run_input.py: question,
    prompt, tools, limits, settings, variables, script) and what is about it: its title, the
    expected answer, the comparison's lanes, the test set with its checks, rubric and judge,
    and the prompt versions run with it. A lane applied to it (:meth:`with_lane`) is still a
    scenario (a run's record keeps it); what a run is made from reads only its ``RunInput``."""

    title: str = "Untitled"
    description: str = ""
    expected: Expected | None = None
    lanes: tuple[LaneConfig, ...] = ()
    test_set: tuple[EvalCase, ...] = ()
    # The test set's default trajectory checks (a case's own are over them).
    checks: TrajectorySpec = field(default_factory=TrajectorySpec)
    # The prompt versions run with it, most recently used last (core/scenarios/prompt_versions.py).
    prompt_history: History = ()
    # Judged answers: the rubric every case without its own is graded by, and the judge
    # (None: the offline judge with the default prompt).
    rubric: str = ""
    judge: JudgeSpec | None = None

    @property
    def run_input(self) -> RunInput:
        """The run's input alone, without the document's fields: what a run is made from."""
        return RunInput(**{f.name: getattr(self, f.name) for f in fields(RunInput)})

    def with_lane(self, settings: LaneSettings) -> Scenario:
        """This scenario as a lane with ``settings`` runs it: a pinned prompt version first
        (:meth:`with_prompt`), then the lane's own dialect, tools and max steps; its ``model``
        the settings left (the lane-only ones applied, so never kept twice). A pinned version
        the history lacks raises VersionError: one line naming it and what the history has."""
        scenario = replace(self, model=settings.without_lane_changes())
        if settings.prompt is not None:  # its tool-calling mode too: part of what it says
            scenario = scenario.with_prompt(scenario.pinned(settings))
        tools = settings.enabled_tools
        return replace(
            scenario,
            dialect=cast(DialectChoice, settings.dialect or scenario.dialect),
            enabled_tools=scenario.enabled_tools if tools is None else tools,
            max_steps=settings.max_steps or scenario.max_steps,
        )

    def pinned(self, settings: LaneSettings) -> PromptVersion:
        """The version a lane's ``prompt`` setting names in the history (VersionError if none)."""
        return find(self.prompt_history, settings.prompt or "").version

    def with_changes(self, **changes: Any) -> Scenario:
        return replace(self, **changes)
