"""The backend kinds, and the one place that builds a backend from what the window, a compare
lane, ``run`` or ``eval`` chose, with the key rule of keys.py.

A backend is named by a stable id: "scripted", a preset's id ("openai", "lmstudio", …),
"custom" for any other OpenAI-compatible URL, or a registered kind's own id. Ids go into files
and settings; display names are for people and may be reworded. :func:`backend_id` reads the
display labels older files and settings hold.

The catalogue, ``_BUILT_IN``, is data: each kind's backends by id and name and where its
``KIND`` is (``"module:KIND"``). Lists of backends (the panel's, ``run --backend``'s, a file's
names) read the data; a kind's module is imported when a backend of it is first used
(:func:`config_for`), so the window's first frame, on the offline model, imports one kind,
not six. ``tests/core/test_backend_kinds.py`` resolves every entry (a typo in a name fails
the suite) and checks each against its kind. Adding a kind: its module, and one entry in
``_BUILT_IN`` (or :func:`register_kind` with the kind itself, which is how a test adds one).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from sandbox_app.backends.catalogue.keys import (
    CUSTOM_KEY_ENV,
    KeyDecision,
    KeyStore,
    UrlSource,
    environment_withheld,
    host_of,
)
from sandbox_app.backends.catalogue.kinds import BackendConfig, BackendKind, Listed
from sandbox_app.backends.catalogue.presets import CUSTOM, PRESETS, ServerConfig
from sandbox_app.core.scenarios.run_input import RunInput, ToldVersion
from sandbox_app.lazy_import import lazy_import, resolve

if TYPE_CHECKING:
    from sandbox_app.backends.chat_completions import openai_kind
    from sandbox_app.core.running.backend import Backend
else:
    openai_kind = lazy_import("sandbox_app.backends.chat_completions.openai_kind")

__all__ = ["BackendConfig", "BackendKind"]  # what callers used to import from here

_BUILT_IN: tuple[Listed, ...] = (
    Listed.single("scripted", "Scripted (offline)", "sandbox_app.backends.offline.scripted:KIND"),
    Listed(  # its presets are its choices (presets.py)
        "openai-compatible",
        tuple((preset.id, preset.name) for preset in (*PRESETS, CUSTOM)),
        "sandbox_app.backends.chat_completions.openai_kind:KIND",
    ),
    Listed.single(  # Claude through the Messages API
        "anthropic", "Anthropic (Claude)", "sandbox_app.backends.messages_api.anthropic_kind:KIND"
    ),
    Listed.single(
        "responses",
        "OpenAI Responses API",
        "sandbox_app.backends.responses_api.responses_kind:KIND",
    ),
    Listed.single("gemini", "Google Gemini", "sandbox_app.backends.gemini_api.gemini_kind:KIND"),
    Listed.single(  # Ollama's own API (num_ctx, think, keep_alive, Pull)
        "ollama-native", "Ollama (native API)", "sandbox_app.backends.ollama_api.ollama_kind:KIND"
    ),
)

SCRIPTED, SCRIPTED_LABEL = _BUILT_IN[0].backends[0]
NO_RUN = ToldVersion()  # what a backend made for no run (a model list, Pull) is told

_KINDS: dict[str, Listed] = {}  # by kind id, in the order they were registered
_RESOLVED: dict[str, BackendKind] = {}  # by kind id: those imported so far


def register_kind(kind: BackendKind | Listed) -> None:
    """Add a kind: its backend ids join every list, file, flag and panel that names backends.

    Raises ValueError if its id, or one of its backends' ids or names, is already taken.
    """
    listed = kind.listed() if isinstance(kind, BackendKind) else kind
    taken = {label for label, _ in _labels()} | set(_KINDS)
    ids, names = zip(*listed.backends, strict=True)
    mine = [listed.id, *ids, *(name.casefold() for name in names)]
    clash = [name for name in dict.fromkeys(mine) if name.casefold() in taken]
    if clash:
        raise ValueError(f"backend kind {listed.id!r}: {', '.join(clash)} already taken")
    _KINDS[listed.id] = listed
    if isinstance(kind, BackendKind):
        _RESOLVED[kind.id] = kind


def unregister_kind(kind_id: str) -> None:
    """Remove a kind registered by :func:`register_kind` (a test's, when it is done)."""
    _KINDS.pop(kind_id, None)
    _RESOLVED.pop(kind_id, None)


def catalogue() -> tuple[Listed, ...]:
    """Every kind as listed, none imported."""
    return tuple(_KINDS.values())


def resolved(listed: Listed) -> BackendKind:
    """The kind an entry names, its module imported on first use; checked against the entry
    (a ValueError, one line, when the two say different ids or backends)."""
    kind = _RESOLVED.get(listed.id)
    if kind is None:
        found = resolve(listed.where)
        if not isinstance(found, BackendKind) or found.listed(listed.where) != listed:
            raise ValueError(f"backend kind {listed.id!r}: {listed.where} is not the kind listed")
        kind = _RESOLVED.setdefault(listed.id, found)
    return kind


def kinds() -> tuple[BackendKind, ...]:
    """Every kind, each imported (a list of names is :func:`backend_ids`: it imports none)."""
    return tuple(resolved(listed) for listed in _KINDS.values())


def backend_ids() -> tuple[str, ...]:
    """Every backend id, kinds in the order registered: scripted, the presets, custom, …"""
    return tuple(backend for listed in _KINDS.values() for backend, _ in listed.backends)


def _listed_of(backend: str) -> Listed:
    for listed in _KINDS.values():
        if any(choice == backend for choice, _ in listed.backends):
            return listed
    raise _unknown(backend)


def _kind_of(backend: str) -> BackendKind:
    return resolved(_listed_of(backend))


def _labels() -> list[tuple[str, str]]:
    """(case-folded label, id): what older scenario files and settings hold instead of an id
    (the window's combo labels: "Scripted (offline)", "Custom URL", "LM Studio", …), and the
    ids themselves."""
    # The custom preset's former name, "Custom", is its id.
    return [
        (label.casefold(), backend)
        for listed in _KINDS.values()
        for backend, name in listed.backends
        for label in (name, backend)
    ]


def backend_id(text: str) -> str:
    """The id for an id or a display label, ignoring case and surrounding spaces.

    Raises ValueError, with a one-line message, for anything else.
    """
    found = dict(_labels()).get(text.strip().casefold())
    if found is None:
        raise _unknown(text)
    return found


def _unknown(text: str) -> ValueError:
    # repr() keeps a stray newline from breaking the one line; a long text is cut.
    shown = text if len(text) <= 60 else text[:60] + "…"
    return ValueError(f"unknown backend {shown!r}; known: {', '.join(backend_ids())}")


def display_name(backend: str) -> str:
    """What the window shows for a backend id: "Scripted (offline)", "LM Studio", "Custom URL"."""
    return dict(_listed_of(backend).backends)[backend]


def config_for(
    backend: str,
    base_url: str = "",
    model: str = "",
    timeout_s: float = 60.0,
    typed_key: str = "",
    url_source: UrlSource = "user",
) -> BackendConfig:
    """A :class:`BackendConfig` for a backend id (see :func:`backend_id` for a label).

    An empty ``base_url`` means the backend's own. Raises ValueError for an unknown id.
    """
    kind = _kind_of(backend)
    return BackendConfig(kind, backend, base_url, model, timeout_s, typed_key, url_source)


def key_decision(config: BackendConfig, keys: KeyStore) -> KeyDecision:
    """Which key a request to this config's server carries, by the one rule of keys.py."""
    if config.kind.account is None:
        return KeyDecision()
    account = config.kind.account(config)
    return keys.decide(account, config.url, config.typed_key, config.url_source)


def key_notice(config: BackendConfig, keys: KeyStore) -> str:
    """One line for the person running it when the rule holds a key back, else ""."""
    if config.kind.account is None:
        return ""
    withheld = key_decision(config, keys).withheld
    if withheld:
        return withheld
    home = config.kind.key_home(config) if config.kind.key_home else None
    if home is not None:
        return (
            f"{home.env_var} goes only to {home.base_url}; {host_of(config.url)} gets "
            f"{CUSTOM_KEY_ENV} or a key typed for it"
        )
    return ""


def waiting_for(config: BackendConfig) -> str:
    """Who a run waits for, in the waiting line: a server's host, else the kind's word."""
    return host_of(config.url) if config.kind.server else config.kind.waits_for


def server_config(config: BackendConfig, keys: KeyStore) -> ServerConfig:
    """An OpenAI-compatible config as its backend talks to the server, key resolved."""
    return openai_kind.server_config(config, key_decision(config, keys).key)


@dataclass(frozen=True)
class CurlRequest:
    """A run's request as Copy as curl sends it: the kind's own endpoint and headers, the key
    as ``$VARIABLE`` (the one the key rule reads there), never its value."""

    url: str
    headers: tuple[str, ...]
    key_variable: str  # "" when the rule sends that server no key from the environment
    withheld: str = ""  # why, then (one line)


def curl_request(backend: str, base_url: str, model: str) -> CurlRequest:
    """Where a request of ``backend`` at ``base_url`` goes and what it carries, by its kind
    (``BackendKind.endpoint``) and the key rule (keys.environment_withheld: no catch-all
    variable over plain HTTP to another machine). A backend that is no server (the offline
    model) is shown as a local OpenAI-compatible one."""
    try:
        config: BackendConfig | None = config_for(backend, base_url, model)
    except ValueError:
        config = None
    if config is None or not config.kind.server:
        config = config_for(CUSTOM.id, base_url, model)
    url = config.url or "http://localhost:11434/v1"
    endpoint = config.kind.endpoint(url, model)
    if config.kind.account is None or not endpoint.key_header:
        return CurlRequest(endpoint.url, endpoint.headers, "")
    account = config.kind.account(replace(config, base_url=url))
    withheld = environment_withheld(account, url)
    if withheld:
        return CurlRequest(endpoint.url, endpoint.headers, "", withheld)
    key = endpoint.key_header.format(key=f"${account.env_var}")
    return CurlRequest(endpoint.url, (key, *endpoint.headers), account.env_var)


def make_backend(
    config: BackendConfig, run: RunInput, keys: KeyStore, *, told: ToldVersion = NO_RUN
) -> Backend:
    """A fresh backend for one run (or one model list): the one place a backend is made, from
    the run's input. ``told``: the version the run is told (RunSpec.told), none for no run."""
    return config.kind.make(config, run, key_decision(config, keys).key, told)


for _listed in _BUILT_IN:
    register_kind(_listed)
