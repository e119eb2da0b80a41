"""Scenarios: the unit users save, share and load (prompt, question, tools, limits, script).

The types live here (the lane and run settings' ranges in lane_settings.py); reading and
writing files is scenario_file.py.
A scenario never holds an API key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

from sandbox_app.core.react_format.dialects import Dialect
from sandbox_app.core.react_format.prompts import DEFAULT_TEMPLATE
from sandbox_app.core.react_format.variables import fill, oversize_line, undefined_line

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
from sandbox_app.core.scenarios.trajectory_spec import TrajectorySpec
from sandbox_app.core.tools import BRIGHTGRID_DOCUMENTS, Tool, tools_for
from sandbox_app.core.tools.mcp_server import McpServerSpec
from sandbox_app.core.tools.mock import AskUser, MockToolSpec
from sandbox_app.core.tools.policy import Policy

DialectChoice = Dialect | Literal["auto"]
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
    """One model in a comparison. Never holds an API key (that stays in the keyring/env)."""

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
class PromptReplies:
    """The offline model's replies for one prompt version, named by the version's name in the
    history or by (the start of) its id."""

    prompt: str
    replies: tuple[str, ...]

    def names(self, version_id: str, name: str) -> bool:
        wanted = self.prompt.strip().casefold()
        return bool(wanted) and (wanted == name.casefold() or version_id.startswith(wanted))


@dataclass(frozen=True)
class Script:
    """Replies for the offline scripted model: written sample replies played in a model's place."""

    replies: tuple[str, ...] = ()
    tokens_per_second: float = 40.0  # looks live; 0 streams instantly
    ignore_stop: bool = False  # behave like a server that ignores stop sequences
    # The question these replies answer: asked another, the offline model says it has no
    # replies for it rather than answer with another question's script. "" (scripts built in
    # code): any question.
    question: str = ""
    # Replies written for particular prompt versions (a workshop shows how the wording changes
    # what the model does); a version none of them names plays ``replies``.
    by_prompt: tuple[PromptReplies, ...] = ()
    # The offline reflection model's replies (`optimize --reflect scripted`), one a
    # reflection, in order: each a diagnosis and a whole new template (core/optimizing/).
    reflections: tuple[str, ...] = ()
    # The offline model's replies to Generate cases… (each a JSON array of cases,
    # core/optimizing/generated_cases.py), one a request, in order.
    generated_cases: tuple[str, ...] = ()

    def replies_for(self, version_id: str, name: str = "") -> tuple[str, ...]:
        """The replies for the version with ``version_id`` (and ``name`` in the history): the
        first entry naming it, else the default ``replies``."""
        mine = self.written_for(version_id, name)
        return self.replies if mine is None else mine.replies

    def written_for(self, version_id: str, name: str = "") -> PromptReplies | None:
        """The entry written for that version (None: it plays the default ``replies``)."""
        return next((p for p in self.by_prompt if p.names(version_id, name)), None)


@dataclass(frozen=True)
class Scenario:
    title: str = "Untitled"
    question: str = ""
    description: str = ""
    dialect: DialectChoice = "bracket"
    system_prompt: str | None = None  # None: the default template
    enabled_tools: tuple[str, ...] = ("calculator", "search")
    documents: tuple[str, ...] = BRIGHTGRID_DOCUMENTS
    custom_tools: tuple[MockToolSpec, ...] = ()  # the scenario's own (core/tools/mock.py)
    # Each tool's policy by name (core/tools/policy.py); a tool not named has its default.
    policies: Mapping[str, Policy] = field(default_factory=dict)
    mcp_servers: tuple[McpServerSpec, ...] = ()  # their tools are listed when connected
    max_steps: int = 5
    # The lane settings a run from the Run tab, `run` or `eval` uses (a lane has its own).
    model: LaneSettings = field(default_factory=LaneSettings)
    expected: Expected | None = None
    script: Script = field(default_factory=Script)
    lanes: tuple[LaneConfig, ...] = ()
    test_set: tuple[EvalCase, ...] = ()
    # The test set's default trajectory checks (a case's own are over them).
    checks: TrajectorySpec = field(default_factory=TrajectorySpec)
    # {{name}} → text in the template and the question (core/react_format/variables.py).
    variables: Mapping[str, str] = field(default_factory=dict)
    # The prompt versions run with it, most recently used last (core/scenarios/prompt_versions.py).
    prompt_history: History = ()
    # Judged answers: the rubric every case without its own is graded by, and the judge
    # (None: the offline judge with the default prompt).
    rubric: str = ""
    judge: JudgeSpec | None = None

    def fill(self, text: str) -> str:
        """``text`` with this scenario's variables filled (an undefined one left as written)."""
        return fill(text, self.variables)

    @property
    def asked_question(self) -> str:
        """The question as the model is asked it: its variables filled."""
        return self.fill(self.question)

    def undefined_variables(self) -> str | None:
        """One line naming a ``{{variable}}`` the template or question uses that nothing
        defines, or one whose value makes either too large once filled
        (``variables.MAX_FILLED``): a run refuses with it; None when there is none."""
        template = self.system_prompt or DEFAULT_TEMPLATE
        texts = {"the system prompt": template, "the question": self.question}
        return undefined_line(self.variables, texts) or oversize_line(self.variables, texts)

    @property
    def prompt_dialect(self) -> Dialect:
        """The dialect whose format the prompt asks for ("auto" parses any, asks for bracket)."""
        return "bracket" if self.dialect == "auto" else self.dialect

    @property
    def parse_dialect(self) -> Dialect | None:
        return None if self.dialect == "auto" else self.dialect

    def tools(
        self, ask: AskUser | None = None, sources: Sequence[Tool] = (), extra: Sequence[Tool] = ()
    ) -> list[Tool]:
        """The tools a run of this scenario has: its enabled ones (built-ins, its own, plugins'
        and ``sources``', the connected MCP servers'), then ``extra`` (offered to every run);
        ``ask`` answers its ask-me tools' calls."""
        made = tools_for(
            self.enabled_tools, self.documents, self.custom_tools, ask=ask, sources=sources
        )
        return [*made, *extra]

    def with_prompt(self, version: PromptVersion) -> Scenario:
        """This scenario told what ``version`` says: its template, dialect, tool-calling mode
        and tools (the scenario's own tools take its descriptions and hints back; a built-in's
        words are the app's). A tool the scenario no longer has is left to the caller to
        refuse (core/tools.tool_names says which it could have)."""
        words = {t.name: t for t in version.tools}
        custom = tuple(
            replace(
                spec,
                description=words[spec.name].description,
                input_hint=words[spec.name].input_hint,
            )
            if spec.name in words
            else spec
            for spec in self.custom_tools
        )
        return replace(
            self,
            system_prompt=None if version.template == DEFAULT_TEMPLATE else version.template,
            dialect=cast(DialectChoice, version.dialect),
            enabled_tools=version.tool_names,
            custom_tools=custom,
            model=self.model.replace(tool_calling=version.tool_calling),
        )

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
