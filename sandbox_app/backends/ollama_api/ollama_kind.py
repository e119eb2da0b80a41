"""Ollama's own API as a backend kind ("ollama-native"), through the official ``ollama`` library.

Why not only the OpenAI-compatible preset ("ollama"): Ollama's /v1 endpoint ignores
``num_ctx`` (a run silently loses the start of its prompt when the default context is small),
takes no ``think`` and no ``keep_alive``. Its own /api/chat takes all three. The model list
(/api/tags with /api/ps) says each model's size and whether it is loaded, and a missing model
can be pulled from the panel (model_store.py).

The library is imported on first use (start-up time), its ``AsyncClient`` built on a worker
thread and used only on the background loop of network_loop.py.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from sandbox_app.backends.catalogue import request_fields
from sandbox_app.backends.catalogue.keys import host_of
from sandbox_app.backends.catalogue.kinds import BackendConfig, BackendKind, Endpoint
from sandbox_app.backends.ollama_api import ollama_wire
from sandbox_app.backends.ollama_api.model_store import PullProgress, relayed
from sandbox_app.backends.transport.errors import clipped
from sandbox_app.backends.transport.sdk_backend import SdkBackend
from sandbox_app.backends.transport.throttle import RateLimited
from sandbox_app.core.running.backend import Backend, BackendError, Delta, Message, StreamParams
from sandbox_app.core.scenarios.run_input import RunInput, ToldVersion

if TYPE_CHECKING:
    import ollama


class OllamaBackend(SdkBackend["ollama.AsyncClient"]):
    """Streams /api/chat from one Ollama server; lists and pulls its models."""

    def __init__(self, base_url: str, timeout_s: float = 60.0) -> None:
        self.base_url = ollama_wire.host_url(base_url)
        super().__init__(self.base_url)
        self.host = host_of(self.base_url)
        self.label = f"Ollama {self.host}"
        self.timeout_s = timeout_s
        self.model_notes: dict[str, str] = {}

    def pull(self, model: str) -> AsyncIterator[PullProgress]:
        return relayed(lambda: self._pull(model))

    def _new_client(self) -> ollama.AsyncClient:
        return _new_client(self.base_url, self.timeout_s)

    async def _close_client(self, client: ollama.AsyncClient) -> None:
        await client.close()  # type: ignore[no-untyped-call]  # the library's

    async def _list_models(self) -> list[str]:
        client = await self._get_client()
        try:
            listed = await client.list()
        except Exception as err:
            raise self._failure(err, "") from None
        try:  # which are loaded is a nicety: a server without /api/ps still lists
            loaded = {entry.model for entry in (await client.ps()).models}
        except Exception:
            loaded = set()
        notes = {
            entry.model: ollama_wire.model_note(entry.size, entry.model in loaded)
            for entry in listed.models
            if entry.model
        }
        self.model_notes = notes
        return sorted(notes)

    async def _stream(
        self, messages: Sequence[Message], params: StreamParams
    ) -> AsyncGenerator[Delta, None]:
        client = await self._get_client()
        request = ollama_wire.chat_request(messages, params)
        reader = ollama_wire.ChunkReader()
        try:
            # The library sends the request on the first read of what chat() returns.
            chunks = await client.chat(**request)
            yield Delta(sent_at=time.perf_counter(), request=request)
            async with (
                aclosing(chunks) as stream,  # closing it closes the HTTP stream
                aclosing(ollama_wire.read_lines(stream)) as lines,
            ):
                async for chunk in lines:
                    for delta in reader.read(chunk):
                        yield delta
        except BackendError:
            raise
        except Exception as err:
            if _is_status(err) and getattr(err, "status_code", 0) == 429:
                # A gateway in front of Ollama: the library keeps no headers, so the throttle
                # backs off 1, 2, 4 s (throttle.py).
                raise RateLimited(self.host, None) from None
            failure = self._failure(err, params.model)
            if reader.chunks and not _is_status(err):
                failure = ollama_wire.broke(self.host, reader.chunks, str(failure))
            raise failure from None

    async def _pull(self, model: str) -> AsyncGenerator[PullProgress, None]:
        client = await self._get_client()
        try:
            progress: Any = await client.pull(model, stream=True)  # an async generator
            async with aclosing(progress) as stream:  # closing it stops the download
                async for line in stream:
                    yield PullProgress(line.status or "", line.completed, line.total)
        except Exception as err:
            raise self._failure(err, model, pulling=True) from None

    def _failure(self, err: Exception, model: str, pulling: bool = False) -> BackendError:
        """The one line for what the library or its HTTP client raised."""
        import httpx
        import ollama

        if isinstance(err, ollama.ResponseError):
            if pulling:  # a missing model is what Pull is for: the server's words then
                detail = clipped(str(err.error)) if err.error else "failed"
                return BackendError(f"Ollama at {self.host} could not pull {model!r}: {detail}")
            return ollama_wire.refused(err.status_code, str(err.error), self.host, model)
        if isinstance(err, httpx.TimeoutException | TimeoutError):
            return ollama_wire.timed_out(self.host, self.timeout_s)
        if isinstance(err, ConnectionError | httpx.ConnectError):
            return ollama_wire.unreachable(self.host)
        if isinstance(err, httpx.TransportError):
            return BackendError(f"The connection to {self.host} was lost.")
        if isinstance(err, ValueError | ollama_wire.NotOllama):  # not JSON, not Ollama's shape
            return BackendError(
                f"{self.host} answered with something that is not Ollama's API — check the "
                "base URL (Ollama's own, e.g. http://localhost:11434)."
            )
        return BackendError(f"Request to {self.host} failed: {type(err).__name__}: {err}")


def _is_status(err: Exception) -> bool:
    import ollama

    return isinstance(err, ollama.ResponseError) and err.status_code > 0


def _new_client(base_url: str, timeout_s: float) -> ollama.AsyncClient:
    import ollama

    from sandbox_app.backends.transport.http_library import tls_context

    return ollama.AsyncClient(
        host=base_url,
        timeout=timeout_s,
        verify=tls_context(),
        event_hooks={"request": [_without_key]},
    )


async def _without_key(request: Any) -> None:
    """The library adds OLLAMA_API_KEY to every request, to any host: this kind takes no key,
    and the one key rule (keys.py) sends a key only where it belongs."""
    request.headers.pop("authorization", None)


def make(config: BackendConfig, _run: RunInput, key: str, _told: ToldVersion) -> Backend:
    return OllamaBackend(config.url, config.timeout_s)


def endpoint(base_url: str, _model: str) -> Endpoint:
    """Ollama's own POST ROOT/api/chat, which takes no key."""
    return Endpoint(ollama_wire.host_url(base_url) + "/api/chat", key_header="")


KIND = BackendKind(
    "ollama-native",
    "Ollama (native API)",
    make,
    fields=frozenset({"base_url", "model", "models", "timeout", "temperature", "pull"}),
    server=True,
    base_url=ollama_wire.DEFAULT_URL,
    settings=frozenset({"context_window", "think", "keep_alive"}),
    cuts_silently=True,  # num_ctx smaller than the prompt: its start is dropped, unsaid
    request=request_fields.OLLAMA,
    endpoint=endpoint,
)
