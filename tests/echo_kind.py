"""A backend kind that lives only in the tests: "echo", no URL and no key, whose model always
answers "Answer: echo from MODEL". Registered by a fixture, never by editing the app: that
the window, ``run``, ``eval`` and the scenario file then know it shows that a kind is data."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterator, Sequence

from sandbox_app.backends.catalogue.kinds import BackendConfig, BackendKind
from sandbox_app.backends.catalogue.request_fields import OFFLINE
from sandbox_app.backends.registry import register_kind, unregister_kind
from sandbox_app.core.running.backend import Backend, Delta, Message, StreamParams
from sandbox_app.core.scenarios.scenario import Scenario


class EchoBackend:
    label = "Echo"

    def __init__(self, model: str) -> None:
        self.model = model

    async def stream(
        self, messages: Sequence[Message], params: StreamParams
    ) -> AsyncGenerator[Delta, None]:
        yield Delta(text=answer(self.model))

    async def list_models(self) -> list[str]:
        return [self.model]

    async def aclose(self) -> None:
        return None


def answer(model: str) -> str:
    return f"Answer: echo from {model}"


def make(config: BackendConfig, _scenario: Scenario, key: str, _version: str) -> Backend:
    assert key == ""  # a kind without an account is never given one
    return EchoBackend(config.model)


# No request goes anywhere: every setting is moot (OFFLINE), as for the offline model.
ECHO = BackendKind(
    "echo", "Echo", make, fields=frozenset({"model", "temperature"}), request=OFFLINE
)


def registered() -> Iterator[BackendKind]:
    """For a fixture: the echo kind, registered for one test."""
    register_kind(ECHO)
    try:
        yield ECHO
    finally:
        unregister_kind(ECHO.id)
