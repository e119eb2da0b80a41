"""What every backend built on a provider's SDK shares (OpenAI-compatible, Anthropic, Gemini,
Ollama): one client per backend, made on first use on a worker thread, living on the
network loop with its connections; every request paced by its server's throttle, a 429
retried there (throttle.py), whatever the kind.

Making a client imports the SDK and loads the TLS certificates: 40-170 ms (a second for the
first import) that would freeze the window and every other lane, so it happens on a worker
thread. The client's connections belong to the network loop (network_loop.py): the public
methods hand their work to it, and a subclass writes the private ones, which run there.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING, Generic, TypeVar

from sandbox_app.backends.catalogue.keys import host_of
from sandbox_app.backends.transport import errors, server_text
from sandbox_app.backends.transport.throttle import paced
from sandbox_app.core.running.backend import BackendError, Delta, Message, StreamParams
from sandbox_app.core.untrusted.outside_text import secrets_of
from sandbox_app.lazy_import import lazy_import

if TYPE_CHECKING:
    import asyncio
else:
    asyncio = lazy_import("asyncio")


Client = TypeVar("Client")


def missing_key(name: str, env_var: str) -> BackendError:
    """The one line for a backend that needs a key and was given none."""
    return BackendError(
        f"No API key for {name}: set {env_var} or enter a key in the backend settings."
    )


class SdkBackend(Generic[Client]):
    """A backend whose ``Client`` an SDK makes (:meth:`_new_client`, on a worker thread)."""

    label: str

    def __init__(self, base_url: str, key: str = "") -> None:
        # What the server's text must never show back (server_text.py): the key it is sent.
        self._secrets = secrets_of(key)
        self._client: Client | None = None
        self._client_lock = asyncio.Lock()  # concurrent runs of one backend (eval) share it
        self._client_url = base_url
        self._server = host_of(base_url)  # whose pace its requests keep (throttle.py)

    # ---- on the caller's loop: handed to the network loop --------------------------------

    async def aclose(self) -> None:
        from sandbox_app.backends.transport import network_loop

        await network_loop.call(self._aclose())

    async def ready(self) -> None:
        """Make the client now (the SDK imported, its certificates loaded), so the first
        request's wait is the server's alone; a failure is left for that request to say."""
        from sandbox_app.backends.transport import network_loop

        with suppress(BackendError):
            await network_loop.call(self._get_client())

    async def list_models(self) -> list[str]:
        from sandbox_app.backends.transport import network_loop

        return await network_loop.call(server_text.models(self._list_models(), self._secrets))

    def stream(
        self, messages: Sequence[Message], params: StreamParams
    ) -> AsyncGenerator[Delta, None]:
        from sandbox_app.backends.transport import network_loop

        snapshot = list(messages)  # read on the network thread while the caller goes on
        # Every kind's 429s are retried and its server's pace kept in one place (throttle.py).
        return network_loop.relay_stream(
            lambda: server_text.deltas(
                paced(self._server, lambda: self._stream(snapshot, params)), self._secrets
            )
        )

    # ---- on the network loop -------------------------------------------------------------

    async def _get_client(self) -> Client:
        self._check_key()
        async with self._client_lock:
            if self._client is None:
                try:
                    self._client = await asyncio.to_thread(self._new_client)
                except Exception as err:  # e.g. a typo in the port: the SDK refuses the URL
                    raise BackendError(
                        f"Cannot use the base URL {self._client_url!r}: {errors.short(err)}"
                    ) from None
            return self._client

    async def _aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await self._close_client(client)

    def _check_key(self) -> None:
        """Raise :func:`missing_key`'s error when the backend needs a key it was not given."""

    def _new_client(self) -> Client:  # on a worker thread
        raise NotImplementedError

    async def _close_client(self, client: Client) -> None:
        raise NotImplementedError

    async def _list_models(self) -> list[str]:
        raise NotImplementedError

    def _stream(
        self, messages: Sequence[Message], params: StreamParams
    ) -> AsyncGenerator[Delta, None]:
        raise NotImplementedError
