"""What a model panel, a compare lane or a ``--lane`` says to run against: a backend and the
lane settings. A value (never holding a stored key: the registry's rule picks the key when a
backend is made); :meth:`BackendChoice.spec` turns it and a scenario into a run's spec.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.backends.registry import BackendConfig, make_backend, waiting_for
from sandbox_app.core.running.backend import Backend
from sandbox_app.core.scenarios.lane_settings import LaneSettings
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

    def spec(self, scenario: Scenario, **run: Any) -> RunSpec:
        """A run of ``scenario`` with this backend and these settings; ``run``: the rest of
        :class:`RunSpec` (tools' sources, who approves, a fork, a pause…). A lane's pinned
        prompt version and its own dialect, tools and max steps are applied here
        (Scenario.with_lane); a pinned version the history lacks raises VersionError, a setting
        the backend cannot send SettingError (one line naming both)."""
        from sandbox_app.application.run_builder import RunSpec

        lane = scenario.with_lane(self.settings.over(scenario.model))
        self.config.kind.check_settings(lane.model)
        run.setdefault("served_context", self.served_context)
        return RunSpec(lane, self.config, self.keys, **run)

    def create(self, scenario: RunInput) -> Backend:
        """A backend for no run (the model list, Pull): told no prompt version."""
        return make_backend(self.config, scenario, self.keys)
