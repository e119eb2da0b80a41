"""What a backend kind is, as data: the fields it needs, whether it is a server, how it is made.

A kind is one way of reaching a model: the offline scripted model, an OpenAI-compatible server
(whose presets are its choices), and later native APIs. Each is one :class:`BackendKind`
value, written in its own module and registered by one line in registry.py; the window's
panel, ``run``, ``eval`` and the test set ask the kind (does it need a URL? a key? is it a
server?) instead of testing which kind it is.

A kind is chosen by a stable backend id: its own id, or one of its ``choices`` ("lmstudio").
A :class:`BackendConfig` holds the kind itself, so asking it needs no registry.

The registry lists each kind as a :class:`Listed` entry (data: its backends' ids and names,
and where its ``KIND`` is), so a list of backends imports no kind: a kind's module, with its
stream decoding and request builders, is imported when a backend of it is first chosen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from sandbox_app.backends.catalogue.keys import KeyAccount, UrlSource
from sandbox_app.backends.catalogue.request_fields import NO_FIELDS, RequestFields, refusal
from sandbox_app.core.scenarios.setting_rules import SettingError

if TYPE_CHECKING:
    from sandbox_app.core.running.backend import Backend
    from sandbox_app.core.scenarios.lane_settings import LaneSettings
    from sandbox_app.core.scenarios.run_input import RunInput, ToldVersion

# What a model panel may ask for. "models": the server can list its models (Refresh);
# "key": an API key field (a kind declaring it gives ``account``). "pull": the server can
# fetch a model it lacks (Pull; its backend is a model_store.ModelStore).
Field = Literal["base_url", "key", "model", "models", "timeout", "temperature", "pull"]
FIELDS: tuple[Field, ...] = (
    "base_url",
    "key",
    "model",
    "models",
    "timeout",
    "temperature",
    "pull",
)


@dataclass(frozen=True)
class Choice:
    """One backend a kind is chosen by: its stable id, its name for people, its own URL."""

    id: str  # written to settings and scenario files: never changes
    name: str  # shown to people: may be reworded
    base_url: str = ""  # "" for a kind without a URL, or one the user types ("custom")


@dataclass(frozen=True)
class KeyHome:
    """The key a backend is named for (OPENAI_API_KEY for OpenAI) when a config's URL is not
    that key's home: the key rule sends it only to ``base_url``."""

    name: str  # "OpenAI"
    env_var: str  # "OPENAI_API_KEY"
    base_url: str  # the only URL it goes to


@dataclass(frozen=True)
class Endpoint:
    """Where a kind's chat request goes and how it carries its key, as Copy as curl writes it."""

    url: str
    key_header: str = "Authorization: Bearer {key}"  # "" for a kind that takes no key
    headers: tuple[str, ...] = ()  # the others its requests need ("anthropic-version: …")


def chat_completions(base_url: str, _model: str) -> Endpoint:
    """An OpenAI-compatible server's: POST BASE/chat/completions, the key as a Bearer token."""
    return Endpoint(base_url.rstrip("/") + "/chat/completions")


# How a kind makes its backend: the config, the run's input (the offline model replays its
# script; never the document: no lane, test set or history), the key the one key rule allows
# ("" for none) and the prompt version the run is told, worked out once by its RunSpec (its id
# and the history's name for it; empty when no run is made: a model list). The offline model
# plays the replies written for that version; it must not work out its own, which would miss
# the tools only the run has (an MCP server's). Only registry.make_backend calls it.
Make = Callable[["BackendConfig", "RunInput", str, "ToldVersion"], "Backend"]
# What a run's trace says before its first step about where the kind's answers come from,
# given the run's input and the version it is told (the offline model: whether its replies
# were written for that version).
Notes = Callable[["RunInput", "ToldVersion"], tuple[str, ...]]


@dataclass(frozen=True)
class Listed:
    """A kind as the catalogue lists it before it is imported: its id, the backends it is
    chosen by (id, name: what every list, flag and panel shows) and where its
    :class:`BackendKind` is, ``"package.module:ATTRIBUTE"`` (``lazy_import.resolve``)."""

    id: str
    backends: tuple[tuple[str, str], ...]
    where: str

    @classmethod
    def single(cls, kind_id: str, name: str, where: str) -> Listed:
        """A kind chosen by its own id alone (no ``choices``)."""
        return cls(kind_id, ((kind_id, name),), where)


@dataclass(frozen=True, repr=False)
class BackendKind:
    id: str  # the kind's own id ("scripted"); also its backend id when it has no ``choices``
    name: str  # for people ("Scripted (offline)")
    make: Make
    fields: frozenset[Field] = frozenset()  # what its panel enables; the rest is greyed out
    # Its requests go over the network to a host: eval caps each host's requests, and the
    # waiting line names the host. Not a server: each run gets a fresh backend.
    server: bool = False
    choices: tuple[Choice, ...] = ()  # the backends it is picked by; () = the kind itself
    base_url: str = ""  # a one-backend server kind's own URL
    # Where its key is looked up, for the one key rule of keys.py (None: it takes no key).
    account: Callable[[BackendConfig], KeyAccount] | None = None
    key_home: Callable[[BackendConfig], KeyHome | None] | None = None
    fixed_model: str = ""  # the model of a kind without a "model" field
    about: str = ""  # one line for its panel where a key's status would be
    who: str = ""  # who a run waits for when it is not a server (a server: its host)
    # The kind-specific lane settings it reads (core/scenarios/kind_settings.py): its panel
    # shows their rows; it ignores the others' values.
    settings: frozenset[str] = frozenset()
    # Where its requests carry each request setting (backends/catalogue/request_fields.py: CHAT,
    # GEMINI…; OFFLINE for a kind that sends none and needs none). A run setting one it has
    # no field for is refused before it starts; the default has no fields.
    request: RequestFields = NO_FIELDS
    # It may drop the start of a prompt longer than its context without saying so (a local
    # server): the context meter then judges its prompt counts by size. A provider's own API
    # answers an error instead, and counts with its own tokenizer.
    cuts_silently: bool = False
    # Its chat request's URL and headers for a base URL and model (the request inspector's
    # Copy as curl): each kind's own API, never another's.
    endpoint: Callable[[str, str], Endpoint] = chat_completions
    notes: Notes | None = None  # a live model's answers need no note

    def __repr__(self) -> str:  # a config's repr names its kind, not every callable
        return f"BackendKind({self.id!r})"

    def __post_init__(self) -> None:
        if ("key" in self.fields) != (self.account is not None):
            raise ValueError(f"backend kind {self.id!r}: a key field and an account go together")
        unknown = set(self.fields) - set(FIELDS)
        if unknown:
            raise ValueError(f"backend kind {self.id!r}: unknown fields {sorted(unknown)}")

    @property
    def backends(self) -> tuple[Choice, ...]:
        return self.choices or (Choice(self.id, self.name, self.base_url),)

    def listed(self, where: str = "") -> Listed:
        """This kind as the catalogue lists it (``where``: "" for one registered as a value)."""
        return Listed(self.id, tuple((c.id, c.name) for c in self.backends), where)

    def choice(self, backend: str) -> Choice:
        for choice in self.backends:
            if choice.id == backend:
                return choice
        raise KeyError(backend)

    def has(self, field: Field) -> bool:
        return field in self.fields

    def check_settings(self, settings: LaneSettings) -> None:
        """Raise SettingError, one line, when a run with ``settings`` would set a request
        setting this kind cannot send: refused before it starts, never sent without it."""
        if line := refusal(self.name, self.request, settings):
            raise SettingError(line)

    @property
    def waits_for(self) -> str:
        return self.who or self.name


@dataclass(frozen=True)
class BackendConfig:
    """What to run against. Never holds a stored key: keys are resolved when a backend is made.

    ``typed_key`` is a key the user typed for ``base_url`` in this session's window;
    ``url_source`` says whether ``base_url`` came from the user or from a file (keys.py).
    Made by ``registry.config_for`` from a backend id.
    """

    kind: BackendKind
    backend: str  # the stable id it was chosen by: the kind's, or one of its choices'
    base_url: str = ""  # "" means the chosen backend's own
    model: str = ""
    timeout_s: float = 60.0
    typed_key: str = ""
    url_source: UrlSource = "user"

    def __post_init__(self) -> None:
        self.kind.choice(self.backend)  # a KeyError for an id the kind is not chosen by

    @property
    def backend_id(self) -> str:
        """The stable id of what this runs against (the preset chosen, not the URL's)."""
        return self.backend

    @property
    def model_name(self) -> str:
        """The model it runs: the one given, or a kind's only model (the offline "scripted"),
        as the window's panel names it; what a price is keyed by."""
        return self.model or self.kind.fixed_model

    @property
    def url(self) -> str:
        """Where its requests go: the URL given, else the chosen backend's own ("" for none)."""
        if not self.kind.has("base_url") and not self.kind.server:
            return ""
        return self.base_url or self.kind.choice(self.backend).base_url
