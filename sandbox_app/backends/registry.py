"""The one place that builds a backend: the offline scripted model or an OpenAI-compatible
server, from what the window, a compare lane or the CLI chose, with the key rule of keys.py.

A backend is named by a stable id: "scripted", a preset's id ("openai", "lmstudio", …) or
"custom" for any other URL. Ids go into files and settings; display names are for people and
may be reworded. :func:`backend_id` reads the display labels older files and settings hold.
"""

from __future__ import annotations

from dataclasses import dataclass

from sandbox_app.backends.keys import (
    CUSTOM_KEY_ENV,
    KeyDecision,
    KeyStore,
    UrlSource,
    account_for,
    host_of,
    on_own_host,
)
from sandbox_app.backends.openai_compat import OpenAICompatBackend
from sandbox_app.backends.presets import CUSTOM, PRESETS, Preset, ServerConfig, preset_with_id
from sandbox_app.backends.scripted import ScriptedBackend
from sandbox_app.core.backend import Backend
from sandbox_app.core.scenario import Scenario

SCRIPTED = "scripted"
SCRIPTED_LABEL = "Scripted (offline)"
BACKEND_IDS: tuple[str, ...] = (SCRIPTED, *(preset.id for preset in PRESETS), CUSTOM.id)

# What older scenario files and settings hold instead of an id, case-folded: the window's
# combo labels ("Scripted (offline)", "Custom URL", "LM Studio", …) and the custom preset's
# former name. The ids themselves read as themselves.
_LEGACY_LABELS: dict[str, str] = {
    SCRIPTED_LABEL.casefold(): SCRIPTED,
    CUSTOM.name.casefold(): CUSTOM.id,
    "custom": CUSTOM.id,
    **{preset.name.casefold(): preset.id for preset in PRESETS},
    **{backend: backend for backend in BACKEND_IDS},
}


def backend_id(text: str) -> str:
    """The id for an id or a display label, ignoring case and surrounding spaces.

    Raises ValueError, with a one-line message, for anything else.
    """
    found = _LEGACY_LABELS.get(text.strip().casefold())
    if found is None:
        raise _unknown(text)
    return found


def _unknown(text: str) -> ValueError:
    # repr() keeps a stray newline from breaking the one line; a long text is cut.
    shown = text if len(text) <= 60 else text[:60] + "…"
    return ValueError(f"unknown backend {shown!r}; known: {', '.join(BACKEND_IDS)}")


def display_name(backend: str) -> str:
    """What the window shows for a backend id: "Scripted (offline)", "LM Studio", "Custom URL"."""
    if backend == SCRIPTED:
        return SCRIPTED_LABEL
    try:
        return preset_with_id(backend).name
    except KeyError:
        raise _unknown(backend) from None


@dataclass(frozen=True)
class BackendConfig:
    """What to run against. Never holds a stored key: keys are resolved when a backend is made.

    ``typed_key`` is a key the user typed for ``base_url`` in this session's window;
    ``url_source`` says whether ``base_url`` came from the user or from a file (keys.py).
    """

    preset: Preset | None  # None: the scripted model
    base_url: str = ""
    model: str = ""
    timeout_s: float = 60.0
    typed_key: str = ""
    url_source: UrlSource = "user"

    @property
    def backend_id(self) -> str:
        """The stable id of what this runs against (the preset chosen, not the URL's)."""
        return SCRIPTED if self.preset is None else self.preset.id


def config_for(
    backend: str,
    base_url: str = "",
    model: str = "",
    timeout_s: float = 60.0,
    typed_key: str = "",
    url_source: UrlSource = "user",
) -> BackendConfig:
    """A :class:`BackendConfig` for a backend id (see :func:`backend_id` for a label).

    An empty ``base_url`` means the preset's own. Raises ValueError for an unknown id.
    """
    if backend == SCRIPTED:
        return BackendConfig(None, base_url, model, timeout_s, typed_key, url_source)
    try:
        preset = preset_with_id(backend)
    except KeyError:
        raise _unknown(backend) from None
    return BackendConfig(preset, base_url, model, timeout_s, typed_key, url_source)


def effective_preset(preset: Preset, base_url: str) -> Preset:
    """A key preset whose base URL was edited to another host is a custom server: its key,
    its "needs a key" rule and its hints belong to its own host only."""
    if preset.key_env is not None and not on_own_host(preset, base_url):
        return CUSTOM
    return preset


def key_decision(config: BackendConfig, keys: KeyStore) -> KeyDecision:
    """Which key a request to this config's server carries, by the one rule of keys.py."""
    if config.preset is None:
        return KeyDecision()
    base_url = config.base_url or config.preset.base_url
    account = account_for(effective_preset(config.preset, base_url), base_url)
    return keys.decide(account, base_url, config.typed_key, config.url_source)


def key_notice(config: BackendConfig, keys: KeyStore) -> str:
    """One line for the person running it when the rule holds a key back, else ""."""
    if config.preset is None:
        return ""
    base_url = config.base_url or config.preset.base_url
    withheld = key_decision(config, keys).withheld
    if withheld:
        return withheld
    preset = config.preset
    if preset.key_env is not None and not on_own_host(preset, base_url):
        return (
            f"{preset.key_env} goes only to {preset.base_url}; {host_of(base_url)} gets "
            f"{CUSTOM_KEY_ENV} or a key typed for it"
        )
    return ""


def server_config(config: BackendConfig, keys: KeyStore) -> ServerConfig:
    assert config.preset is not None
    base_url = config.base_url or config.preset.base_url
    preset = effective_preset(config.preset, base_url)
    return ServerConfig(base_url, key_decision(config, keys).key, preset, config.timeout_s)


def server_url_and_key_variable(backend: str, base_url: str) -> tuple[str, str]:
    """The URL a request went to and the environment variable the key rule reads for it
    (Copy as curl names that variable, never a key)."""
    try:
        preset = preset_with_id(backend)
    except KeyError:
        preset = CUSTOM
    base_url = base_url or preset.base_url or "http://localhost:11434/v1"
    return base_url, account_for(effective_preset(preset, base_url), base_url).env_var


def make_backend(config: BackendConfig, scenario: Scenario, keys: KeyStore) -> Backend:
    """A fresh backend for one run (or one model list)."""
    if config.preset is None:
        return ScriptedBackend(scenario.script, scenario.question)
    return OpenAICompatBackend(server_config(config, keys))
