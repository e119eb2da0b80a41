"""OpenAI and every OpenAI-compatible server (Ollama, LM Studio, llama.cpp, vLLM, …) via the SDK.

One ``AsyncOpenAI`` client per backend configuration, closed with the backend. The SDK's own
retries are off: a 429 is raised as ``RateLimited`` and retried, honouring ``Retry-After``,
by the server's throttle (backends/transport/throttle.py), its wait shown in the trace.
The SDK sends each request and raises its typed errors; the stream's bytes are decoded by
sse.py, and every failure becomes one line by errors.py. ``openai`` is imported on first use:
it costs about a second of start-up the offline model never needs. The client reads its
streams on the background loop of ``network_loop.py``, never on the caller's (GUI) thread.
"""

from __future__ import annotations

import functools
import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from sandbox_app.backends.catalogue.presets import CUSTOM, ServerConfig
from sandbox_app.backends.chat_completions.request_body import (
    ModelFacts,
    effort_notice,
    error_message,
    facts_for,
    nearest_effort,
    refusal_notice,
    refused_parameter,
    request_body,
    sdk_arguments,
)
from sandbox_app.backends.transport import errors, passback
from sandbox_app.backends.transport.http_library import tls_context
from sandbox_app.backends.transport.sdk_backend import SdkBackend, missing_key
from sandbox_app.backends.transport.sse import decode_chunk, sse_payloads
from sandbox_app.backends.transport.throttle import RateLimited, header_wait
from sandbox_app.core.running.backend import BackendError, Delta, Message, StreamParams
from sandbox_app.core.untrusted.file_reader import parse_json_text
from sandbox_app.lazy_import import lazy_import

if TYPE_CHECKING:
    import asyncio

    import openai
else:
    asyncio = lazy_import("asyncio")


class OpenAICompatBackend(SdkBackend["openai.AsyncOpenAI"]):
    """Streams chat completions from one server configuration."""

    def __init__(self, config: ServerConfig) -> None:
        super().__init__(config.base_url, config.api_key)
        self.config = config
        self.label = config.preset.name if config.preset is not CUSTOM else config.host

    def _check_key(self) -> None:
        if self.config.needs_key and not self.config.api_key:
            raise missing_key(self.config.preset.name, str(self.config.preset.key_env))

    def _new_client(self) -> openai.AsyncOpenAI:
        return _ready_client(self.config)

    async def _close_client(self, client: openai.AsyncOpenAI) -> None:
        await client.close()

    async def _list_models(self) -> list[str]:
        client = await self._get_client()
        import openai  # already imported by _get_client's worker thread: instant here

        host = self.config.host
        try:
            # The raw response, so its content type is checked before anything parses it: the
            # SDK reads a web page as a text "page" and fails with an AttributeError.
            raw = await client.models.with_raw_response.list()
        except openai.APIError as err:
            raise errors.translate(err, self.config, model="") from None
        media_type = errors.media_type(raw.http_response.headers)
        if media_type and not media_type.endswith("json"):
            raise errors.not_an_api(host, media_type)
        try:  # by the file reader's rules: 100,000 nested lists are a line, not a crash
            text = raw.http_response.content.decode("utf-8", "replace")
            body = parse_json_text(text, "the models list")
        except ValueError:
            raise errors.not_an_api(host, "") from None
        entries = body.get("data") if isinstance(body, dict) else None
        if not isinstance(entries, list) or not all(
            isinstance(entry, dict) and isinstance(entry.get("id"), str) for entry in entries
        ):
            raise BackendError(
                f"{host} answered with JSON that is not a list of models; check the "
                "base URL (it usually ends in /v1)."
            )
        return sorted(entry["id"] for entry in entries)

    async def _stream(
        self, messages: Sequence[Message], params: StreamParams
    ) -> AsyncGenerator[Delta, None]:

        client = await self._get_client()
        import openai  # already imported by _get_client's worker thread: instant here

        host = self.config.host
        facts = facts_for(self.config.base_url, params.model)
        preset = passback.preset_fields(self.config.preset.id, host, params.model)

        def body() -> dict[str, Any]:
            fields = preset | facts.passback
            return request_body(
                messages, params, facts.refused, efforts=facts.efforts, passback_fields=fields
            )

        request = body()
        while True:
            # The SDK sends the request, checks the status and raises its typed errors; the
            # SSE lines are decoded by sse.py, not by the SDK's pydantic chunk objects.
            opened = client.chat.completions.with_streaming_response.create(
                **sdk_arguments(request)
            )
            try:
                response = await opened.__aenter__()
                break
            except openai.RateLimitError as err:
                raise rate_limited(err, host) from None
            except openai.BadRequestError as err:
                # Whether to retry depends on what this request carried, not on what was
                # known when its 400 came: under eval's concurrency another run may have
                # learnt the same fact while this request was in flight. Facts only grow and
                # a retry must change the request, so this ends.
                notice = _learn(err, request, facts, params)
                retry = body() if notice else request
                if retry == request:
                    raise await self._explain(err, params) from None
                request = retry
                yield Delta(notice=notice)
            except openai.APIError as err:
                raise await self._explain(err, params) from None
        # When the request went out (stamped by the HTTP client's hook): the time to first
        # token starts there, not before the client was built or the SDK imported.
        yield Delta(
            sent_at=response.http_response.request.extensions.get("sent_at"), request=request
        )
        chunks = 0
        # What the reply may have to send back in a tool-calling turn (passback.py).
        gathered = passback.Gathered() if params.tools else None
        try:
            async with aclosing(sse_payloads(response.http_response, host)) as payloads:
                async for data in payloads:
                    delta = decode_chunk(data, gathered)
                    if delta.text:
                        chunks += 1
                    yield delta
            carry = gathered.carry() if gathered is not None else None
            if carry is not None:
                yield Delta(carry=carry)
        except BackendError:
            raise
        except Exception as err:  # any transport or decoding failure mid-stream
            raise errors.stream_broke(err, self.config, chunks) from None
        finally:
            # Closing the response closes the HTTP stream, also when the caller stops early.
            await opened.__aexit__(None, None, None)

    async def _explain(self, err: openai.APIError, params: StreamParams) -> BackendError:
        """Like :func:`errors.translate`, listing the server's models when the model is
        unknown: a 404 for a typo says which names would have worked; a request with tools
        refused because of them says so."""
        import openai

        host, model = self.config.host, params.model
        refused_tools = errors.no_tool_calls(err, host, model) if params.tools else None
        if refused_tools is not None:
            return refused_tools
        if (
            isinstance(err, openai.NotFoundError)
            and model
            and errors.web_page_error(err, host) is None
        ):
            try:
                async with asyncio.timeout(3):
                    models = await self._list_models()
            except (BackendError, TimeoutError):
                return errors.translate(err, self.config, model)
            if model not in models:
                return errors.unknown_model(host, model, models)
        return errors.translate(err, self.config, model)


def rate_limited(err: openai.RateLimitError, host: str) -> BackendError:
    """A 429: out of quota (waiting cannot help) as its line, else :class:`RateLimited`
    with the wait its ``Retry-After`` asks for, for the throttle to retry."""
    return errors.out_of_quota(err, host) or RateLimited(host, header_wait(err.response.headers))


def _learn(err: Exception, request: dict[str, Any], facts: ModelFacts, params: StreamParams) -> str:
    """What a 400 teaches about the model, kept in ``facts``, as the trace's notice; "" when
    it teaches nothing (the 400 is then the user's to read). A fact another run learnt while
    this request was in flight still gets its notice: the caller retries only when the
    request the facts now make differs from the one refused."""
    model = params.model
    required = passback.required_field(error_message(err))
    if required is not None:
        facts.passback.add(required)
        return passback.learned_notice(required, model)
    effort = nearest_effort(err, request)
    asked = params.reasoning_effort
    if effort is not None and asked is not None:
        # Retried once with the nearest: a second refusal of it sends the same request.
        effort = facts.efforts.setdefault(asked, effort)
        return effort_notice(asked, effort, model)
    param = refused_parameter(err, request)
    if param is None:
        return ""
    facts.refused.add(param)
    return refusal_notice(param, model, facts.refused)


def _new_client(config: ServerConfig) -> openai.AsyncOpenAI:
    import openai

    client = openai.AsyncOpenAI(
        base_url=config.base_url,
        # Local servers accept any key, but the SDK insists on one.
        api_key=config.api_key or "not-needed",
        max_retries=0,
        timeout=config.timeout_s,
        http_client=openai.DefaultAsyncHttpxClient(
            verify=tls_context(), event_hooks={"request": [_stamp_sent]}
        ),
    )
    # The SDK imports its resource modules on first attribute access (~0.1 s): do it here,
    # on the worker thread, not in the middle of the first request on the network loop.
    _ = client.chat.completions, client.models
    return client


async def _stamp_sent(request: Any) -> None:
    """Runs as the request goes out, after the client's own set-up."""
    request.extensions["sent_at"] = time.perf_counter()


def _ready_client(config: ServerConfig) -> openai.AsyncOpenAI:
    warm_up()  # before the first request's clock starts, not inside it
    return _new_client(config)


@functools.cache  # once per process: the window starts it early, the CLI on its first client
def warm_up() -> None:
    """Take the SDK's one-off costs now, on a background thread, not in the first request.

    Importing the SDK, loading the certificates and the first request's own set-up (its
    parameter types, the socket layer) take about a second, then ~0.1 s on the network loop:
    enough to make the first run's time to first token look worse than the model's. The
    request goes to a closed local port and is refused at once.
    """
    import openai

    async def refused_request() -> None:
        client = _new_client(ServerConfig("http://127.0.0.1:9/v1", timeout_s=1.0))
        try:
            await client.chat.completions.create(
                **request_body([{"role": "user", "content": ""}], StreamParams(stop=("\n",)))
            )
        except openai.APIError:
            pass  # expected: nothing listens there
        finally:
            await client.close()

    # A plain loop of its own: under qasync's policy asyncio.run() would build a Qt one.
    # Not in debug mode even under -X dev: its steps are slow on purpose.
    with asyncio.Runner(debug=False, loop_factory=asyncio.SelectorEventLoop) as runner:
        runner.run(refused_request())
