"""A backend plus its settings: what a model panel, a compare lane, a ``--lane`` and each of
``eval``'s and the optimizer's lanes say to run against. One value (never holding a stored
key: the registry's rule picks the key when a backend is made); :meth:`BackendChoice.applied`
is the one place a lane is applied to a scenario, :meth:`BackendChoice.spec` turns it and a
scenario into a run's spec.

The scenario file's lane (core/scenarios/scenario.py ``LaneConfig``) stays a type of its own:
it is the file's words (a backend id, a URL, a model, the settings), which core holds without
knowing the backend kinds; a ``BackendChoice`` is that lane resolved (``config_for``: the kind,
its timeout, where its URL came from, a typed key) and ready to run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.backends.registry import BackendConfig, make_backend, waiting_for
from sandbox_app.core.running.backend import Backend
from sandbox_app.core.scenarios.lane_settings import LaneSettings
from sandbox_app.core.scenarios.prompt_versions import PromptVersion
from sandbox_app.core.scenarios.run_input import RunInput
from sandbox_app.core.scenarios.scenario import Scenario

if TYPE_CHECKING:  # the engine: imported at the first run, not with the window's model panels
    from sandbox_app.application.run_builder import RunSpec


@dataclass(frozen=True)
class BackendChoice:
    config: BackendConfig
    settings: LaneSettings = field(default_factory=LaneSettings)
    keys: KeyStore = field(default_factory=KeyStore, compare=False, repr=False)
    # The context window the server was found to serve (the panel's health check): the
    # context meter's window when the lane sets no Context of its own.
    served_context: int | None = field(default=None, compare=False)
    # A test set's lane: its column title ("" for a panel's choice: the Run tab, a lane)…
    label: str = ""
    # …and the prompt version it runs (`eval --prompt`, an optimizer's candidate) over what
    # the scenario and its settings say (None: theirs).
    prompt: PromptVersion | None = None

    @property
    def model(self) -> str:
        return self.config.model

    @property
    def base_url(self) -> str:
        return self.config.base_url

    @property
    def server_name(self) -> str:
        """Who a run waits for, in the waiting line."""
        return waiting_for(self.config)

    def applied(self, scenario: Scenario) -> Scenario:
        """``scenario`` as this lane runs it: its settings over the scenario's, a pinned prompt
        version and its own dialect, tools and max steps (Scenario.with_lane), then its
        ``prompt``. A pinned version the history lacks raises VersionError, a setting the
        backend cannot send SettingError (one line naming both)."""
        lane = scenario.with_lane(self.settings.over(scenario.model))
        if self.prompt is not None:
            lane = lane.with_prompt(self.prompt)
        self.config.kind.check_settings(lane.model)
        return lane

    def spec(self, scenario: Scenario, **run: Any) -> RunSpec:
        """A run of ``scenario`` with this backend and these settings (:meth:`applied`);
        ``run``: the rest of :class:`RunSpec` (tools' sources, who approves, a fork, a
        pause…)."""
        from sandbox_app.application.run_builder import RunSpec

        run.setdefault("served_context", self.served_context)
        run.setdefault("keys", self.keys)
        return RunSpec(self.applied(scenario), self.config, **run)

    def create(self, run: RunInput) -> Backend:
        """A backend for no run (the model list, Pull): told no prompt version."""
        return make_backend(self.config, run, self.keys)
