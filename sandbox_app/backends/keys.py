"""API keys, and the one rule for which key may go to which server.

A preset's key (``OPENAI_API_KEY``, the keyring entry "OpenAI", …) goes only to that preset's
own host. Any other URL — a proxy, a local server, the OpenAI preset with its base URL edited —
gets a key typed for it while the app runs, the keyring entry stored for its host, or
``REACT_SANDBOX_API_KEY``. The window, every compare lane and the CLI resolve keys here.

Keys are read from the environment or the OS keyring and never written to any file. When no
keyring backend exists (a bare Linux session, CI), a key lives in memory for this session.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from sandbox_app.backends.presets import Preset

SERVICE = "react-sandbox"
CUSTOM_KEY_ENV = "REACT_SANDBOX_API_KEY"


def host_of(url: str) -> str:
    """``https://API.openai.com/v1`` → ``api.openai.com``; ports count, credentials don't."""
    netloc = urlsplit(url.strip()).netloc
    return netloc.rpartition("@")[2].lower() or url.strip().lower()


@dataclass(frozen=True)
class KeyAccount:
    """Where a server's key is looked up: a keyring account and an environment variable."""

    name: str  # the preset's name on its own host, else the host itself
    env_var: str
    preset_host: bool  # the URL is a key preset's own host


def on_own_host(preset: Preset, base_url: str) -> bool:
    """Whether ``base_url`` is the host a key preset's key is meant for."""
    return preset.key_env is not None and host_of(base_url) == host_of(preset.base_url)


def account_for(preset: Preset, base_url: str) -> KeyAccount:
    if preset.key_env is not None and on_own_host(preset, base_url):
        return KeyAccount(preset.name, preset.key_env, preset_host=True)
    return KeyAccount(host_of(base_url), CUSTOM_KEY_ENV, preset_host=False)


class KeyStore:
    """Looks keys up for an account: typed this session, then environment, then keyring."""

    def __init__(self) -> None:
        self._session: dict[str, str] = {}

    def resolve(self, account: KeyAccount, typed: str = "") -> tuple[str, str]:
        """The key for ``account`` and its source: "typed", "environment", "keyring" or ""."""
        if typed:
            return typed, "typed"
        if os.environ.get(account.env_var):
            return os.environ[account.env_var], "environment"
        stored = self.stored(account)
        return (stored, "keyring") if stored else ("", "")

    def stored(self, account: KeyAccount) -> str:
        """A key remembered for exactly this account (this session's, else the keyring's)."""
        if account.name in self._session:
            return self._session[account.name]
        try:
            import keyring

            return keyring.get_password(SERVICE, account.name) or ""
        except Exception:  # no backend, locked, D-Bus missing: all mean "not stored"
            return ""

    def save(self, account: KeyAccount, key: str) -> bool:
        """Store in the OS keyring; False means it is kept for this session only."""
        self._session[account.name] = key
        try:
            import keyring
            from keyring.backends import fail

            if isinstance(keyring.get_keyring(), fail.Keyring):
                return False
            keyring.set_password(SERVICE, account.name, key)
        except Exception:  # any keyring failure: fall back to memory, never to a file
            return False
        return True
