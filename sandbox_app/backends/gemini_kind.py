"""Google Gemini through its own SDK (``google-genai``): thought summaries and signatures.

Why the native API and not Gemini's OpenAI-compatible endpoint: asked with
``include_thoughts``, the native stream returns the model's thought summaries as parts marked
``thought: true``, shown here as thinking; and a function call part carries a
``thought_signature`` that must be sent back, unchanged, with that call in the next request
(Gemini API docs, "Thinking" and "Thought signatures"; Gemini 3 answers 400 "Function call is
missing a thought_signature" otherwise). The compatible endpoint has neither as a part of its
own: its thinking and signatures ride in vendor fields of its own shape. gemini_contents.py
builds the request and decodes the stream; this module is the kind, the client and the errors.

Key: ``GEMINI_API_KEY`` (or the keyring's "Google Gemini") goes only to
https://generativelanguage.googleapis.com, by the one key rule of keys.py; any other base URL
(a proxy, a test server) gets ``REACT_SANDBOX_API_KEY`` or a key typed for it. The key is
always handed to the SDK, never left for it to find: the SDK would read ``GEMINI_API_KEY`` or
``GOOGLE_API_KEY`` from the environment itself, whatever the host.

The SDK is imported on first use, on a worker thread, like openai_compat.py's; its HTTP
client is an ``httpx2`` client of ours (the SDK's own dependency), so the stream is read the
same way whether or not aiohttp is installed, and the SDK never retries on its own.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import AsyncGenerator, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from sandbox_app.backends import errors
from sandbox_app.backends.gemini_contents import Decoder, request
from sandbox_app.backends.keys import KeyAccount, account_for, on_own_host
from sandbox_app.backends.kinds import BackendConfig, BackendKind, KeyHome
from sandbox_app.backends.presets import Preset, ServerConfig
from sandbox_app.backends.sdk_backend import SdkBackend, missing_key
from sandbox_app.core.running.backend import BackendError, Delta, Message, StreamParams
from sandbox_app.core.scenarios.scenario import Scenario

if TYPE_CHECKING:
    from google import genai

GEMINI = Preset(
    "gemini",
    "Google Gemini",
    "https://generativelanguage.googleapis.com",
    "GEMINI_API_KEY",
    "check your network.",
)
NO_KEY = "no-key"  # what a keyless custom server is sent: the SDK needs some key to build URLs
API_VERSIONS = ("v1beta", "v1", "v1alpha")
# Said, not left to the SDK: its default has changed between releases (v1beta, then v1) and an
# environment variable (GOOGLE_GENAI_API_VERSION) can move it. v1beta is the version the
# Gemini API docs' REST examples of thinking and thought signatures use.
DEFAULT_API_VERSION = "v1beta"
# When this task's request went out (stamped by the HTTP client's hook, which runs in the
# task that sends): the time to first token starts there.
_SENT_AT: contextvars.ContextVar[float | None] = contextvars.ContextVar("sent_at", default=None)


def split_base_url(base_url: str) -> tuple[str, str]:
    """``https://h/v1`` → (``https://h``, ``v1``): the SDK adds the version to the path itself;
    a URL without one gets :data:`DEFAULT_API_VERSION`."""
    stripped = base_url.rstrip("/")
    head, _, last = stripped.rpartition("/")
    if last in API_VERSIONS and urlsplit(head).netloc:
        return head, last
    return stripped, DEFAULT_API_VERSION


class GeminiBackend(SdkBackend["tuple[genai.Client, Any]"]):
    """Streams ``generateContent`` replies from one Gemini endpoint. Its client is the SDK's
    and, under it, our httpx2 client (closed by us)."""

    def __init__(self, config: ServerConfig) -> None:
        super().__init__(config.base_url)
        self.config = config
        self.label = config.preset.name if config.preset is GEMINI else config.host

    def _check_key(self) -> None:
        if self.config.needs_key and not self.config.api_key:
            raise missing_key(GEMINI.name, str(GEMINI.key_env))

    def _new_client(self) -> tuple[genai.Client, Any]:
        return _new_client(self.config)

    async def _close_client(self, client: tuple[genai.Client, Any]) -> None:
        sdk, http = client
        await sdk.aio.aclose()
        await http.aclose()

    async def _list_models(self) -> list[str]:
        client, _ = await self._get_client()
        names: list[str] = []
        try:
            async for model in await client.aio.models.list(config={"page_size": 1000}):
                if model.name:
                    names.append(model.name.removeprefix("models/"))
        except Exception as err:
            raise self._explain(err, "") from None
        return sorted(names)

    async def _stream(
        self, messages: Sequence[Message], params: StreamParams
    ) -> AsyncGenerator[Delta, None]:
        client, _ = await self._get_client()
        from google.genai import types

        body = request(list(messages), params)
        _SENT_AT.set(None)
        try:
            contents = [types.Content.model_validate_json(_json(c)) for c in body["contents"]]
            config = types.GenerateContentConfig.model_validate(body["config"])
            stream = await client.aio.models.generate_content_stream(
                model=params.model, contents=contents, config=config
            )
            # The request goes out, and its status is checked, on the first chunk.
            first = await anext(aiter(stream), None)
        except Exception as err:
            raise self._explain(err, params.model) from None
        yield Delta(sent_at=_SENT_AT.get() or time.perf_counter(), request=body)
        decoder = Decoder()
        chunks = 0
        try:
            if first is not None:
                for delta in decoder.chunk(first):
                    chunks += bool(delta.text)
                    yield delta
                async for response in stream:
                    for delta in decoder.chunk(response):
                        chunks += bool(delta.text)
                        yield delta
        except BackendError:
            raise
        except Exception as err:
            raise self._broke(err, params.model, chunks) from None
        finally:  # closes the HTTP stream, also when the caller stops early
            closing = getattr(stream, "aclose", None)
            if closing is not None:
                await closing()
        for delta in decoder.end():
            yield delta

    def _broke(self, err: Exception, model: str, chunks: int) -> BackendError:
        from google.genai import errors as sdk_errors

        if isinstance(err, sdk_errors.APIError):  # an error the server sent mid-stream
            return self._explain(err, model)
        return errors.stream_broke(err, self.config, chunks)

    def _explain(self, err: BaseException, model: str) -> BackendError:
        """One line for a failed request (the models list when ``model`` is "")."""
        return explain(err, self.config, model)


def explain(err: BaseException, config: ServerConfig, model: str) -> BackendError:
    import httpx2
    from google.genai import errors as sdk_errors

    host = config.host
    if isinstance(err, httpx2.TimeoutException | TimeoutError):
        return BackendError(f"No answer from {host} after {config.timeout_s:g} s (timed out).")
    if isinstance(err, httpx2.TransportError | OSError):
        return BackendError(f"Cannot connect to {host}: {config.preset.hint}")
    if not isinstance(err, sdk_errors.APIError):
        return BackendError(f"Request to {host} failed: {errors.short(err)}")
    detail = errors.sentence(err.message or err.status or str(err.code))
    code, status = err.code, err.status or ""
    whose = f" for {GEMINI.name}" if config.preset is GEMINI else ""
    if code == 401 or (code == 400 and "API key not valid" in detail):
        return BackendError(f"{host} rejected the API key ({code}); check the API key{whose}.")
    if code == 403:
        return BackendError(f"{host} refused access (403 {status}): {detail}")
    if code == 429:
        return BackendError(
            f"Rate limited or out of quota (429 {status}) at {host}: {detail} "
            "Wait a minute or use another model."
        )
    if code == 404:
        what = f"model {model!r}" if model else "the models list"
        return BackendError(f"Not found at {host} (404): {what}. Check the model name.")
    if code >= 500:
        return BackendError(f"Server error {code} from {host}: {detail} Try again later.")
    return BackendError(f"{host} refused the request ({code} {status}): {detail}")


def _json(value: Any) -> str:
    import json

    return json.dumps(value)


async def _stamp_sent(_request: Any) -> None:
    _SENT_AT.set(time.perf_counter())


def _new_client(config: ServerConfig) -> tuple[genai.Client, Any]:
    import httpx2
    from google import genai
    from google.genai import types

    from sandbox_app.backends.http_library import tls_context

    base_url, version = split_base_url(config.base_url)
    http = httpx2.AsyncClient(
        verify=tls_context(), timeout=config.timeout_s, event_hooks={"request": [_stamp_sent]}
    )
    options = types.HttpOptions(
        base_url=base_url,
        api_version=version,
        timeout=int(config.timeout_s * 1000),  # milliseconds
        httpx_async_client=http,
        retry_options=types.HttpRetryOptions(attempts=1),  # failures show, not retried
    )
    client = genai.Client(api_key=config.api_key or NO_KEY, vertexai=False, http_options=options)
    return client, http


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


def make(config: BackendConfig, _scenario: Scenario, key: str) -> GeminiBackend:
    return GeminiBackend(server_config(config, key))


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
)
