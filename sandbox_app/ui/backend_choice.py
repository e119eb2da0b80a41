"""What a model panel says to run against, and how a run is made from it.

Qt-free on purpose: a BackendChoice is a value (never holding a stored key), and its
``run_factory`` is what a RunPane starts: a fresh backend from the registry and a fresh engine.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from sandbox_app.backends.keys import KeyStore, UrlSource
from sandbox_app.backends.registry import BackendConfig, config_for, make_backend, waiting_for
from sandbox_app.core.backend import Backend
from sandbox_app.core.engine import ReactEngine
from sandbox_app.core.fork import ForkPoint
from sandbox_app.core.records import RunSettings
from sandbox_app.core.scenario import Scenario, ToolCalling
from sandbox_app.core.stepping import PauseFn
from sandbox_app.core.tools import Approver, Tool


@dataclass(frozen=True)
class BackendChoice:
    """What the panel says to run against; never stored with a key (keys are resolved by
    the registry's rule when a backend is made)."""

    backend: str  # a backend id (backends/registry.py): its kind says what the rest means
    base_url: str
    typed_key: str  # a key typed in the panel for this base URL's host
    model: str
    temperature: float
    max_tokens: int | None  # None: Auto
    timeout_s: float = 60.0
    keys: KeyStore = field(default_factory=KeyStore, compare=False, repr=False)
    reasoning_effort: str | None = None
    tool_calling: ToolCalling = "react"
    url_source: UrlSource = "user"  # the base URL as a scenario file named it: keys wait

    @property
    def config(self) -> BackendConfig:
        return config_for(
            self.backend, self.base_url, self.model, self.timeout_s, self.typed_key, self.url_source
        )

    def run_factory(
        self,
        scenario: Scenario,
        tools: list[Tool],
        approve: Approver,
        trusted: Collection[str] = (),
        fork: ForkPoint | None = None,
        pause: PauseFn | None = None,
    ) -> Callable[[], tuple[ReactEngine, Backend]]:
        """What a RunController starts: a fresh backend and engine for each run. ``trusted``:
        the side-effecting tools the user let run unasked (core/tools/policy.py)."""

        def make_run() -> tuple[ReactEngine, Backend]:
            backend = self.create(scenario)
            engine = ReactEngine(
                scenario,
                backend,
                model=self.model,
                approve=approve,
                tools=tools,
                trusted=frozenset(trusted),
                history=fork.history if fork else (),
                prefix=fork.prefix if fork else (),
                only_step=fork.only_step if fork else None,
                pause=pause,
            )
            return engine, backend

        return make_run

    def run_settings(self, scenario: Scenario) -> RunSettings:
        """What a run record keeps of this choice (never the key)."""
        return RunSettings(
            backend=self.config.backend_id,
            base_url=self.base_url,
            model=self.model,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            reasoning_effort=self.reasoning_effort,
            tool_calling=self.tool_calling,
            dialect=scenario.dialect,
            max_steps=scenario.max_steps,
            question=scenario.question,
        )

    @property
    def server_name(self) -> str:
        """Who a run waits for, in the waiting line."""
        return waiting_for(self.config)

    def create(self, scenario: Scenario) -> Backend:
        return make_backend(self.config, scenario, self.keys)
