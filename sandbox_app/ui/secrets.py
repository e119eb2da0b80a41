"""API keys: read from the environment or the OS keyring, never written to any file.

When no keyring backend exists (a bare Linux session, CI), a key typed in the window lives
only in memory for this session, and the window says so.
"""

from __future__ import annotations

import os

SERVICE = "react-sandbox"


class KeyStore:
    """Looks keys up by preset name: environment first, then keyring, then this session."""

    def __init__(self) -> None:
        self._session: dict[str, str] = {}

    def load(self, preset: str, env_var: str | None) -> tuple[str, str]:
        """The key and where it came from: "environment", "keyring", "session" or ""."""
        if env_var and os.environ.get(env_var):
            return os.environ[env_var], "environment"
        if preset in self._session:
            return self._session[preset], "session"
        try:
            import keyring

            stored = keyring.get_password(SERVICE, preset)
        except Exception:  # no backend, locked, D-Bus missing: all mean "not stored"
            stored = None
        return (stored, "keyring") if stored else ("", "")

    def save(self, preset: str, key: str) -> bool:
        """Store in the OS keyring; False means it is kept for this session only."""
        self._session[preset] = key
        try:
            import keyring
            from keyring.backends import fail

            if isinstance(keyring.get_keyring(), fail.Keyring):
                return False
            keyring.set_password(SERVICE, preset, key)
        except Exception:  # any keyring failure: fall back to memory, never to a file
            return False
        return True
