"""The Anthropic Messages kind: Claude through the official ``anthropic`` SDK (AsyncAnthropic).

Why not Anthropic's OpenAI-compatible layer: it returns no thinking, ignores
``reasoning_effort``, and has no signed thinking blocks, ``stop_reason`` or prompt-cache
figures. Here a streaming ``POST /v1/messages`` is sent by the SDK (typed errors, its own
retries off: a 429 is retried by the server's throttle, throttle.py, its wait shown in the
trace) and its SSE payloads are read by anthropic_messages.py. Any server speaking the
Messages API (LM Studio, providers with an Anthropic-compatible endpoint) works through its
base URL.

The key, by the one rule of keys.py: ``ANTHROPIC_API_KEY`` (or the keyring's "Anthropic") goes
only to https://api.anthropic.com; another URL gets a key typed for it, its host's keyring
entry or REACT_SANDBOX_API_KEY. The SDK is always given the key explicitly, so it never
reads ANTHROPIC_API_KEY from the environment itself. ``anthropic`` is imported on first use,
on a worker thread, like the openai SDK (start-up time is a tracked figure).
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from sandbox_app.backends.catalogue import request_fields
from sandbox_app.backends.catalogue.keys import KeyAccount, account_for, on_own_host
from sandbox_app.backends.catalogue.kinds import BackendConfig, BackendKind, Endpoint, KeyHome
from sandbox_app.backends.catalogue.presets import CUSTOM, Preset, ServerConfig
from sandbox_app.backends.messages_api.anthropic_messages import (
    NotAStream,
    StreamDecoder,
    StreamFailed,
    request_body,
)
from sandbox_app.backends.transport import errors
from sandbox_app.backends.transport.http_library import tls_context
from sandbox_app.backends.transport.sdk_backend import SdkBackend, missing_key
from sandbox_app.backends.transport.sse import gathered_reads, sse_data, sse_lines
from sandbox_app.backends.transport.throttle import RateLimited, header_wait
from sandbox_app.core.running.backend import Backend, BackendError, Delta, Message, StreamParams
from sandbox_app.core.scenarios.run_input import RunInput, ToldVersion

if TYPE_CHECKING:
    import anthropic

# Not one of presets.py's OpenAI-compatible servers: the key's home, for keys.py's rule.
ANTHROPIC = Preset(
    "anthropic",
    "Anthropic",
    "https://api.anthropic.com",
    "ANTHROPIC_API_KEY",
    "check your network.",
)


def preset_for(url: str) -> Preset:
    return ANTHROPIC if on_own_host(ANTHROPIC, url) else CUSTOM


def account(config: BackendConfig) -> KeyAccount:
    return account_for(ANTHROPIC, config.url)


def key_home(config: BackendConfig) -> KeyHome | None:
    if on_own_host(ANTHROPIC, config.url):
        return None
    return KeyHome(ANTHROPIC.name, "ANTHROPIC_API_KEY", ANTHROPIC.base_url)


def make(config: BackendConfig, _run: RunInput, key: str, _told: ToldVersion) -> Backend:
    url = config.url
    return AnthropicBackend(ServerConfig(url, key, preset_for(url), config.timeout_s))


def endpoint(base_url: str, _model: str) -> Endpoint:
    """The Messages API: POST BASE/v1/messages, the key in x-api-key, the API version the
    SDK sends (read from it when asked: the SDK is not imported with this module)."""
    from anthropic._constants import ANTHROPIC_API_VERSION

    return Endpoint(
        base_url.rstrip("/") + "/v1/messages",
        "x-api-key: {key}",
        (f"anthropic-version: {ANTHROPIC_API_VERSION}",),
    )


KIND = BackendKind(
    "anthropic",
    "Anthropic (Claude)",
    make,
    fields=frozenset({"base_url", "key", "model", "models", "timeout", "temperature"}),
    server=True,
    base_url=ANTHROPIC.base_url,
    account=account,
    key_home=key_home,
    settings=frozenset({"thinking_budget", "prompt_cache"}),
    request=request_fields.ANTHROPIC,
    endpoint=endpoint,
)


class AnthropicBackend(SdkBackend["anthropic.AsyncAnthropic"]):
    """Streams Messages API replies from one server configuration."""

    def __init__(self, config: ServerConfig) -> None:
        super().__init__(config.base_url, config.api_key)
        self.config = config
        self.label = "Anthropic" if config.preset is ANTHROPIC else config.host
        self._told: set[str] = set()  # adjustments already said: once per backend, not per step

    def _check_key(self) -> None:
        if self.config.needs_key and not self.config.api_key:
            raise missing_key("Anthropic", "ANTHROPIC_API_KEY")

    def _new_client(self) -> anthropic.AsyncAnthropic:
        return _new_client(self.config)

    async def _close_client(self, client: anthropic.AsyncAnthropic) -> None:
        await client.close()

    async def _list_models(self) -> list[str]:
        client = await self._get_client()
        import anthropic

        try:
            return sorted([model.id async for model in client.models.list()])
        except anthropic.APIError as err:
            raise translate(err, self.config, "") from None

    async def _stream(
        self, messages: Sequence[Message], params: StreamParams
    ) -> AsyncGenerator[Delta, None]:

        client = await self._get_client()
        import anthropic

        body, notes = request_body(messages, params, params.prompt_cache)
        for note in notes:
            if note not in self._told:
                self._told.add(note)
                yield Delta(notice=note)
        # The fields the SDK requires by name; the rest as they are, through extra_body.
        required = ("model", "max_tokens", "messages", "stream")
        extra = {k: v for k, v in body.items() if k not in required}
        while True:
            opened = client.messages.with_streaming_response.create(
                model=body["model"],
                max_tokens=body["max_tokens"],
                messages=body["messages"],
                stream=True,
                extra_body=extra,
            )
            try:
                response = await opened.__aenter__()
                break
            except anthropic.RateLimitError as err:  # retried by the throttle (throttle.py)
                raise RateLimited(self.config.host, header_wait(err.response.headers)) from None
            except anthropic.APIError as err:
                raise translate(err, self.config, params.model) from None
        yield Delta(sent_at=response.http_response.request.extensions.get("sent_at"), request=body)
        decoder = StreamDecoder()
        events = 0
        try:
            async with (
                aclosing(response.http_response.aiter_bytes()) as raw,
                aclosing(gathered_reads(raw)) as reads,
                aclosing(sse_lines(reads)) as lines,
            ):
                async for line in lines:
                    data = sse_data(line)
                    if not data:
                        continue
                    for delta in decoder.feed(data):
                        yield delta
                    events += 1
            for delta in decoder.finish():  # a stream cut before message_stop
                yield delta
        except BackendError:
            raise
        except NotAStream as err:
            raise BackendError(
                f"{self.config.host} sent a stream that breaks the Messages API's rules after "
                f"{events} events ({err}); the reply is not taken."
            ) from None
        except StreamFailed as err:
            raise BackendError(
                f"{self.config.host} ended the stream with an error after {events} events "
                f"({err}); the partial reply is kept."
            ) from None
        except Exception as err:  # transport or decoding failure mid-stream
            raise errors.stream_broke(err, self.config, events) from None
        finally:
            await opened.__aexit__(None, None, None)


def translate(err: anthropic.APIError, config: ServerConfig, model: str) -> BackendError:
    """The one line for a request the SDK reported as failed ("" model: the models list)."""
    import anthropic

    host = config.host
    if isinstance(err, anthropic.APITimeoutError):
        return BackendError(f"No answer from {host} after {config.timeout_s:g} s (timed out).")
    if isinstance(err, anthropic.APIConnectionError):
        return BackendError(f"Cannot connect to {host}: {config.preset.hint}")
    detail = errors.short(err)
    if isinstance(err, anthropic.AuthenticationError):
        whose = " for Anthropic" if config.preset is ANTHROPIC else ""
        return BackendError(f"{host} rejected the API key (401); check the API key{whose}.")
    if isinstance(err, anthropic.PermissionDeniedError):
        return BackendError(f"{host} refused access (403): {detail}")
    if isinstance(err, anthropic.NotFoundError):
        what = f"model {model!r}" if model else "the models list"
        return BackendError(
            f"Not found at {host} (404): {what}. Check the model name, and that the base URL "
            "is the server's root (no /v1)."
        )
    status = err.status_code if isinstance(err, anthropic.APIStatusError) else None
    if status == 529:
        return BackendError(f"{host} is overloaded (529): {detail} Try again in a while.")
    if status is not None and status >= 500:
        return BackendError(f"Server error {status} from {host}: {detail} Try again later.")
    if status is not None:
        return BackendError(f"{host} refused the request ({status}): {detail}")
    return BackendError(f"Request to {host} failed: {detail}")


def _new_client(config: ServerConfig) -> anthropic.AsyncAnthropic:
    import anthropic

    client = anthropic.AsyncAnthropic(
        base_url=config.base_url,
        # Always explicit: given None, the SDK would read ANTHROPIC_API_KEY itself and send
        # it to whatever host this is. A server that takes no key still gets a header.
        api_key=config.api_key or "not-needed",
        max_retries=0,
        timeout=config.timeout_s,
        http_client=anthropic.DefaultAsyncHttpxClient(
            verify=tls_context(), event_hooks={"request": [_stamp_sent]}
        ),
    )
    _ = client.messages, client.models  # the SDK's lazy imports, here on the worker thread
    return client


async def _stamp_sent(request: Any) -> None:
    request.extensions["sent_at"] = time.perf_counter()
