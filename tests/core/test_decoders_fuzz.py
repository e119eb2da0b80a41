"""Every stream decoder fed a recorded stream of its kind, damaged (tests/hostile_input.py):
cut short, events dropped or repeated, values of the wrong type at every field, nesting
10,000 deep, 10 MB strings, lone surrogates, escapes, bytes that are not UTF-8.

Each decoder gives deltas or raises its module's own error (which its backend turns into one
line); never a KeyError, AttributeError, RecursionError or OverflowError from inside it. What
it gives can be written anywhere (no lone surrogate in any text, the carry JSON), and every
token count it reports is a count a server could mean (0 to a billion).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from hypothesis import example, given
from hypothesis import strategies as st

from sandbox_app.backends.gemini_api.gemini_stream import Decoder, GeminiError
from sandbox_app.backends.messages_api.anthropic_messages import (
    NotAStream,
    StreamDecoder,
    StreamFailed,
)
from sandbox_app.backends.responses_api.responses_stream import ResponseEvents
from sandbox_app.backends.transport.passback import Gathered
from sandbox_app.backends.transport.sse import decode_chunk, sse_lines
from sandbox_app.core.running.backend import BackendError, Delta
from tests.hostile_input import (
    check_deltas,
    hostile_bytes,
    hostile_payloads,
    sse_payloads,
    stream_sample,
)


def _chat(payloads: list[str]) -> list[Delta]:
    gathered = Gathered()
    out = [decode_chunk(data, gathered) for data in payloads]
    carry = gathered.carry()
    return out + ([Delta(carry=carry)] if carry is not None else [])


def _anthropic(payloads: list[str]) -> list[Delta]:
    decoder = StreamDecoder()
    out = [delta for data in payloads for delta in decoder.feed(data)]
    return out + decoder.finish()


def _gemini(payloads: list[str]) -> list[Delta]:
    decoder = Decoder()
    out = [delta for data in payloads for delta in decoder.feed(data)]
    return out + decoder.end()


def _responses(payloads: list[str]) -> list[Delta]:
    events = ResponseEvents()
    out: list[Delta] = []
    for data in payloads:
        out += events.feed(data)
        if events.ended:
            break
    return out


@dataclass(frozen=True)
class Kind:
    name: str
    sample: str  # tests/data's recorded stream
    decode: Callable[[list[str]], list[Delta]]
    errors: tuple[type[Exception], ...]  # the module's own, which its backend says in a line


# ValueError: a payload that is not a JSON object (the one reader's ReadError is one).
KINDS = [
    Kind("chat completions", "chat_completions.sse", _chat, (ValueError, BackendError)),
    Kind(
        "anthropic",
        "anthropic.sse",
        _anthropic,
        (ValueError, BackendError, NotAStream, StreamFailed),
    ),
    Kind("gemini", "gemini.sse", _gemini, (ValueError, BackendError, GeminiError)),
    Kind("responses", "responses.sse", _responses, (ValueError, BackendError)),
]
SAMPLES = {kind.name: sse_payloads(stream_sample(kind.sample)) for kind in KINDS}
KIND = {kind.name: kind for kind in KINDS}


def test_every_sample_decodes_as_it_was_recorded() -> None:
    """The samples are valid streams: undamaged, each decodes to text or a call."""
    for kind in KINDS:
        deltas = kind.decode(SAMPLES[kind.name])
        check_deltas(deltas)
        assert any(d.text or d.tool_calls for d in deltas), kind.name


def _decodes_or_says_why(kind: str, payloads: list[str]) -> None:
    chosen = KIND[kind]
    try:
        deltas = chosen.decode(payloads)
    except chosen.errors as err:
        str(err).encode("utf-8")
        return
    check_deltas(deltas)


@given(payloads=hostile_payloads(SAMPLES["chat completions"]))
@example(payloads=['{"choices": 123456789012345678901234}']).via("choices a number: TypeError")
def test_a_damaged_chat_completions_stream(payloads: list[str]) -> None:
    _decodes_or_says_why("chat completions", payloads)


@given(payloads=hostile_payloads(SAMPLES["anthropic"]))
@example(payloads=["[1, 2]"]).via("an event that is a list: AttributeError")
@example(payloads=['{"type": "message_start", "message": "hi"}']).via("message text: no .get")
@example(payloads=['{"type": "message_delta"}']).via("message_delta without delta: KeyError")
@example(payloads=['{"type": "error", "error": "overloaded"}']).via("error text: AttributeError")
@example(
    payloads=[
        '{"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}',
        '{"type": "content_block_delta", "index": 0, "delta": {"type": []}}',
    ]
).via("a delta's type a list: TypeError (unhashable)")
@example(
    payloads=[
        '{"type": "message_start", "message": {"usage": {"input_tokens": '
        '123456789012345678901234, "output_tokens": -5}}}',
        '{"type": "message_stop"}',
    ]
).via("24-digit and negative token counts kept as sent")
def test_a_damaged_anthropic_stream(payloads: list[str]) -> None:
    _decodes_or_says_why("anthropic", payloads)


@given(payloads=hostile_payloads(SAMPLES["gemini"]))
def test_a_damaged_gemini_stream(payloads: list[str]) -> None:
    _decodes_or_says_why("gemini", payloads)


@given(payloads=hostile_payloads(SAMPLES["responses"]))
@example(payloads=['{"type": [], "item": {}}']).via("an event type that is a list: unhashable")
def test_a_damaged_responses_stream(payloads: list[str]) -> None:
    _decodes_or_says_why("responses", payloads)


async def _lines(raw: bytes, cut: int) -> list[str]:
    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(raw), cut):
            yield raw[start : start + cut]

    return [line async for line in sse_lines(chunks())]


@given(
    raw=st.sampled_from([k.sample for k in KINDS]).flatmap(
        lambda name: hostile_bytes(stream_sample(name).encode("utf-8"))
    ),
    cut=st.integers(1, 64),
)
@example(raw=b'data: {"a": "\xed\xa0\x80"}\n\n', cut=3).via("a lone surrogate as raw bytes")
def test_stream_bytes_become_lines_of_text_whatever_they_hold(raw: bytes, cut: int) -> None:
    lines = asyncio.run(_lines(raw, cut))
    for line in lines:
        line.encode("utf-8")
    # However the reads cut it (mid-character too), each line is its bytes read whole.
    *whole, last = raw.split(b"\n")
    expected = [line.decode("utf-8", "replace").rstrip("\r") for line in whole]
    assert lines == expected + ([last.decode("utf-8", "replace")] if last else [])
