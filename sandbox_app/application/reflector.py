"""The reflection model: any backend kind, made by the registry like a lane's (``optimize
--reflect LANE``, the same syntax as ``eval --lane``), asked one user message and read as
text (core/optimizing/reflection.py reads the reply).

A server's client is made once and reused; the offline model plays the scenario's written
reflections (``script.reflections``), reflection ``n`` the ``n``-th of them (round again when
there are fewer), so a whole improvement loop runs with no network. Its thinking, when the
server sends it in a field of its own, is never part of the reply.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import aclosing
from dataclasses import dataclass

from sandbox_app.application.backend_choice import BackendChoice
from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.backends.registry import make_backend
from sandbox_app.core.running.backend import Backend, BackendError, Message, stream_params
from sandbox_app.core.scenarios.run_input import RunInput, Script

NO_REPLIES = (
    "the offline reflection model has no replies written (the scenario's "
    '"script.reflections"); choose a model with --reflect'
)
DEFAULT_MAX_TOKENS = 8192  # a whole template and the reasons for it, a thinking model's too


@dataclass(frozen=True)
class Reply:
    text: str
    tokens_in: int = 0
    tokens_out: int = 0


class Reflector:
    """Asks ``lane``'s model; ``written``: the offline model's replies (the scenario's)."""

    def __init__(
        self, lane: BackendChoice, written: Sequence[str], keys: KeyStore, missing: str = NO_REPLIES
    ) -> None:
        """``missing``: the one line when the offline model has no replies written (Generate
        cases… asks through this class too, its replies in ``script.generated_cases``)."""
        self.lane = lane
        self.written = tuple(written)
        self.keys = keys
        self.missing = missing
        self._server: Backend | None = None

    @property
    def model(self) -> str:
        """How the reflection model is named in a candidate's origin."""
        return self.lane.label

    async def ask(self, prompt: str, number: int) -> Reply:
        """Reflection ``number``'s reply (1, 2, …). Raises BackendError (one line) when the
        model cannot be made or does not answer: the optimization stops there, resumable."""
        config = self.lane.config
        config.kind.check_settings(self.lane.settings)
        backend = self._backend(prompt, number)
        settings = self.lane.settings
        params = stream_params(settings, config.model, settings.max_tokens or DEFAULT_MAX_TOKENS)
        text: list[str] = []
        tokens = (0, 0)
        messages: list[Message] = [{"role": "user", "content": prompt}]
        async with aclosing(backend.stream(messages, params)) as stream:
            async for delta in stream:
                text.append(delta.text)
                if delta.usage is not None:
                    tokens = (delta.usage.prompt_tokens, delta.usage.completion_tokens)
        return Reply("".join(text), *tokens)

    async def aclose(self) -> None:
        if self._server is not None:
            await self._server.aclose()
            self._server = None

    def _backend(self, prompt: str, number: int) -> Backend:
        config = self.lane.config
        if config.kind.server:  # one client: its connections reused reflection after reflection
            if self._server is None:
                self._server = make_backend(config, RunInput(question=prompt), self.keys)
            return self._server
        if not self.written:
            raise BackendError(self.missing)
        reply = self.written[(number - 1) % len(self.written)]
        script = Script((reply,), tokens_per_second=0, question=prompt)
        played = RunInput(question=prompt, script=script)
        return make_backend(config, played, self.keys)
