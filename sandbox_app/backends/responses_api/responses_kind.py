"""The OpenAI Responses API kind: ``POST /v1/responses`` through the ``openai`` SDK.

OpenAI's reasoning models show their reasoning (its summaries) only through this API; Chat
Completions gives their token count alone. LM Studio, Ollama and vLLM serve ``/v1/responses``
too (vLLM streams its raw reasoning as ``response.reasoning_text.delta``). The request is
built by responses_input.py (stateless: ``store: false``, reasoning items sent back with
their encrypted content — why, there), the stream read by responses_stream.py.

The backend is the OpenAI-compatible one with another stream: the client (built on a
worker thread, living on the network loop), the model list (``client.models.list``), the
errors as one line (errors.py) and the 429 retry are the same. Its key is OpenAI's by the
one key rule (keys.py): ``OPENAI_API_KEY`` goes only to api.openai.com; any other URL gets
the custom key or one typed for it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING

from sandbox_app.backends.catalogue import request_fields
from sandbox_app.backends.catalogue.keys import KeyAccount, account_for, on_own_host
from sandbox_app.backends.catalogue.kinds import BackendConfig, BackendKind, Endpoint, KeyHome
from sandbox_app.backends.catalogue.presets import ServerConfig, preset_with_id
from sandbox_app.backends.chat_completions.openai_compat import (
    OpenAICompatBackend,
    rate_limited,
)
from sandbox_app.backends.chat_completions.openai_kind import effective_preset
from sandbox_app.backends.chat_completions.request_body import (
    refusal_notice,
    refused_by,
    refused_parameter,
)
from sandbox_app.backends.responses_api import responses_input
from sandbox_app.backends.responses_api.responses_stream import ResponseEvents
from sandbox_app.backends.transport import errors
from sandbox_app.backends.transport.sse import sse_payloads
from sandbox_app.core.running.backend import Backend, BackendError, Delta, Message, StreamParams
from sandbox_app.core.scenarios.run_input import RunInput, ToldVersion
from sandbox_app.lazy_import import lazy_import

if TYPE_CHECKING:
    import asyncio
else:
    asyncio = lazy_import("asyncio")


OPENAI = preset_with_id("openai")  # whose key and URL this kind's own are
# What a server may refuse and the request can do without (a local model's sampling).
DROPPABLE = frozenset({"temperature", "top_p"})


def account(config: BackendConfig) -> KeyAccount:
    return account_for(effective_preset(OPENAI, config.url), config.url)


def key_home(config: BackendConfig) -> KeyHome | None:
    """OpenAI's key, when the URL is another server's (LM Studio, vLLM, a proxy)."""
    if on_own_host(OPENAI, config.url):
        return None
    assert OPENAI.key_env is not None
    return KeyHome(OPENAI.name, OPENAI.key_env, OPENAI.base_url)


def make(config: BackendConfig, _run: RunInput, key: str, _told: ToldVersion) -> Backend:
    url = config.url
    return ResponsesBackend(ServerConfig(url, key, effective_preset(OPENAI, url), config.timeout_s))


class ResponsesBackend(OpenAICompatBackend):
    """Streams responses from one server; everything but the stream is the compatible one's."""

    async def _stream(
        self, messages: Sequence[Message], params: StreamParams
    ) -> AsyncGenerator[Delta, None]:
        client = await self._get_client()
        # The SDK loads its responses module on first use (~0.1 s): not on the network loop.
        responses = await asyncio.to_thread(lambda: client.responses)
        import openai  # already imported by _get_client's worker thread: instant here

        host = self.config.host
        refused = refused_by(self.config.base_url, params.model)
        body = responses_input.request(messages, params, refused)
        while True:
            # The SDK sends the request and raises its typed errors; the events are decoded
            # by responses_stream.py from the SSE lines, not by the SDK's event objects.
            opened = responses.with_streaming_response.create(**responses_input.sdk_arguments(body))
            try:
                response = await opened.__aenter__()
                break
            except openai.RateLimitError as err:
                raise rate_limited(err, host) from None
            except openai.BadRequestError as err:
                param = refused_parameter(err, body)  # each given up once, so this ends
                if param not in DROPPABLE or param in refused:
                    raise await self._explain(err, params) from None
                refused.add(param)
                body = responses_input.request(messages, params, refused)
                yield Delta(notice=refusal_notice(param, params.model))
            except openai.APIError as err:
                raise await self._explain(err, params) from None
        yield Delta(sent_at=response.http_response.request.extensions.get("sent_at"), request=body)
        events = ResponseEvents()
        try:
            async with aclosing(sse_payloads(response.http_response, host)) as payloads:
                async for data in payloads:
                    for delta in events.feed(data):
                        yield delta
                    if events.ended:
                        break
        except BackendError:
            raise
        except Exception as err:  # any transport or decoding failure mid-stream
            raise errors.stream_broke(err, self.config, events.chunks) from None
        finally:
            await opened.__aexit__(None, None, None)


def endpoint(base_url: str, _model: str) -> Endpoint:
    """The Responses API: POST BASE/responses, the key as a Bearer token."""
    return Endpoint(base_url.rstrip("/") + "/responses")


KIND = BackendKind(
    "responses",
    "OpenAI Responses API",
    make,
    fields=frozenset({"base_url", "key", "model", "models", "timeout", "temperature"}),
    server=True,
    base_url=OPENAI.base_url,
    account=account,
    key_home=key_home,
    request=request_fields.RESPONSES,
    endpoint=endpoint,
)
