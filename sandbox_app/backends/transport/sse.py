"""Reading a chat completion stream: bytes → lines → ``data:`` payloads → :class:`Delta`.

The SDK's own stream builds a pydantic object per chunk, about 70% of the CPU a chunk costs,
which caps one process at ~3,000 chunks/s and freezes the window when four fast lanes stream
at once; these plain functions do the same work in a fraction of that. Only ``content``, the
reasoning fields, ``tool_calls``, ``finish_reason`` and ``usage`` are read: every other field
a server adds (timings, logprobs, …) is ignored, so such chunks decode to what they carry.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from sandbox_app.backends.transport import errors
from sandbox_app.backends.transport.errors import sentence
from sandbox_app.backends.transport.passback import Gathered
from sandbox_app.core.running.backend import BackendError, Delta, ToolCallPiece, Usage
from sandbox_app.core.untrusted.file_reader import parse_json_text
from sandbox_app.lazy_import import lazy_import

if TYPE_CHECKING:
    import asyncio
else:
    asyncio = lazy_import("asyncio")


# Reading a stream: a chunk that was already buffered comes back in well under this; one that
# took longer was waited for, so pause GATHER_S to let the next ones gather (gathered_reads).
BUFFERED_READ_S = 0.0002
GATHER_S = 0.005
DONE = "[DONE]"  # the payload that ends an OpenAI-style stream
REASONING_FIELDS = ("reasoning_content", "reasoning")


async def gathered_reads(chunks: AsyncIterator[bytes]) -> AsyncGenerator[bytes, None]:
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


async def sse_lines(chunks: AsyncIterator[bytes]) -> AsyncGenerator[str, None]:
    """Split a byte stream into lines; bytes that are not UTF-8 become "�" (text from outside
    is text: core/untrusted/outside_text.py), as a lone surrogate in a payload's JSON does.

    Lines are split as bytes and decoded whole, so a character cut between two network
    reads is still read right. A line ends in LF or CRLF.
    """
    pending = b""
    async for chunk in chunks:
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            yield line.decode("utf-8", "replace").rstrip("\r")
    if pending:
        yield pending.decode("utf-8", "replace")


def sse_data(line: str) -> str | None:
    """The payload of a ``data:`` line, stripped; None for blank separators, ``:`` comments
    (OpenRouter's ": OPENROUTER PROCESSING") and ``event:``/``id:`` lines."""
    if not line.startswith("data:"):
        return None
    return line[5:].strip()


async def sse_payloads(response: Any, host: str) -> AsyncGenerator[str, None]:
    """An SSE response's data payloads (an httpx response), up to an OpenAI-style [DONE].

    A web UI's address answers 200 with its page: without the content type's check its
    lines, none starting with "data:", would read as an empty reply, step after step. Every
    generator on the way is closed here, on this loop: left to the garbage collector, they
    would be finalised from whichever thread collects them.
    """
    media_type = errors.media_type(response.headers)
    if media_type and media_type != "text/event-stream" and not media_type.endswith("json"):
        raise errors.not_an_api(host, media_type)
    async with (
        aclosing(response.aiter_bytes()) as raw,
        aclosing(gathered_reads(raw)) as reads,
        aclosing(sse_lines(reads)) as lines,
    ):
        async for line in lines:
            data = sse_data(line)
            if data is None:
                continue
            if data == DONE:  # some compatible servers end a Responses stream so too
                return
            yield data


def decode_chunk(data: str, gathered: Gathered | None = None) -> Delta:
    """One SSE data payload → text and/or usage; ``gathered`` (native tool calling only) also
    keeps what the reply may have to send back (passback.py).

    Raises BackendError when the server reports an error in the stream, ValueError for a
    payload that is not a JSON object (or nests deeper than the file reader's limit).
    """
    chunk = parse_json_text(data, "a chunk")
    if not isinstance(chunk, dict):
        raise ValueError("chunk is not a JSON object")
    error = chunk.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else str(error)
        raise BackendError(f"The server reported an error mid-stream: {sentence(str(message))}")
    pieces, thinking = [], []
    calls: list[ToolCallPiece] = []
    finish_reason = None
    choices = chunk.get("choices")
    for choice in choices if isinstance(choices, list) else ():
        if not isinstance(choice, dict):
            continue
        delta = choice.get("delta") or {}
        if isinstance(delta, dict):
            content = delta.get("content")  # None while a server streams reasoning
            if isinstance(content, str):
                pieces.append(content)
            # The first field that holds text: reasoning_content (llama.cpp, vLLM < 0.11,
            # LM Studio, DeepSeek), then reasoning (vLLM >= 0.11, Ollama, OpenRouter, whose
            # reasoning_details repeat the same text). null, "" and missing are alike.
            found = ""
            for name in REASONING_FIELDS:
                reasoning = delta.get(name)
                if isinstance(reasoning, str) and reasoning:
                    thinking.append(reasoning)
                    found = reasoning
                    break
            calls += _tool_calls(delta.get("tool_calls"))
            if gathered is not None:
                gathered.add(delta, found)
        reason = choice.get("finish_reason")
        if isinstance(reason, str):
            finish_reason = reason
    usage = chunk.get("usage")  # null on every chunk but the last at some servers
    return Delta(
        "".join(pieces),
        _usage(usage) if isinstance(usage, dict) else None,
        reasoning="".join(thinking),
        finish_reason=finish_reason,
        tool_calls=tuple(calls),
    )


def _tool_calls(entries: Any) -> list[ToolCallPiece]:
    """``delta.tool_calls`` as pieces. Only ``index`` is required (the spec's
    ChatCompletionMessageToolCallChunk); vLLM sends no ``arguments`` key with the name, some
    builds an empty-string ``id`` on later pieces, Ollama the whole call in one piece (the
    captures, with their sources, are in tests/core/test_sse.py). A piece without an index
    (older Ollama builds) takes its place in the list."""
    pieces: list[ToolCallPiece] = []
    for position, entry in enumerate(entries if isinstance(entries, list) else ()):
        if not isinstance(entry, dict):
            continue
        function = entry.get("function")
        function = function if isinstance(function, dict) else {}
        index = entry.get("index")
        pieces.append(
            ToolCallPiece(
                index if isinstance(index, int) and not isinstance(index, bool) else position,
                _text(entry.get("id")),
                _text(function.get("name")),
                _text(function.get("arguments")),
            )
        )
    return pieces


def _text(value: Any) -> str:
    """A string field; null and missing are "", an object (a server that sent arguments
    already parsed) its JSON."""
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value)


# No request is a billion tokens: a count beyond this (or below 0) is the server's mistake.
MAX_TOKENS_REPORTED = 10**9


def _usage(usage: dict[str, Any]) -> Usage:
    details = usage.get("completion_tokens_details")
    reasoning = details.get("reasoning_tokens") if isinstance(details, dict) else None
    prompt, doubtful_in = _count(usage.get("prompt_tokens"))
    completion, doubtful_out = _count(usage.get("completion_tokens"))
    thought, doubtful_thought = _count(reasoning)
    # The prompt tokens the server read from its cache: OpenAI's and most servers'
    # prompt_tokens_details.cached_tokens, else DeepSeek's own prompt_cache_hit_tokens.
    prompt_details = usage.get("prompt_tokens_details")
    cached_value = prompt_details.get("cached_tokens") if isinstance(prompt_details, dict) else None
    if cached_value is None:
        cached_value = usage.get("prompt_cache_hit_tokens")
    cached, doubtful_cached = _count(cached_value)
    return Usage(
        prompt,
        completion,
        # 0 from a model that cannot think says nothing: treated as not reported.
        thought if thought > 0 else None,
        doubtful=doubtful_in or doubtful_out or doubtful_thought or doubtful_cached,
        cache_read_tokens=None if cached_value is None else cached,
    )


def _count(value: Any) -> tuple[int, bool]:
    """A token count as sent: a whole number from 0 to MAX_TOKENS_REPORTED, and whether it had
    to be made so (a negative, huge, fractional, infinite or non-numeric value). Missing and
    null are 0, as servers send them on chunks without usage."""
    if value is None:
        return 0, False
    if isinstance(value, int) and not isinstance(value, bool):
        if 0 <= value <= MAX_TOKENS_REPORTED:
            return value, False
        return min(max(value, 0), MAX_TOKENS_REPORTED), True
    if isinstance(value, float) and math.isfinite(value):
        return int(min(max(value, 0.0), MAX_TOKENS_REPORTED)), True
    return 0, True
