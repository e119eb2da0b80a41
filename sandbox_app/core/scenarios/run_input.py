"""The run's input: what one run of a scenario needs and nothing else: the question, the
prompt (template, dialect, model settings with their tool-calling mode), the tools with their
policies and MCP servers, the step limit, the ``{{variables}}`` and the offline model's script.

A :class:`RunInput` is what the engine, the backends and a run's prompt version are made from
(application/run_builder.py's ``RunSpec``); the document a user saves (scenario.py's
``Scenario``: title, expected answer, lanes, test set, checks, judge, prompt history) is a run
input with the rest beside it, so a function typed ``RunInput`` cannot read a lane or the test
set (mypy says so).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, Self, cast

from sandbox_app.core.react_format.dialects import Dialect
from sandbox_app.core.react_format.prompts import DEFAULT_TEMPLATE
from sandbox_app.core.react_format.variables import fill, oversize_line, undefined_line
from sandbox_app.core.scenarios.lane_settings import LaneSettings
from sandbox_app.core.scenarios.prompt_versions import PromptVersion
from sandbox_app.core.tools import BRIGHTGRID_DOCUMENTS, Tool, tools_for
from sandbox_app.core.tools.mcp_server import McpServerSpec
from sandbox_app.core.tools.mock import AskUser, MockToolSpec
from sandbox_app.core.tools.policy import Policy

DialectChoice = Dialect | Literal["auto"]


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
class ToldVersion:
    """The prompt version a run is told, worked out once by its ``RunSpec``: its id and the
    name the scenario's history gives it ("" unnamed), by which the offline model picks the
    replies written for it (:meth:`Script.replies_for`)."""

    id: str = ""  # "": no run is made (a model list, Pull)
    name: str = ""


@dataclass(frozen=True)
class RunInput:
    """What a run needs (see the module's docstring); a ``Scenario`` is one, with its
    document's fields beside these."""

    question: str = ""
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
    script: Script = field(default_factory=Script)
    # {{name}} → text in the template and the question (core/react_format/variables.py).
    variables: Mapping[str, str] = field(default_factory=dict)

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

    def with_prompt(self, version: PromptVersion) -> Self:
        """This input told what ``version`` says: its template, dialect, tool-calling mode
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
