"""OpenAI and every OpenAI-compatible server (Ollama, LM Studio, llama.cpp, vLLM, …) via the SDK.

One ``AsyncOpenAI`` client per backend configuration, closed with the backend. The SDK's own
retries are off so a 429 retry (honouring ``Retry-After``, at most 3 times) shows in the trace,
and every failure becomes one line that says what to do. ``openai`` is imported on first use:
it costs about a second of start-up the offline model never needs. The client reads its
streams on the background loop of ``network_loop.py``, never on the caller's (GUI) thread.
"""

from __future__ import annotations

import asyncio
import functools
import json
import ssl
import time
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from sandbox_app.backends import network_loop
from sandbox_app.backends.base import BackendError, Delta, Message, StreamParams, Usage

if TYPE_CHECKING:
    import openai

MAX_RETRIES = 3
# Reading a stream: a chunk that was already buffered comes back in well under this; one that
# took longer was waited for, so pause GATHER_S to let the next ones gather (_gathered_reads).
BUFFERED_READ_S = 0.0002
GATHER_S = 0.005
MAX_RETRY_WAIT_S = 60.0
# A web page answering with one of these is a web server with no such route (python -m
# http.server answers POST with 501, most web apps GET/POST they don't know with 404/405, a
# TLS port spoken to in plain HTTP with 400): the base URL is not an API. An HTML 5xx outage
# page (a proxy's 502/503/504), 401/403 or 429 still means what its status says.
NOT_AN_API_STATUSES = frozenset({400, 404, 405, 501})
WEB_PAGE_TYPES = frozenset({"text/html", "application/xhtml+xml"})


@dataclass(frozen=True)
class Preset:
    name: str
    base_url: str
    key_env: str | None = None  # where the key is read from; None: local, no key needed
    hint: str = "is the server running?"


PRESETS: tuple[Preset, ...] = (
    Preset("OpenAI", "https://api.openai.com/v1", "OPENAI_API_KEY", "check your network."),
    Preset("Ollama", "http://localhost:11434/v1", None, "is Ollama running (ollama serve)?"),
    Preset("LM Studio", "http://localhost:1234/v1", None, "is LM Studio's local server started?"),
    Preset("llama.cpp", "http://localhost:8080/v1", None, "is llama-server running?"),
    Preset("vLLM", "http://localhost:8000/v1", None, "is vllm serve running?"),
    Preset(
        "OpenRouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", "check your network."
    ),
    Preset("Groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY", "check your network."),
)
CUSTOM = Preset("Custom", "", None)


def preset_named(name: str) -> Preset:
    for preset in PRESETS:
        if preset.name.casefold() == name.casefold():
            return preset
    raise KeyError(name)


def preset_for_url(base_url: str) -> Preset:
    for preset in PRESETS:
        if preset.base_url.rstrip("/") == base_url.rstrip("/"):
            return preset
    return CUSTOM


@dataclass(frozen=True)
class ServerConfig:
    base_url: str
    api_key: str = ""
    preset: Preset = CUSTOM
    timeout_s: float = 60.0

    @property
    def host(self) -> str:
        return urlsplit(self.base_url).netloc or self.base_url

    @property
    def needs_key(self) -> bool:
        return self.preset.key_env is not None


class OpenAICompatBackend:
    """Streams chat completions from one server configuration."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.label = config.preset.name if config.preset is not CUSTOM else config.host
        self._client: openai.AsyncOpenAI | None = None

    async def _get_client(self) -> openai.AsyncOpenAI:
        if self.config.needs_key and not self.config.api_key:
            env = self.config.preset.key_env
            raise BackendError(
                f"No API key for {self.config.preset.name}: set {env} or enter a key "
                "in the backend settings."
            )
        if self._client is None:
            # Building a client loads the TLS certificates: 40-170 ms that would freeze the
            # window (and every other lane), so it happens on a worker thread.
            try:
                self._client = await asyncio.to_thread(_new_client, self.config)
            except Exception as err:  # e.g. a typo in the port: the SDK rejects the URL
                raise BackendError(
                    f"Cannot use the base URL {self.config.base_url!r}: {_short(err)}"
                ) from None
        return self._client

    # The client and its connections live on the network loop (network_loop.py): the
    # public methods hand their work to it, the private ones run there.

    async def aclose(self) -> None:
        await network_loop.call(self._aclose())

    async def list_models(self) -> list[str]:
        return await network_loop.call(self._list_models())

    def stream(
        self, messages: Sequence[Message], params: StreamParams
    ) -> AsyncGenerator[Delta, None]:
        snapshot = list(messages)  # read on the network thread while the caller goes on
        return network_loop.relay_stream(lambda: self._stream(snapshot, params))

    async def _aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def _list_models(self) -> list[str]:
        client = await self._get_client()
        import openai  # already imported by _get_client's worker thread: instant here

        try:
            # The raw response, so its content type is checked before anything parses it: the
            # SDK reads a web page as a text "page" and fails with an AttributeError.
            raw = await client.models.with_raw_response.list()
        except openai.APIError as err:
            raise self._translate(err, model="") from None
        media_type = _media_type(raw.http_response.headers)
        if media_type and not media_type.endswith("json"):
            raise self._not_an_api(media_type)
        try:
            body = raw.http_response.json()
        except ValueError:  # also UnicodeDecodeError
            raise self._not_an_api("") from None
        entries = body.get("data") if isinstance(body, dict) else None
        if not isinstance(entries, list) or not all(
            isinstance(entry, dict) and isinstance(entry.get("id"), str) for entry in entries
        ):
            raise BackendError(
                f"{self.config.host} answered with JSON that is not a list of models; check the "
                "base URL (it usually ends in /v1)."
            )
        return sorted(entry["id"] for entry in entries)

    def _not_an_api(self, media_type: str, status: int = 200) -> BackendError:
        """The one line for a server that answered, but not as an OpenAI-compatible API does."""
        if media_type in WEB_PAGE_TYPES:
            what = "a web page"
        elif media_type:
            what = f"{media_type} content"
        else:
            what = "something that is not JSON"
        if status != 200:
            what += f" ({status})"
        return BackendError(
            f"{self.config.host} answered with {what}, not an OpenAI-compatible API — "
            "check the base URL (it usually ends in /v1)."
        )

    def _web_page_error(self, err: openai.APIError) -> BackendError | None:
        """The not-an-API line for an error status that came as a web server's own page."""
        import openai

        if not isinstance(err, openai.APIStatusError) or err.status_code not in NOT_AN_API_STATUSES:
            return None
        media_type = _media_type(err.response.headers)
        if media_type not in WEB_PAGE_TYPES:
            return None
        return self._not_an_api(media_type, err.status_code)

    async def _stream(
        self, messages: Sequence[Message], params: StreamParams
    ) -> AsyncGenerator[Delta, None]:
        client = await self._get_client()
        import openai  # already imported by _get_client's worker thread: instant here

        request = _request(messages, params)
        for attempt in range(MAX_RETRIES + 1):
            # The SDK sends the request, checks the status and raises its typed errors; the
            # SSE lines are decoded here. The SDK's own stream builds a pydantic object per
            # chunk, about 70% of the CPU a chunk costs, which caps one process at ~3,000
            # chunks/s and freezes the window when four fast lanes stream at once.
            opened = client.chat.completions.with_streaming_response.create(**request)
            try:
                response = await opened.__aenter__()
                break
            except openai.RateLimitError as err:
                if getattr(err, "code", None) == "insufficient_quota":
                    # Out of credit, not busy: waiting and retrying cannot help.
                    raise BackendError(
                        f"{self.config.host}: {_short(err)} (429, insufficient quota)"
                    ) from None
                if attempt == MAX_RETRIES:
                    raise BackendError(
                        f"Rate limited (429) by {self.config.host}: gave up after "
                        f"{MAX_RETRIES} retries. Wait a minute or use another model."
                    ) from None
                wait = _retry_after(err, default=2.0**attempt)
                yield Delta(
                    notice=f"Rate limited (429): retrying in {wait:g} s "
                    f"({attempt + 1} of {MAX_RETRIES})"
                )
                await asyncio.sleep(wait)
            except openai.APIError as err:
                raise await self._explain(err, params.model) from None
        chunks = 0
        try:
            # A web UI's address answers 200 with its page: without this check its lines,
            # none starting with "data:", would read as an empty reply, step after step.
            media_type = _media_type(response.http_response.headers)
            if media_type and media_type != "text/event-stream" and not media_type.endswith("json"):
                raise self._not_an_api(media_type)
            # Every generator on the way is closed here, on this loop: left to the garbage
            # collector, they would be finalised from whichever thread collects them.
            async with (
                aclosing(response.http_response.aiter_bytes()) as raw,
                aclosing(_gathered_reads(raw)) as reads,
                aclosing(_sse_lines(reads)) as lines,
            ):
                async for line in lines:
                    if not line.startswith("data:"):
                        continue  # blank separators, comments, "event:" lines
                    data = line[5:].strip()
                    if data == "[DONE]":
                        break
                    delta = _decode_chunk(data)
                    if delta.text:
                        chunks += 1
                    yield delta
        except BackendError:
            raise
        except Exception as err:  # any transport or decoding failure mid-stream
            raise BackendError(
                f"The stream from {self.config.host} broke after {chunks} chunks "
                f"({self._stream_failure(err)}); the partial reply is kept."
            ) from None
        finally:
            # Closing the response closes the HTTP stream, also when the caller stops early.
            await opened.__aexit__(None, None, None)

    def _stream_failure(self, err: Exception) -> str:
        import openai

        # The HTTP library's own errors reach us unwrapped here; match them by name so both
        # httpx (openai 1.x) and httpx2 (3.x) are understood without importing either.
        name = type(err).__name__
        if isinstance(err, openai.APITimeoutError) or "Timeout" in name:
            return f"no data for {self.config.timeout_s:g} s"
        if isinstance(err, openai.APIConnectionError) or name.endswith(
            ("ProtocolError", "ReadError", "NetworkError", "ConnectError")
        ):
            return "the connection was lost"
        if isinstance(err, UnicodeDecodeError):
            return "the server sent bytes that are not UTF-8"
        if isinstance(err, ValueError):
            return "the server sent a chunk that is not valid JSON"
        return _short(err)

    async def _explain(self, err: openai.APIError, model: str) -> BackendError:
        """Like :meth:`_translate`, listing the server's models when the model is unknown."""
        import openai

        if isinstance(err, openai.NotFoundError) and model and not self._web_page_error(err):
            try:
                async with asyncio.timeout(3):
                    models = await self._list_models()
            except (BackendError, TimeoutError):
                return self._translate(err, model)
            if model not in models:
                shown = ", ".join(models[:10]) + (" …" if len(models) > 10 else "")
                shown = shown or "none"
                return BackendError(
                    f"Model {model!r} was not found at {self.config.host} (404). "
                    f"Available: {shown}."
                )
        return self._translate(err, model)

    def _translate(self, err: openai.APIError, model: str) -> BackendError:
        import openai

        host = self.config.host
        web_page = self._web_page_error(err)
        if web_page is not None:
            return web_page
        if isinstance(err, openai.APITimeoutError):
            return BackendError(
                f"No answer from {host} after {self.config.timeout_s:g} s (timed out)."
            )
        if isinstance(err, openai.APIConnectionError):
            return BackendError(f"Cannot connect to {host}: {self.config.preset.hint}")
        status = getattr(err, "status_code", None)
        detail = _short(err)
        if isinstance(err, openai.AuthenticationError):
            whose = "" if self.config.preset is CUSTOM else f" for {self.config.preset.name}"
            return BackendError(f"{host} rejected the API key (401); check the API key{whose}.")
        if isinstance(err, openai.PermissionDeniedError):
            return BackendError(f"{host} refused access (403): {detail}")
        if isinstance(err, openai.NotFoundError):
            what = f"model {model!r}" if model else "the models list"
            return BackendError(
                f"Not found at {host} (404): {what}. Check the model name and that the base URL "
                "ends in /v1."
            )
        if isinstance(status, int) and status >= 500:
            return BackendError(f"Server error {status} from {host}: {detail} Try again later.")
        if isinstance(status, int):
            return BackendError(f"{host} refused the request ({status}): {detail}")
        return BackendError(f"Request to {host} failed: {detail}")


def _new_client(config: ServerConfig) -> openai.AsyncOpenAI:
    import openai

    client = openai.AsyncOpenAI(
        base_url=config.base_url,
        # Local servers accept any key, but the SDK insists on one.
        api_key=config.api_key or "not-needed",
        max_retries=0,
        timeout=config.timeout_s,
        http_client=openai.DefaultAsyncHttpxClient(verify=tls_context()),
    )
    # The SDK imports its resource modules on first attribute access (~0.1 s): do it here,
    # on the worker thread, not in the middle of the first request on the network loop.
    _ = client.chat.completions, client.models
    return client


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
                **_request([{"role": "user", "content": ""}], StreamParams(stop=("\n",)))
            )
        except openai.APIError:
            pass  # expected: nothing listens there
        finally:
            await client.close()

    # A plain loop of its own: under qasync's policy asyncio.run() would build a Qt one.
    # Not in debug mode even under -X dev: its steps are slow on purpose.
    with asyncio.Runner(debug=False, loop_factory=asyncio.SelectorEventLoop) as runner:
        runner.run(refused_request())


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One TLS context for every client: loading the certificates takes 30-150 ms and holds
    the GIL, so doing it per client froze the window each time four lanes started."""
    import importlib

    import openai

    # The SDK's own HTTP library (httpx, or httpx2 in openai 3.x) builds it, with its defaults.
    http = importlib.import_module(openai.DefaultAsyncHttpxClient.__mro__[1].__module__)
    return http.create_ssl_context()  # type: ignore[no-any-return]


def _request(messages: Sequence[Message], params: StreamParams) -> dict[str, Any]:
    request: dict[str, Any] = {
        "model": params.model,
        "messages": list(messages),
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": params.max_tokens,
    }
    if params.stop:
        request["stop"] = list(params.stop)[:4]  # OpenAI accepts at most four
    for name in ("temperature", "top_p", "seed"):
        value = getattr(params, name)
        if value is not None:
            request[name] = value
    return request


async def _gathered_reads(chunks: AsyncIterator[bytes]) -> AsyncGenerator[bytes, None]:
    """Pass chunks on, pausing briefly when a dense stream has to be waited for.

    A fast server sends one token per chunk, 2,000 a second. Woken for each, the HTTP stack
    costs ~120 µs a chunk (168 µs for one stream at 2,000 chunks/s, measured); after a
    :data:`GATHER_S` pause the chunks that arrived meanwhile are parsed from one read, ~50 µs
    each. Only chunks that came less than GATHER_S after the previous one, and were waited
    for, are followed by a pause: the first chunk and a slow model's chunks never are.
    """
    source = aiter(chunks)
    previous = float("-inf")
    while True:
        asked = time.perf_counter()
        try:
            chunk = await anext(source)
        except StopAsyncIteration:
            return
        arrived = time.perf_counter()
        dense_and_waited = arrived - asked > BUFFERED_READ_S and arrived - previous < GATHER_S
        previous = arrived
        yield chunk
        if dense_and_waited:
            await asyncio.sleep(GATHER_S)


async def _sse_lines(chunks: AsyncIterator[bytes]) -> AsyncGenerator[str, None]:
    """Split a byte stream into lines, decoding strictly: bad UTF-8 is an error, not "�"."""
    pending = b""
    async for chunk in chunks:
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            yield line.decode("utf-8").rstrip("\r")
    if pending:
        yield pending.decode("utf-8")


def _decode_chunk(data: str) -> Delta:
    """One SSE data payload → text and/or usage. Raises ValueError for anything else."""
    chunk = json.loads(data)
    if not isinstance(chunk, dict):
        raise ValueError("chunk is not a JSON object")
    error = chunk.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else str(error)
        raise BackendError(f"The server reported an error mid-stream: {_sentence(str(message))}")
    pieces = []
    for choice in chunk.get("choices") or ():
        delta = (choice.get("delta") or {}) if isinstance(choice, dict) else {}
        content = delta.get("content") if isinstance(delta, dict) else None
        if isinstance(content, str):
            pieces.append(content)
    text = "".join(pieces)
    usage = chunk.get("usage")
    if isinstance(usage, dict):
        return Delta(
            text,
            Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)),
        )
    return Delta(text)


def _media_type(headers: Any) -> str:
    """The media type of a response's Content-Type, lower case, without parameters; "" if none."""
    value = headers.get("content-type") or ""
    return str(value).split(";", 1)[0].strip().lower()


def _retry_after(err: Any, default: float) -> float:
    headers = getattr(getattr(err, "response", None), "headers", None) or {}
    try:
        value = float(headers.get("retry-after", default))
    except (TypeError, ValueError):
        value = default
    return min(max(value, 0.0), MAX_RETRY_WAIT_S)


def _short(err: BaseException) -> str:
    """The first line of an error's message, without the SDK's JSON dump, at most 160 chars."""
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else None
        if isinstance(message, str) and message:
            return _sentence(message)
    return _sentence(str(err) or type(err).__name__)


def _sentence(text: str) -> str:
    """First line, at most 160 characters, ending in exactly one full stop."""
    lines = text.strip().splitlines()
    first = (lines[0] if lines else "")[:160].rstrip(". ")
    return first + "."
