"""One way to make a run: a :class:`RunSpec` says everything a run needs, :func:`build_run`
makes its engine and backend. The window's Run tab, every compare lane, ``react-sandbox run``
and ``eval`` build runs here and nowhere else, so a new run option is one field here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.backends.registry import BackendConfig, make_backend
from sandbox_app.core.running.backend import Backend
from sandbox_app.core.running.carried import source_of
from sandbox_app.core.running.fork import ForkPoint
from sandbox_app.core.running.records import RunSettings
from sandbox_app.core.running.stepping import PauseFn
from sandbox_app.core.scenarios.prompt_versions import PromptVersion, names_of, version_of
from sandbox_app.core.scenarios.run_input import RunInput, ToldVersion
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.tools import Approver, Tool
from sandbox_app.core.tools.mock import AskUser

if TYPE_CHECKING:  # the engine (with asyncio): imported at the first run, not with the window
    from sandbox_app.core.running.engine import ReactEngine


@dataclass(frozen=True)
class RunSpec:
    """Everything one run needs; never a key (the key rule picks it when the backend is made).
    Made by ``BackendChoice.spec`` (application/backend_choice.py), which applies the lane.

    ``scenario`` is the scenario with the lane applied; ``scenario.model`` holds the lane
    settings the run uses (a lane's own, or the panel's). The engine, the backend and the
    prompt version are made from its run input alone (core/scenarios/run_input.py); the rest
    of the document is kept with the run's record (its expected answer, its title) and names
    the version told (:attr:`told`).
    """

    scenario: Scenario
    backend: BackendConfig
    keys: KeyStore = field(default_factory=KeyStore, compare=False, repr=False)
    # The connected MCP servers' tools (backends/mcp_client/mcp_tools.py), offered beside the
    # built-ins.
    sources: Sequence[Tool] = ()
    # Tools offered to every run whatever the scenario says (the tests' side-effecting ones).
    extra_tools: Sequence[Tool] = ()
    approve: Approver | None = None  # who lets a side-effecting call run; None: no one
    ask: AskUser | None = None  # who answers an ask-me tool's calls; None: declined
    trusted: frozenset[str] = frozenset()  # tools the user let run unasked this session
    fork: ForkPoint | None = None  # go on from a kept run's step (core/running/fork.py)
    pause: PauseFn | None = None  # step-through (core/running/stepping.py)
    token_budget: int | None = None
    # The context window the server was found to serve (a health check): the context meter's
    # window when the lane sets no Context (core/running/context_meter.py).
    served_context: int | None = None

    @cached_property  # made once: the engine, the backend and the version read it
    def run(self) -> RunInput:
        """What the run is made from: the scenario's run input, none of its document."""
        return self.scenario.run_input

    def tools(self) -> list[Tool]:
        return self._tools

    @cached_property  # made once a spec: its version and each of its repeats use these
    def _tools(self) -> list[Tool]:
        return self.run.tools(self.ask, self.sources, self.extra_tools)

    @cached_property  # made once: the record and the window's history both ask
    def prompt_version(self) -> PromptVersion:
        """What the run's model is told apart from the question (its lane's tool calling
        included: ``scenario.model`` is the run's settings)."""
        return version_of(self.run, self._tools)

    @cached_property
    def told(self) -> ToldVersion:
        """The version the run is told, as its backend is given it: its id and the name the
        scenario's history gives it (the offline model's replies may be written for either)."""
        version = self.prompt_version.id
        return ToldVersion(version, names_of(self.scenario.prompt_history).get(version, ""))

    def new_backend(self) -> Backend:
        """A fresh backend for this run, made from its input (never the document) and told the
        run's prompt version (the offline model plays the replies written for it)."""
        return make_backend(self.backend, self.run, self.keys, told=self.told)

    def notes(self) -> tuple[str, ...]:
        """What the trace says first about where the answers come from (the offline model:
        replies written for this version, or the same for every prompt)."""
        notes = self.backend.kind.notes
        return notes(self.run, self.told) if notes else ()

    def source(self) -> str:
        """Who the run's model is: the one its reasoning items may go back to in a fork
        (core/running/carried.py)."""
        config = self.backend
        return source_of(config.backend_id, config.url, config.model)

    def record_settings(self) -> RunSettings:
        """What a run record keeps of how the run was made (never the key)."""
        s = self.run
        return RunSettings(
            backend=self.backend.backend_id,
            base_url=self.backend.base_url,
            model=self.backend.model,
            settings=s.model,
            dialect=s.dialect,
            max_steps=s.max_steps,
            question=s.asked_question,  # as asked: its {{variables}} filled
            prompt_version=self.prompt_version.id,
        )


def build_run(spec: RunSpec, backend: Backend | None = None) -> tuple[ReactEngine, Backend]:
    """The engine for one run and the backend it streams from (the caller closes it).

    ``backend``: one already made for this spec's server, to reuse its connections (``eval``
    runs many cases on one client); by default a fresh one from the registry.
    """
    from sandbox_app.core.running.context_meter import ServedContext
    from sandbox_app.core.running.engine import ReactEngine

    # A setting the kind cannot send: SettingError, one line naming both, before the run (the
    # front ends ask first, to say it their way: BackendChoice.spec, run, eval's lanes).
    spec.backend.kind.check_settings(spec.run.model)
    backend = backend or spec.new_backend()
    engine = ReactEngine(
        spec.run,
        backend,
        model=spec.backend.model,
        approve=spec.approve,
        token_budget=spec.token_budget,
        tools=spec.tools(),
        trusted=spec.trusted,
        fork=spec.fork,
        pause=spec.pause,
        served=ServedContext(spec.served_context, spec.backend.kind.cuts_silently),
        notes=spec.notes(),
        source=spec.source(),
    )
    return engine, backend
