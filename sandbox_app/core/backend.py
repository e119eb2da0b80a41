"""What a model backend is (a protocol and its value types), where the engine can import it.

Backends implement it (backends/), the engine consumes it (core/engine.py); living in core,
it keeps every dependency pointing one way: backends → core, never core → backends.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import Protocol

Message = dict[str, str]


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class Delta:
    """One piece of a streamed reply: text, the server's usage report, or a notice for the trace."""

    text: str = ""
    usage: Usage | None = None
    notice: str = ""  # e.g. "Rate limited (429): retrying in 2 s (1 of 3)"
    chunks: int = 1  # how many of the server's chunks the text came in (merged when relayed)


@dataclass(frozen=True)
class StreamParams:
    model: str = ""
    temperature: float | None = 0.0
    max_tokens: int = 512
    top_p: float | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()


class BackendError(Exception):
    """A failure the user can act on, in one line ("Cannot connect to … — is Ollama running?")."""


class Backend(Protocol):
    label: str

    def stream(
        self, messages: Sequence[Message], params: StreamParams
    ) -> AsyncGenerator[Delta, None]:
        """Stream one reply. Raises :class:`BackendError`; text already yielded stays valid."""
        ...

    async def list_models(self) -> list[str]: ...

    async def aclose(self) -> None: ...
