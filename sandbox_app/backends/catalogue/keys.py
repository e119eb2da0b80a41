"""API keys, and the one rule for which key may go to which server.

The rule looks at three things: the scheme, the host and where the URL came from.

1. A preset's key (``OPENAI_API_KEY``, the keyring entry "OpenAI", …) goes only to that
   preset's own origin: same scheme (https), same host, same port. ``http://api.openai.com``
   is not OpenAI's origin: a key there would cross the network in clear.
2. Any other URL — a proxy, a local server, the OpenAI preset with its base URL edited — gets a
   key typed for it while the app runs, the keyring entry stored for its host, or
   ``REACT_SANDBOX_API_KEY``; over plain HTTP to a host that is not this machine, only a key
   typed or stored for exactly that host (the catch-all variable is never sent in clear).
3. A URL that came from a file (a scenario's lanes, a recording, a test set) gets no key at all
   until the user confirms that host for this session (:meth:`KeyStore.trust_host`: a dialog
   in the window, ``--lane`` or ``--trust-file-lanes`` on the command line). A file may not
   decide where a key goes.

The window, every compare lane, the CLI, ``eval`` and Copy as curl resolve keys here.

Keys are read from the environment or the OS keyring and never written to any file. When no
keyring backend exists (a bare Linux session, CI), a key lives in memory for this session.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from sandbox_app.backends.catalogue.presets import Preset

SERVICE = "react-sandbox"
CUSTOM_KEY_ENV = "REACT_SANDBOX_API_KEY"


# Where a base URL came from: the user (typed, picked, the window's own settings, a CLI flag)
# or a file someone else may have written.
UrlSource = Literal["user", "file"]


def host_of(url: str) -> str:
    """``https://API.openai.com/v1`` → ``api.openai.com``; ports count, credentials don't."""
    netloc = urlsplit(url.strip()).netloc
    return netloc.rpartition("@")[2].lower() or url.strip().lower()


def origin_of(url: str) -> str:
    """``HTTPS://API.openai.com/v1`` → ``https://api.openai.com:443``: what a key is bound to.

    The scheme counts (a key over http travels in clear) and a default port is written out,
    so ``https://h`` and ``https://h:443`` are one origin and ``http://h`` another.
    """
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:  # "host:notaport": no origin a key could belong to
        return ""
    port = port or {"https": 443, "http": 80}.get(scheme)
    host = (parts.hostname or "").lower()
    return f"{scheme}://{host}:{port}" if scheme and host else ""


def in_clear(url: str) -> bool:
    """Plain HTTP to another machine: a key sent there can be read on the way."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() == "https":
        return False
    host = (parts.hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name: it may resolve anywhere
        return True


@dataclass(frozen=True)
class KeyAccount:
    """Where a server's key is looked up: a keyring account and an environment variable."""

    name: str  # the preset's name on its own host, else the host itself
    env_var: str
    preset_host: bool  # the URL is a key preset's own host


def on_own_host(preset: Preset, base_url: str) -> bool:
    """Whether ``base_url`` is the origin (scheme, host, port) a key preset's key is meant for."""
    return preset.key_env is not None and origin_of(base_url) == origin_of(preset.base_url)


def account_for(preset: Preset, base_url: str) -> KeyAccount:
    if preset.key_env is not None and on_own_host(preset, base_url):
        return KeyAccount(preset.name, preset.key_env, preset_host=True)
    return KeyAccount(host_of(base_url), CUSTOM_KEY_ENV, preset_host=False)


@dataclass(frozen=True)
class KeyDecision:
    """The key a request carries, where it came from, and why one was held back."""

    key: str = ""
    source: str = ""  # "typed", "environment", "keyring" or ""
    withheld: str = ""  # one line: why a key that exists was not sent ("" when none was)
    confirm: str = ""  # the host to confirm when the key waits on the user's word for it


def environment_withheld(account: KeyAccount, base_url: str) -> str:
    """Why ``account``'s environment variable is never sent to ``base_url`` ("" when it may
    be): the catch-all variable does not cross the network in clear (rule 2). Copy as curl
    asks it too, so a command never sends what the app refuses to."""
    if account.preset_host or not in_clear(base_url):
        return ""
    return (
        f"{host_of(base_url)} is plain HTTP to another machine: {account.env_var} is not "
        "sent in clear (use https, or type a key for that host)"
    )


class KeyStore:
    """Looks keys up for an account: typed this session, then environment, then keyring.

    Also holds the hosts the user confirmed, this session, for URLs that came from files.
    """

    def __init__(self, keyring_open: bool = True) -> None:
        self._session: dict[str, str] = {}
        self._trusted_origins: set[str] = set()
        # False while the window opens (ui/window/app.py): importing keyring and finding its backend
        # take 100-150 ms, a Secret Service over D-Bus longer, and the window's first frame
        # comes first. Until it is set, a key the keyring may hold is "unasked", not absent.
        self.keyring_open = keyring_open

    def resolve(self, account: KeyAccount, typed: str = "") -> tuple[str, str]:
        """The key for ``account`` and its source: "typed", "environment", "keyring", "" or
        "unasked" (the keyring was not asked yet: see ``keyring_open``)."""
        if typed:
            return typed, "typed"
        if os.environ.get(account.env_var):
            return os.environ[account.env_var], "environment"
        if not self.keyring_open:
            return "", "unasked"
        stored = self.stored(account)
        return (stored, "keyring") if stored else ("", "")

    def trust_host(self, base_url: str) -> None:
        """The user confirmed this file-named server may get its key (this session only)."""
        self._trusted_origins.add(origin_of(base_url))

    def trusts(self, base_url: str) -> bool:
        return origin_of(base_url) in self._trusted_origins

    def decide(
        self, account: KeyAccount, base_url: str, typed: str = "", source: UrlSource = "user"
    ) -> KeyDecision:
        """The whole key rule (module docstring) for one request to ``base_url``."""
        key, found = self.resolve(account, typed)
        if found == "unasked":  # a request needs its key now, window on screen or not
            self.keyring_open = True
            key, found = self.resolve(account, typed)
        if not key:
            return KeyDecision()
        host = host_of(base_url)
        if found == "typed":  # typed for exactly this host, in this session: the user's word
            return KeyDecision(key, found)
        if source == "file" and not account.preset_host and not self.trusts(base_url):
            return KeyDecision(
                withheld=f"{host} was named by a file: no key sent until you confirm that host",
                confirm=host,
            )
        in_clear_refusal = environment_withheld(account, base_url)
        if found == "environment" and in_clear_refusal:
            return KeyDecision(withheld=in_clear_refusal)
        return KeyDecision(key, found)

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
