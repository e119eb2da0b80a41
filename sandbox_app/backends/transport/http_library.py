"""The HTTP library under the ``openai`` SDK: httpx for openai 1.x, httpx2 for 3.x.

The project accepts both SDKs, so neither library is imported by name in the backends. Two
things need the one actually in use: the TLS context its clients are given, and the
exceptions it raises while a response body is read, which the SDK does not wrap.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # ssl (with socket): the SDK's to import, not the window's first frame's
    import ssl

# Newest first: an environment can hold both, and the SDK says which one it uses.
CANDIDATES = ("httpx2", "httpx")


@functools.cache
def http_library() -> ModuleType:
    """The library whose ``AsyncClient`` the SDK's public ``DefaultAsyncHttpxClient`` extends.

    Asked through public names only (the module's ``AsyncClient`` and ``issubclass``), so an
    SDK that renames its internals still answers. Imports ``openai`` (about a second): call it
    on a worker thread or where the SDK is already loaded.
    """
    import openai

    for name in CANDIDATES:
        if importlib.util.find_spec(name) is None:
            continue
        module = importlib.import_module(name)  # already loaded by the SDK when it is the one
        client = getattr(module, "AsyncClient", None)
        if isinstance(client, type) and issubclass(openai.DefaultAsyncHttpxClient, client):
            return module
    raise ImportError(f"openai {openai.__version__} uses none of {', '.join(CANDIDATES)}")


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One TLS context for every client: loading the certificates takes 30-150 ms and holds
    the GIL, so doing it per client froze the window each time four lanes started.

    Built by the library's public ``create_ssl_context()``, so it trusts what the SDK would
    trust on its own (the system store via truststore on Windows and macOS, ``SSL_CERT_FILE``).
    """
    context: ssl.SSLContext = http_library().create_ssl_context()
    return context


@functools.cache
def timeout_errors() -> tuple[type[BaseException], ...]:
    """What a read that waited too long raises: the library's own and asyncio's."""
    return (http_library().TimeoutException, TimeoutError)


@functools.cache
def transport_errors() -> tuple[type[BaseException], ...]:
    """What a lost connection raises mid-body: the library's transport errors (protocol,
    read, network, proxy …) and the socket layer's, should one get through unwrapped."""
    return (http_library().TransportError, OSError, EOFError)
