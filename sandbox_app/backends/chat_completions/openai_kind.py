"""The OpenAI-compatible kind: any server speaking /v1/chat/completions, its presets as choices.

The presets (presets.py) stay data; this module says what the kind needs (a URL, a key, a
model list), whose key a URL gets (keys.py's rule, by preset) and how its backend is made.
"""

from __future__ import annotations

from sandbox_app.backends.catalogue import request_fields
from sandbox_app.backends.catalogue.keys import KeyAccount, account_for, on_own_host
from sandbox_app.backends.catalogue.kinds import BackendConfig, BackendKind, Choice, KeyHome
from sandbox_app.backends.catalogue.presets import (
    CUSTOM,
    PRESETS,
    Preset,
    ServerConfig,
    preset_with_id,
)
from sandbox_app.backends.chat_completions.openai_compat import OpenAICompatBackend
from sandbox_app.core.running.backend import Backend
from sandbox_app.core.scenarios.run_input import RunInput, ToldVersion


def effective_preset(preset: Preset, base_url: str) -> Preset:
    """A key preset whose base URL was edited to another host is a custom server: its key,
    its "needs a key" rule and its hints belong to its own host only."""
    if preset.key_env is not None and not on_own_host(preset, base_url):
        return CUSTOM
    return preset


def account(config: BackendConfig) -> KeyAccount:
    url = config.url
    return account_for(effective_preset(preset_with_id(config.backend), url), url)


def key_home(config: BackendConfig) -> KeyHome | None:
    """The preset's own key, when the config's URL was moved off the preset's host."""
    preset = preset_with_id(config.backend)
    if preset.key_env is None or on_own_host(preset, config.url):
        return None
    return KeyHome(preset.name, preset.key_env, preset.base_url)


def server_config(config: BackendConfig, key: str) -> ServerConfig:
    url = config.url
    preset = effective_preset(preset_with_id(config.backend), url)
    return ServerConfig(url, key, preset, config.timeout_s)


def make(config: BackendConfig, _run: RunInput, key: str, _told: ToldVersion) -> Backend:
    return OpenAICompatBackend(server_config(config, key))


KIND = BackendKind(
    "openai-compatible",
    "OpenAI-compatible server",
    make,
    fields=frozenset({"base_url", "key", "model", "models", "timeout", "temperature"}),
    server=True,
    choices=tuple(Choice(p.id, p.name, p.base_url) for p in (*PRESETS, CUSTOM)),
    account=account,
    key_home=key_home,
    settings=frozenset({"context_window"}),
    cuts_silently=True,
    request=request_fields.CHAT,
)
