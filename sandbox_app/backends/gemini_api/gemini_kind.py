"""Google Gemini through its own API: thought summaries and signatures.

Why the native API and not Gemini's OpenAI-compatible endpoint: asked with
``includeThoughts``, the native stream returns the model's thought summaries as parts marked
``thought: true``, shown here as thinking; and a function call part carries a
``thoughtSignature`` that must be sent back, unchanged, with that call in the next request
(Gemini API docs, "Thinking" and "Thought signatures"; Gemini 3 answers 400 "Function call is
missing a thought_signature" otherwise). The compatible endpoint has neither as a part of its
own: its thinking and signatures ride in vendor fields of its own shape. gemini_contents.py
builds the request, gemini_stream.py sends it and decodes the stream; this module is the
kind, the client and the errors.

The stream is read by us, on the kind's own ``httpx2`` client, not through the
``google-genai`` SDK, whose per-chunk validation held a pane to a fifth of the other kinds'
speed (gemini_stream.py says more). The SDK still lists the models (its pager), made on the
first Refresh on a worker thread over the same client: a run alone never imports it.

Key: ``GEMINI_API_KEY`` (or the keyring's "Google Gemini") goes only to
https://generativelanguage.googleapis.com, by the one key rule of keys.py; any other base URL
(a proxy, a test server) gets ``REACT_SANDBOX_API_KEY`` or a key typed for it. The key goes in
the ``x-goog-api-key`` header, only to the configured base URL (redirects are not followed);
the SDK is always handed it, never left to read ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY`` from
the environment itself, whatever the host.
"""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from sandbox_app.backends.catalogue import request_fields
from sandbox_app.backends.catalogue.keys import KeyAccount, account_for, on_own_host
from sandbox_app.backends.catalogue.kinds import BackendConfig, BackendKind, Endpoint, KeyHome
from sandbox_app.backends.catalogue.presets import Preset, ServerConfig
from sandbox_app.backends.gemini_api.gemini_contents import request
from sandbox_app.backends.gemini_api.gemini_stream import (
    KEY_HEADER,
    Decoder,
    GeminiError,
    check_media_type,
    headers,
    refused,
    stream_url,
)
from sandbox_app.backends.transport import errors
from sandbox_app.backends.transport.sdk_backend import SdkBackend, missing_key
from sandbox_app.backends.transport.sse import sse_payloads
from sandbox_app.backends.transport.throttle import RateLimited, header_wait
from sandbox_app.core.running.backend import BackendError, Delta, Message, StreamParams
from sandbox_app.core.scenarios.run_input import RunInput, ToldVersion
from sandbox_app.lazy_import import lazy_import

if TYPE_CHECKING:
    import asyncio

    import httpx2
    from google import genai
else:
    asyncio = lazy_import("asyncio")

GEMINI = Preset(
    "gemini",
    "Google Gemini",
    "https://generativelanguage.googleapis.com",
    "GEMINI_API_KEY",
    "check your network.",
)
NO_KEY = "no-key"  # what the SDK is given for a keyless custom server: it needs some key
API_VERSIONS = ("v1beta", "v1", "v1alpha")
# Said, not left to a default: the SDK's has changed between releases (v1beta, then v1).
# v1beta is the version the Gemini API docs' REST examples of thinking and thought
# signatures use.
DEFAULT_API_VERSION = "v1beta"


def split_base_url(base_url: str) -> tuple[str, str]:
    """``https://h/v1`` → (``https://h``, ``v1``): the version is a part of each method's
    path; a URL without one gets :data:`DEFAULT_API_VERSION`."""
    stripped = base_url.rstrip("/")
    head, _, last = stripped.rpartition("/")
    if last in API_VERSIONS and urlsplit(head).netloc:
        return head, last
    return stripped, DEFAULT_API_VERSION


@dataclass
class GeminiClient:
    """Our HTTP client for the stream, and the SDK's client for the models list, made on
    first use."""

    http: httpx2.AsyncClient
    base_url: str
    version: str
    sdk_lock: asyncio.Lock  # one SDK client, also when two Refreshes ask at once
    sdk: genai.Client | None = None


class GeminiBackend(SdkBackend[GeminiClient]):
    """Streams ``streamGenerateContent`` replies from one Gemini endpoint."""

    def __init__(self, config: ServerConfig) -> None:
        super().__init__(config.base_url, config.api_key)
        self.config = config
        self.label = config.preset.name if config.preset is GEMINI else config.host

    def _check_key(self) -> None:
        if self.config.needs_key and not self.config.api_key:
            raise missing_key(GEMINI.name, str(GEMINI.key_env))

    def _new_client(self) -> GeminiClient:
        return _new_client(self.config)

    async def _close_client(self, client: GeminiClient) -> None:
        if client.sdk is not None:
            await client.sdk.aio.aclose()
        await client.http.aclose()

    async def _list_models(self) -> list[str]:
        client = await self._get_client()
        names: list[str] = []
        try:
            async with client.sdk_lock:
                if client.sdk is None:  # the SDK's import: not on the network loop
                    client.sdk = await asyncio.to_thread(_new_sdk, self.config, client)
            async for model in await client.sdk.aio.models.list(config={"page_size": 1000}):
                if model.name:
                    names.append(model.name.removeprefix("models/"))
        except Exception as err:
            raise self._explain(err, "") from None
        return sorted(names)

    async def _stream(
        self, messages: Sequence[Message], params: StreamParams
    ) -> AsyncGenerator[Delta, None]:
        client = await self._get_client()
        http, host = client.http, self.config.host
        body = request(list(messages), params)
        url = stream_url(client.base_url, client.version, params.model)
        sent = http.build_request("POST", url, json=body, headers=headers(self.config.api_key))
        try:
            response = await http.send(sent, stream=True)
        except Exception as err:
            raise self._explain(err, params.model) from None
        decoder = Decoder()
        streaming = False
        try:
            if response.status_code == 429:  # retried when Google says when (throttle.py)
                final = self._explain(await refused(response, host), params.model)
                raise RateLimited(host, header_wait(response.headers), final)
            if not response.is_success:
                raise await refused(response, host)
            check_media_type(response, host)
            sent_at = response.request.extensions.get("sent_at") or time.perf_counter()
            yield Delta(sent_at=sent_at, request=body)
            streaming = True
            async with aclosing(sse_payloads(response, host)) as payloads:
                async for data in payloads:
                    for delta in decoder.feed(data):
                        yield delta
        except BackendError:
            raise
        except Exception as err:  # an error payload is the same line as a refused request
            if streaming and not isinstance(err, GeminiError):
                raise errors.stream_broke(err, self.config, decoder.chunks) from None
            raise self._explain(err, params.model) from None
        finally:  # closes the HTTP stream, also when the caller stops early
            await response.aclose()
        for delta in decoder.end():
            yield delta

    def _explain(self, err: BaseException, model: str) -> BackendError:
        """One line for a failed request (the models list when ``model`` is "")."""
        return explain(err, self.config, model)


def explain(err: BaseException, config: ServerConfig, model: str) -> BackendError:
    import httpx2

    host = config.host
    if isinstance(err, BackendError):
        return err
    if isinstance(err, httpx2.TimeoutException | TimeoutError):
        return BackendError(f"No answer from {host} after {config.timeout_s:g} s (timed out).")
    if isinstance(err, httpx2.TransportError | OSError):
        return BackendError(f"Cannot connect to {host}: {config.preset.hint}")
    api = err if isinstance(err, GeminiError) else _sdk_error(err)
    if api is None:
        return BackendError(f"Request to {host} failed: {errors.short(err)}")
    detail = errors.sentence(api.message or api.status or str(api.code))
    code, status = api.code, api.status
    said = f"{code} {status}".strip()
    whose = f" for {GEMINI.name}" if config.preset is GEMINI else ""
    if code == 401 or (code == 400 and "API key not valid" in detail):
        return BackendError(f"{host} rejected the API key ({code}); check the API key{whose}.")
    if code == 403:
        return BackendError(f"{host} refused access ({said}): {detail}")
    if code == 429:
        return BackendError(
            f"Rate limited or out of quota ({said}) at {host}: {detail} "
            "Wait a minute or use another model."
        )
    if code == 404:
        what = f"model {model!r}" if model else "the models list"
        return BackendError(f"Not found at {host} (404): {what}. Check the model name.")
    if code >= 500:
        return BackendError(f"Server error {code} from {host}: {detail} Try again later.")
    return BackendError(f"{host} refused the request ({said}): {detail}")


def _sdk_error(err: BaseException) -> GeminiError | None:
    """The SDK's APIError (the models list) as ours. Looked up, not imported: when the SDK
    was never loaded, no error can be one of its own."""
    sdk_errors = sys.modules.get("google.genai.errors")
    if sdk_errors is None or not isinstance(err, sdk_errors.APIError):
        return None
    return GeminiError(err.code, err.status or "", err.message or "")


async def _stamp_sent(request: Any) -> None:
    """Runs as the request goes out: the time to first token starts there."""
    request.extensions["sent_at"] = time.perf_counter()


def _new_client(config: ServerConfig) -> GeminiClient:
    import httpx2

    from sandbox_app.backends.transport.http_library import tls_context

    base_url, version = split_base_url(config.base_url)
    http = httpx2.AsyncClient(
        verify=tls_context(), timeout=config.timeout_s, event_hooks={"request": [_stamp_sent]}
    )
    return GeminiClient(http, base_url, version, asyncio.Lock())


def _new_sdk(config: ServerConfig, client: GeminiClient) -> genai.Client:
    """The SDK's client over our HTTP client (no retries of its own, the version said)."""
    from google import genai
    from google.genai import types

    options = types.HttpOptions(
        base_url=client.base_url,
        api_version=client.version,
        timeout=int(config.timeout_s * 1000),  # milliseconds
        httpx_async_client=client.http,
        retry_options=types.HttpRetryOptions(attempts=1),  # failures show, not retried
    )
    return genai.Client(api_key=config.api_key or NO_KEY, vertexai=False, http_options=options)


def _account(config: BackendConfig) -> KeyAccount:
    return account_for(GEMINI, config.url)


def _key_home(config: BackendConfig) -> KeyHome | None:
    """GEMINI_API_KEY's own host, when the config's URL is another."""
    if on_own_host(GEMINI, config.url):
        return None
    return KeyHome(GEMINI.name, GEMINI.key_env or "", GEMINI.base_url)


def server_config(config: BackendConfig, key: str) -> ServerConfig:
    url = config.url
    preset = GEMINI if on_own_host(GEMINI, url) else Preset("custom", url, url)
    return ServerConfig(url, key, preset, config.timeout_s)


def make(config: BackendConfig, _run: RunInput, key: str, _told: ToldVersion) -> GeminiBackend:
    return GeminiBackend(server_config(config, key))


def endpoint(base_url: str, model: str) -> Endpoint:
    """POST …/models/MODEL:streamGenerateContent?alt=sse, the key in x-goog-api-key."""
    return Endpoint(stream_url(*split_base_url(base_url), model), f"{KEY_HEADER}: {{key}}")


KIND = BackendKind(
    "gemini",
    GEMINI.name,
    make,
    fields=frozenset({"base_url", "key", "model", "models", "timeout", "temperature"}),
    server=True,
    base_url=GEMINI.base_url,
    account=_account,
    key_home=_key_home,
    settings=frozenset({"thinking_budget"}),
    request=request_fields.GEMINI,
    endpoint=endpoint,
)
