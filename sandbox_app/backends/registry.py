"""The one place that builds a backend: the offline scripted model or an OpenAI-compatible
server, from what the window, a compare lane or the CLI chose, with the key rule of keys.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from sandbox_app.backends.base import Backend
from sandbox_app.backends.keys import KeyStore, account_for, on_own_host
from sandbox_app.backends.openai_compat import CUSTOM, OpenAICompatBackend, Preset, ServerConfig
from sandbox_app.backends.scripted import ScriptedBackend
from sandbox_app.core.scenario import Scenario


@dataclass(frozen=True)
class BackendConfig:
    """What to run against. Never holds a stored key: keys are resolved when a backend is made.

    ``typed_key`` is a key the user typed for ``base_url`` in this session's window.
    """

    preset: Preset | None  # None: the scripted model
    base_url: str = ""
    model: str = ""
    timeout_s: float = 60.0
    typed_key: str = ""


def effective_preset(preset: Preset, base_url: str) -> Preset:
    """A key preset whose base URL was edited to another host is a custom server: its key,
    its "needs a key" rule and its hints belong to its own host only."""
    if preset.key_env is not None and not on_own_host(preset, base_url):
        return CUSTOM
    return preset


def server_config(config: BackendConfig, keys: KeyStore) -> ServerConfig:
    assert config.preset is not None
    base_url = config.base_url or config.preset.base_url
    preset = effective_preset(config.preset, base_url)
    key, _ = keys.resolve(account_for(preset, base_url), config.typed_key)
    return ServerConfig(base_url, key, preset, config.timeout_s)


def make_backend(config: BackendConfig, scenario: Scenario, keys: KeyStore) -> Backend:
    """A fresh backend for one run (or one model list)."""
    if config.preset is None:
        return ScriptedBackend(scenario.script, scenario.question)
    return OpenAICompatBackend(server_config(config, keys))
