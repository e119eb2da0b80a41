"""The fake OpenAI server, exercised through the real ``openai`` SDK.

Several tests pin down which exception the SDK raises for each kind of broken
stream; the app's error translation relies on exactly these.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import time
import tracemalloc
from typing import Any

import aiohttp
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai import AsyncOpenAI, AsyncStream
from openai.types.chat import ChatCompletion, ChatCompletionChunk, ChatCompletionMessageParam

from tests.model_server import (
    OPENAI_REASONING_REJECTS,
    ModelScript,
    ModelServer,
    UnsupportedParam,
    fake_server,
    split_every,
    tokenize,
)

__all__ = ["fake_server"]  # the fixture, imported so pytest finds it here

REACT_REPLY = "Thought: I should add.\nAction: calculator[1+1]"
QUESTION = "What is 1+1?"
USER: list[ChatCompletionMessageParam] = [{"role": "user", "content": QUESTION}]


def make_client(server: ModelServer, **kwargs: Any) -> AsyncOpenAI:
    return AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0, **kwargs)


async def collect(
    server: ModelServer,
    model: str,
    messages: list[ChatCompletionMessageParam] | None = None,
    **kwargs: Any,
) -> tuple[str, list[ChatCompletionChunk]]:
    """Stream one completion; return the joined content and every chunk."""
    async with make_client(server) as client:
        stream: AsyncStream[ChatCompletionChunk] = await client.chat.completions.create(
            model=model,
            messages=messages or USER,
            stream=True,
            stream_options={"include_usage": True},
            **kwargs,
        )
        chunks = [chunk async for chunk in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    return text, chunks


async def consume(server: ModelServer, model: str, got: list[str], **client_kw: Any) -> None:
    """Stream into ``got`` until the stream ends or raises."""
    async with make_client(server, **client_kw) as client:
        stream = await client.chat.completions.create(
            model=model,
            messages=USER,
            stream=True,
        )
        async with stream:
            async for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    got.append(chunk.choices[0].delta.content)


def finish_reason(chunks: list[ChatCompletionChunk]) -> str | None:
    reasons = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert all(r is None for r in reasons[:-1])
    return reasons[-1]


# ---- tokenizer -------------------------------------------------------------------


def test_tokenize_splits_words_and_react_punctuation() -> None:
    assert tokenize(REACT_REPLY) == [
        "Thought", ":", " I", " should", " add.", "\nAction", ":", " calculator",
        "[", "1+1", "]",
    ]  # fmt: skip
    assert tokenize("") == []
    assert tokenize("a  \n") == ["a", "  \n"]


@settings(database=None, max_examples=200, deadline=None)
@given(st.text())
def test_tokenize_rebuilds_any_text(text: str) -> None:
    tokens = tokenize(text)
    assert "".join(tokens) == text
    assert all(tokens)
    assert tokenize(text) == tokens


# ---- streaming -------------------------------------------------------------------


def test_stream_rebuilds_reply_with_usage_last(fake_server: ModelServer) -> None:
    fake_server.set_model("m1", ModelScript(replies=[REACT_REPLY]))
    text, chunks = asyncio.run(collect(fake_server, "m1"))

    assert text == REACT_REPLY
    assert chunks[0].choices[0].delta.role == "assistant"
    assert finish_reason(chunks) == "stop"
    usage_chunk = chunks[-1]
    assert usage_chunk.choices == []
    assert usage_chunk.usage is not None
    completion_tokens = len(tokenize(REACT_REPLY))
    prompt_tokens = len(QUESTION) // 4 + 1
    assert usage_chunk.usage.completion_tokens == completion_tokens
    assert usage_chunk.usage.prompt_tokens == prompt_tokens
    assert usage_chunk.usage.total_tokens == prompt_tokens + completion_tokens
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) == (
        completion_tokens
    )
    assert all(c.model == "m1" and c.id == chunks[0].id for c in chunks)

    (body,) = fake_server.requests
    assert body["model"] == "m1"
    assert body["stream"] is True
    assert body["messages"] == USER
    assert fake_server.wait_for_stat("finished", 1)
    assert fake_server.stats["completions"] == 1
    assert fake_server.stats["aborted"] == 0


def test_reply_follows_number_of_assistant_turns(fake_server: ModelServer) -> None:
    fake_server.set_model("m1", ModelScript(replies=[REACT_REPLY, "Final Answer: 2"]))
    fake_server.set_model("loop", ModelScript(replies=["a", "b"], cycle=True))
    second_turn: list[ChatCompletionMessageParam] = [
        *USER,
        {"role": "assistant", "content": REACT_REPLY},
        {"role": "user", "content": "Observation: 2"},
    ]
    third_turn: list[ChatCompletionMessageParam] = [
        *second_turn,
        {"role": "assistant", "content": "x"},
    ]

    async def scenario() -> None:
        assert (await collect(fake_server, "m1"))[0] == REACT_REPLY
        assert (await collect(fake_server, "m1", second_turn))[0] == "Final Answer: 2"
        assert (await collect(fake_server, "loop", third_turn))[0] == "a"
        with pytest.raises(openai.BadRequestError, match="exhausted") as info:
            await collect(fake_server, "m1", third_turn)
        assert info.value.status_code == 400

    asyncio.run(scenario())
    assert len(fake_server.requests) == 4


def test_stop_strings_are_honoured(fake_server: ModelServer) -> None:
    reply = "Thought: add\nAction: calculator[1+1]\nObservation: 2\nFinal Answer: 2"
    fake_server.set_model("m1", ModelScript(replies=[reply], cycle=True))
    fake_server.set_model("raw", ModelScript(replies=[reply], honor_stop=False))

    async def scenario() -> None:
        text, chunks = await collect(fake_server, "m1", stop=["Final", "\nObservation:"])
        assert text == "Thought: add\nAction: calculator[1+1]"
        assert finish_reason(chunks) == "stop"
        assert chunks[-1].usage is not None
        assert chunks[-1].usage.completion_tokens == len(tokenize(text))
        assert (await collect(fake_server, "m1", stop="Action"))[0] == "Thought: add\n"
        assert (await collect(fake_server, "raw", stop="Action"))[0] == reply

    asyncio.run(scenario())


def test_max_tokens_cuts_with_length(fake_server: ModelServer) -> None:
    fake_server.set_model("m1", ModelScript(replies=[REACT_REPLY], cycle=True))
    first_three = "".join(tokenize(REACT_REPLY)[:3])

    async def scenario() -> None:
        limits: list[dict[str, Any]] = [{"max_tokens": 3}, {"max_completion_tokens": 3}]
        for limit in limits:
            text, chunks = await collect(fake_server, "m1", **limit)
            assert text == first_three
            assert finish_reason(chunks) == "length"
            assert chunks[-1].usage is not None
            assert chunks[-1].usage.completion_tokens == 3
        text, chunks = await collect(fake_server, "m1", max_tokens=1000)
        assert (text, finish_reason(chunks)) == (REACT_REPLY, "stop")

    asyncio.run(scenario())


def test_non_streaming_completion(fake_server: ModelServer) -> None:
    fake_server.set_model("m1", ModelScript(replies=[REACT_REPLY], cycle=True))

    async def scenario() -> None:
        async with make_client(fake_server) as client:
            done = await client.chat.completions.create(model="m1", messages=USER)
            assert done.choices[0].message.content == REACT_REPLY
            assert done.choices[0].message.role == "assistant"
            assert done.choices[0].finish_reason == "stop"
            assert done.usage is not None
            assert done.usage.completion_tokens == len(tokenize(REACT_REPLY))
            cut = await client.chat.completions.create(
                model="m1",
                messages=USER,
                stop=["["],
                max_tokens=50,
            )
            assert cut.choices[0].message.content == "Thought: I should add.\nAction: calculator"

    asyncio.run(scenario())
    assert fake_server.stats["finished"] == 2


async def timed_stream(server: ModelServer, model: str) -> tuple[float, float]:
    """Stream ``model``'s reply; seconds to the first content chunk and to the end."""
    started = time.perf_counter()
    first: float | None = None
    async with make_client(server) as client:
        stream = await client.chat.completions.create(model=model, messages=USER, stream=True)
        async for chunk in stream:
            if first is None and chunk.choices and chunk.choices[0].delta.content:
                first = time.perf_counter() - started
    assert first is not None, "no content chunk arrived"
    return first, time.perf_counter() - started


def test_rate_and_first_token_delay(fake_server: ModelServer) -> None:
    reply = " ".join(["tok"] * 100)
    fake_server.set_model("paced", ModelScript(replies=[reply], rate=1000.0, delay_first=0.2))
    fake_server.set_model("unpaced", ModelScript(replies=[reply]))

    async def scenario() -> tuple[tuple[float, float], tuple[float, float]]:
        return await timed_stream(fake_server, "paced"), await timed_stream(fake_server, "unpaced")

    (first, total), (_, baseline) = asyncio.run(scenario())
    # The server never sends early: the first token after 0.2 s, the 100th (at 1000/s) due
    # 99 ms after the first was. A loaded machine can only make these later.
    assert first >= 0.2
    assert total >= 0.2 + 0.099
    # It does not wait much longer than asked either: the delay once, not per chunk (that
    # would be 20 s), and pacing that does not add up its sleeps' overshoot. The same stream
    # unpaced, in this run, is the baseline for everything else the request costs.
    asked = 0.2 + 0.099
    assert total - baseline < 3 * asked, f"{total:.2f} s paced, {baseline:.2f} s unpaced"


@pytest.mark.latency
def test_rate_and_first_token_delay_are_on_time(fake_server: ModelServer) -> None:
    reply = " ".join(["tok"] * 100)
    fake_server.set_model("paced", ModelScript(replies=[reply], rate=1000.0, delay_first=0.2))
    first, total = asyncio.run(timed_stream(fake_server, "paced"))
    assert first < 1.0, f"first token after {first:.2f} s (asked 0.2)"
    assert total < 1.5, f"stream took {total:.2f} s (asked 0.3)"


# ---- models and HTTP errors ------------------------------------------------------


def test_list_models(fake_server: ModelServer) -> None:
    fake_server.set_model("alpha", ModelScript(replies=["a"]))
    fake_server.set_model("beta", ModelScript(replies=["b"]))

    async def scenario() -> list[str]:
        async with make_client(fake_server) as client:
            return [m.id async for m in client.models.list()]

    assert asyncio.run(scenario()) == ["alpha", "beta"]


def test_unknown_model_is_404(fake_server: ModelServer) -> None:
    with pytest.raises(openai.NotFoundError, match="The model `nope` does not exist") as info:
        asyncio.run(collect(fake_server, "nope"))
    assert info.value.status_code == 404
    assert info.value.code == "model_not_found"
    assert fake_server.requests[0]["model"] == "nope"


@pytest.mark.parametrize(
    ("status", "error_type"),
    [
        (401, openai.AuthenticationError),
        (500, openai.InternalServerError),
        (503, openai.InternalServerError),
    ],
)
def test_scripted_http_failure(
    fake_server: ModelServer, status: int, error_type: type[openai.APIStatusError]
) -> None:
    fake_server.set_model("m1", ModelScript(replies=["x"], fail_status=status, fail_message="no"))
    for _ in range(2):  # fail_times=None: every request fails
        with pytest.raises(error_type, match="no") as info:
            asyncio.run(collect(fake_server, "m1"))
        assert info.value.status_code == status
    assert fake_server.stats["errors"] == 2


def test_rate_limit_with_retry_after_then_success(fake_server: ModelServer) -> None:
    fake_server.set_model(
        "m1", ModelScript(replies=["Final Answer: 2"], fail_status=429, fail_times=1, retry_after=2)
    )
    with pytest.raises(openai.RateLimitError) as info:
        asyncio.run(collect(fake_server, "m1"))
    assert info.value.status_code == 429
    assert info.value.response.headers["retry-after"] == "2"
    assert info.value.code == "rate_limit_exceeded"
    assert asyncio.run(collect(fake_server, "m1"))[0] == "Final Answer: 2"
    assert len(fake_server.requests) == 2


def test_connection_refused() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago, now closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]

    async def scenario() -> None:
        async with AsyncOpenAI(
            base_url=f"http://127.0.0.1:{port}/v1", api_key="test", max_retries=0
        ) as client:
            await client.models.list()

    with pytest.raises(openai.APIConnectionError, match="Connection error") as info:
        asyncio.run(scenario())
    assert not isinstance(info.value, openai.APITimeoutError)


# ---- broken streams: what the SDK raises -----------------------------------------


def test_cut_connection_raises_api_connection_error(fake_server: ModelServer) -> None:
    fake_server.set_model("m1", ModelScript(replies=[REACT_REPLY], cut_after=3))
    got: list[str] = []
    with pytest.raises(openai.APIConnectionError) as info:
        asyncio.run(consume(fake_server, "m1", got))
    assert "".join(got) == "".join(tokenize(REACT_REPLY)[:3])
    assert type(info.value) is openai.APIConnectionError
    assert "incomplete chunked read" in str(info.value.__cause__)
    assert fake_server.stats["cut"] == 1


def test_malformed_chunk_raises_json_decode_error(fake_server: ModelServer) -> None:
    fake_server.set_model("m1", ModelScript(replies=[REACT_REPLY], malformed_after=2))
    got: list[str] = []
    # The SDK does not wrap this one: a bare json.JSONDecodeError (a ValueError).
    with pytest.raises(json.JSONDecodeError):
        asyncio.run(consume(fake_server, "m1", got))
    assert "".join(got) == "".join(tokenize(REACT_REPLY)[:2])


def test_invalid_utf8_raises_unicode_decode_error(fake_server: ModelServer) -> None:
    fake_server.set_model("m1", ModelScript(replies=[REACT_REPLY], bad_bytes_after=2))
    got: list[str] = []
    # Not wrapped either: a bare UnicodeDecodeError (a ValueError) from the SSE decoder.
    with pytest.raises(UnicodeDecodeError):
        asyncio.run(consume(fake_server, "m1", got))
    assert "".join(got) == "".join(tokenize(REACT_REPLY)[:2])


def test_stalled_stream_times_out_and_counts_as_aborted(fake_server: ModelServer) -> None:
    fake_server.set_model("m1", ModelScript(replies=[REACT_REPLY], stall_after=2))
    got: list[str] = []

    async def with_deadline() -> None:
        # The client's 0.5 s read timeout must end the stall; 20 times that is a hang.
        try:
            await asyncio.wait_for(consume(fake_server, "m1", got, timeout=0.5), 10)
        except TimeoutError:
            raise AssertionError(f"the stall outlived the 0.5 s timeout; got {got}") from None

    started = time.perf_counter()
    with pytest.raises(openai.APITimeoutError):
        asyncio.run(with_deadline())
    assert time.perf_counter() - started >= 0.5  # not before the timeout (later is load)
    assert len(got) == 2
    assert fake_server.wait_for_stat("aborted", 1)
    assert fake_server.stats["finished"] == 0


@pytest.mark.parametrize("how", ["close", "async with"])
def test_client_closing_early_is_seen_as_aborted(fake_server: ModelServer, how: str) -> None:
    reply = " ".join(["word"] * 400)
    fake_server.set_model("slow", ModelScript(replies=[reply], rate=400.0))

    async def scenario() -> int:
        received = 0
        async with make_client(fake_server) as client:
            stream = await client.chat.completions.create(
                model="slow",
                messages=USER,
                stream=True,
            )
            if how == "close":
                async for _chunk in stream:
                    received += 1
                    if received == 3:
                        break
                await stream.close()
            else:
                async with stream:
                    async for _chunk in stream:
                        received += 1
                        if received == 3:
                            break
        return received

    assert asyncio.run(scenario()) == 3
    # The server notices the hang-up a moment later: wait for it, with a deadline.
    assert fake_server.wait_for_stat("aborted", 1)
    assert fake_server.stats["aborted"] == 1
    assert fake_server.stats["finished"] == 0


def test_stop_while_a_stream_is_stalled() -> None:
    server = ModelServer().start()
    server.set_model("m1", ModelScript(replies=[REACT_REPLY], stall_after=1))

    async def scenario() -> openai.APIConnectionError:
        # A 30 s read timeout: the stream can only end early if the server hangs up on it.
        async with make_client(server, timeout=30.0) as client:
            stream = await client.chat.completions.create(
                model="m1",
                messages=USER,
                stream=True,
            )
            async with stream:
                iterator = stream.__aiter__()
                await iterator.__anext__()
                await asyncio.to_thread(server.stop)
                try:
                    await asyncio.wait_for(iterator.__anext__(), 10)
                except openai.APIConnectionError as err:
                    return err
                except TimeoutError:
                    raise AssertionError("stop() left the stalled stream open for 10 s") from None
                raise AssertionError("the stalled stream sent another chunk after stop()")

    error = asyncio.run(scenario())
    # The server hung up: a lost connection, not the client giving up on a silent one.
    assert not isinstance(error, openai.APITimeoutError), error
    server.stop()  # idempotent


# ---- thinking models -------------------------------------------------------------

THINKING_REPLY = "<think>Let me add.</think>The sum is 2"
THINKING = ["Let", " me", " add."]  # tokenize() of the thinking, tags stripped
ANSWER = ["The", " sum", " is", " 2"]  # tokenize() of the answer


async def post_chat(server: ModelServer, body: dict[str, Any]) -> tuple[int, Any]:
    """POST a raw chat body, no SDK: the status and the JSON answer, or for a stream the
    list of every ``data:`` event's JSON (``[DONE]`` checked and left out)."""
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{server.base_url}/chat/completions", json=body) as response,
    ):
        text = await response.text()
        if not body.get("stream") or response.status != 200:
            return response.status, json.loads(text)
    events = [line.removeprefix("data: ") for line in text.split("\n\n") if line]
    assert events[-1] == "[DONE]"
    return response.status, [json.loads(event) for event in events[:-1]]


def raw_stream(server: ModelServer, model: str, **params: Any) -> list[dict[str, Any]]:
    body = {
        "model": model,
        "messages": USER,
        "stream": True,
        "stream_options": {"include_usage": True},
        **params,
    }
    status, events = asyncio.run(post_chat(server, body))
    assert status == 200
    assert isinstance(events, list)
    return events


def deltas(events: list[dict[str, Any]]) -> list[list[tuple[str, Any]]]:
    """Each chunk's delta as its (key, value) pairs, in the order sent."""
    return [list(e["choices"][0]["delta"].items()) for e in events if e["choices"]]


def split_reply(chunks: list[ChatCompletionChunk], field: str) -> tuple[str, str, int, int]:
    """Reasoning text, content text and how many chunks carried each, read the way a
    client reads it: a missing key, null and "" alike."""
    reasoning, content = [], []
    for chunk in chunks:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        if text := (delta.model_extra or {}).get(field):
            reasoning.append(text)
        if delta.content:
            content.append(delta.content)
    return "".join(reasoning), "".join(content), len(reasoning), len(content)


def test_split_every_cuts_fixed_width_pieces() -> None:
    assert split_every(4)("<think>hi</think>") == ["<thi", "nk>h", "i</t", "hink", ">"]
    assert split_every(1)("ab") == ["a", "b"]
    assert split_every(3)("") == []
    with pytest.raises(ValueError, match="n >= 1"):
        split_every(0)


@settings(database=None, max_examples=50, deadline=None)
@given(st.text(), st.integers(1, 12))
def test_split_every_rebuilds_any_text(text: str, n: int) -> None:
    pieces = split_every(n)(text)
    assert "".join(pieces) == text
    assert all(1 <= len(p) <= n for p in pieces)


def test_raw_thinking_streams_the_tags_in_content(fake_server: ModelServer) -> None:
    # reasoning_format none: the tags reach the client as text, cut where the tokenizer cuts.
    fake_server.set_model("raw", ModelScript(replies=[THINKING_REPLY], tokenizer=split_every(4)))
    text, chunks = asyncio.run(collect(fake_server, "raw"))

    assert text == THINKING_REPLY
    pieces = [
        c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content
    ]
    assert pieces[:3] == ["<thi", "nk>L", "et m"]
    assert all(not (c.choices[0].delta.model_extra or {}) for c in chunks if c.choices)
    usage = chunks[-1].usage
    assert usage is not None
    assert usage.completion_tokens == len(pieces)
    # The pieces that hold any of "<think>Let me add.</think>" (26 characters) are thinking.
    assert usage.completion_tokens_details is not None
    assert usage.completion_tokens_details.reasoning_tokens == 7


def test_a_reply_without_thinking_has_no_usage_details(fake_server: ModelServer) -> None:
    fields: list[tuple[str, Any]] = [("plain", None), ("parsed", "reasoning_content")]
    for name, field in fields:
        fake_server.set_model(name, ModelScript(replies=[REACT_REPLY], reasoning_field=field))
        text, chunks = asyncio.run(collect(fake_server, name))
        assert text == REACT_REPLY
        assert chunks[-1].usage is not None
        assert chunks[-1].usage.completion_tokens == len(tokenize(REACT_REPLY))
        assert chunks[-1].usage.completion_tokens_details is None


# (field, chunk_style, reasoning delta, content delta, finish delta), as captured from DeepSeek's
# API (deepseek-reasoner), llama.cpp b9554, vLLM 0.17.0 and OpenRouter (z-ai/glm-4.5 via
# DeepInfra); tests/core/test_sse.py quotes the first three and names their sources.
CHUNK_SHAPES: list[tuple[str, str | None, Any, Any, list[tuple[str, Any]]]] = [
    (
        "reasoning_content",
        None,  # "deepseek"
        lambda t: [("content", None), ("reasoning_content", t)],
        lambda t: [("content", t), ("reasoning_content", None)],
        [("content", ""), ("reasoning_content", None)],
    ),
    (
        "reasoning_content",
        "sparse",  # llama.cpp
        lambda t: [("reasoning_content", t)],
        lambda t: [("content", t)],
        [],
    ),
    ("reasoning", None, lambda t: [("reasoning", t)], lambda t: [("content", t)], []),  # vLLM
    (
        "reasoning",
        "openrouter",
        lambda t: [
            ("role", "assistant"),
            ("content", ""),
            ("reasoning", t),
            (
                "reasoning_details",
                [{"type": "reasoning.text", "text": t, "format": "unknown", "index": 0}],
            ),
        ],
        lambda t: [
            ("role", "assistant"),
            ("content", t),
            ("reasoning", None),
            ("reasoning_details", []),
        ],
        [],
    ),
]


@pytest.mark.parametrize(
    ("field", "style", "reasoning_delta", "content_delta", "finish_delta"),
    CHUNK_SHAPES,
    ids=["deepseek", "llama.cpp", "vllm", "openrouter"],
)
def test_reasoning_chunk_shapes(
    fake_server: ModelServer,
    field: Any,
    style: Any,
    reasoning_delta: Any,
    content_delta: Any,
    finish_delta: list[tuple[str, Any]],
) -> None:
    fake_server.set_model(
        "think",
        ModelScript(replies=[THINKING_REPLY], reasoning_field=field, chunk_style=style),
    )
    events = raw_stream(fake_server, "think")

    expected = [reasoning_delta(t) for t in THINKING] + [content_delta(t) for t in ANSWER]
    if expected[0][0] != ("role", "assistant"):
        expected[0].insert(0, ("role", "assistant"))  # the role rides on the first chunk
    assert deltas(events) == [*expected, finish_delta]
    assert [e["choices"][0]["finish_reason"] for e in events if e["choices"]][-1] == "stop"
    assert events[-1]["choices"] == []
    assert events[-1]["usage"] == {
        "prompt_tokens": len(QUESTION) // 4 + 1,
        "completion_tokens": 7,
        "total_tokens": len(QUESTION) // 4 + 1 + 7,
        "completion_tokens_details": {"reasoning_tokens": 3},
    }


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_field_through_the_sdk_with_awkward_chunks(
    fake_server: ModelServer, field: Any
) -> None:
    # <thinking> tags too; each part is tokenized on its own, so no chunk holds both.
    reply = "<thinking>Let me add.</thinking>The sum is 2"
    fake_server.set_model(
        "think", ModelScript(replies=[reply], reasoning_field=field, tokenizer=split_every(4))
    )
    _, chunks = asyncio.run(collect(fake_server, "think"))

    reasoning, content, reasoning_chunks, content_chunks = split_reply(chunks, field)
    assert (reasoning, content) == ("Let me add.", "The sum is 2")
    assert (reasoning_chunks, content_chunks) == (3, 3)  # "Let ", "me a", "dd." / "The "…
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == 6
    assert chunks[-1].usage.completion_tokens_details is not None
    assert chunks[-1].usage.completion_tokens_details.reasoning_tokens == 3


@pytest.mark.parametrize(
    ("reply", "reasoning", "content"),
    [
        # A template that pre-opens <think>: the model only writes the closing tag.
        ("Let me add.\n</think>\n\nThe sum is 2", "Let me add.\n", "\n\nThe sum is 2"),
        # Opened and never closed (cut off, or a parser quirk): all of it is thinking.
        ("<think>Let me add, and add", "Let me add, and add", ""),
        # No tags at all: all answer.
        ("The sum is 2", "", "The sum is 2"),
    ],
    ids=["pre-opened", "never-closed", "no-tags"],
)
def test_where_the_thinking_ends(
    fake_server: ModelServer, reply: str, reasoning: str, content: str
) -> None:
    fake_server.set_model(
        "think", ModelScript(replies=[reply], cycle=True, reasoning_field="reasoning")
    )

    async def scenario() -> tuple[list[ChatCompletionChunk], ChatCompletion]:
        _, chunks = await collect(fake_server, "think")
        async with make_client(fake_server) as client:
            done = await client.chat.completions.create(model="think", messages=USER)
        return chunks, done

    chunks, done = asyncio.run(scenario())
    assert split_reply(chunks, "reasoning")[:2] == (reasoning, content)
    message = done.choices[0].message
    assert (message.model_extra or {})["reasoning"] == (reasoning or None)
    # vLLM answers content null when there is only thinking.
    assert message.content == (content if content or not reasoning else None)
    assert chunks[-1].usage is not None
    assert done.usage is not None
    details = done.usage.completion_tokens_details
    assert (details.reasoning_tokens if details else None) == (
        len(tokenize(reasoning)) if reasoning else None
    )
    assert chunks[-1].usage.model_dump() == done.usage.model_dump()


@pytest.mark.parametrize(
    ("field", "style", "extra"),
    [
        ("reasoning_content", None, {}),
        ("reasoning", None, {}),
        (
            "reasoning",
            "openrouter",
            {
                "reasoning_details": [
                    {
                        "type": "reasoning.text",
                        "text": "Let me add.",
                        "format": "unknown",
                        "index": 0,
                    }
                ]
            },
        ),
    ],
)
def test_non_streaming_splits_the_reasoning_out(
    fake_server: ModelServer, field: Any, style: Any, extra: dict[str, Any]
) -> None:
    fake_server.set_model(
        "think",
        ModelScript(replies=[THINKING_REPLY], reasoning_field=field, chunk_style=style),
    )
    status, answer = asyncio.run(post_chat(fake_server, {"model": "think", "messages": USER}))
    assert status == 200
    assert answer["choices"][0]["message"] == {
        "role": "assistant",
        "content": "The sum is 2",
        "refusal": None,
        field: "Let me add.",
        **extra,
    }
    assert answer["choices"][0]["finish_reason"] == "stop"
    assert answer["usage"]["completion_tokens"] == 7
    assert answer["usage"]["completion_tokens_details"] == {"reasoning_tokens": 3}


def test_reasoning_token_details_can_be_left_out(fake_server: ModelServer) -> None:
    # llama.cpp: the thinking counts in completion_tokens, but there are no details.
    fake_server.set_model(
        "llama",
        ModelScript(
            replies=[THINKING_REPLY],
            reasoning_field="reasoning_content",
            chunk_style="sparse",
            report_reasoning_tokens=False,
        ),
    )
    _, chunks = asyncio.run(collect(fake_server, "llama"))
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == 7
    assert chunks[-1].usage.completion_tokens_details is None


def test_hidden_reasoning_tokens_like_openai(fake_server: ModelServer) -> None:
    fake_server.set_model("o3", ModelScript(replies=["hello there"], hidden_reasoning_tokens=192))

    async def scenario() -> None:
        text, chunks = await collect(fake_server, "o3")
        assert text == "hello there"
        assert all(not (c.choices[0].delta.model_extra or {}) for c in chunks if c.choices)
        usage = chunks[-1].usage
        assert usage is not None
        assert usage.completion_tokens_details is not None
        assert (usage.completion_tokens, usage.completion_tokens_details.reasoning_tokens) == (
            194,
            192,
        )
        # max_completion_tokens counts the hidden reasoning first: an empty answer, "length".
        for limit, answer, reason in [(100, "", "length"), (193, "hello", "length")]:
            text, chunks = await collect(fake_server, "o3", max_completion_tokens=limit)
            assert (text, finish_reason(chunks)) == (answer, reason)
            usage = chunks[-1].usage
            assert usage is not None
            assert usage.completion_tokens_details is not None
            assert usage.completion_tokens == limit
            assert usage.completion_tokens_details.reasoning_tokens == min(limit, 192)

    asyncio.run(scenario())


STOP_REPLY = "<think>First add. Then check.</think>Final Answer: 2"


@pytest.mark.parametrize("field", [None, "reasoning_content"])
def test_stop_inside_the_thinking_cuts_the_raw_reply(fake_server: ModelServer, field: Any) -> None:
    fake_server.set_model(
        "think", ModelScript(replies=[STOP_REPLY], cycle=True, reasoning_field=field)
    )
    events = raw_stream(fake_server, "think", stop=["Then"])
    chunks = [ChatCompletionChunk.model_validate(e) for e in events]
    assert finish_reason(chunks) == "stop"
    if field is None:
        assert split_reply(chunks, "reasoning_content")[:2] == ("", "<think>First add. ")
    else:
        # Opened and never closed once cut: all thinking, no answer (vLLM V1, llama.cpp).
        assert split_reply(chunks, field)[:2] == ("First add. ", "")
    assert events[-1]["usage"]["completion_tokens"] == 3
    assert events[-1]["usage"]["completion_tokens_details"] == {"reasoning_tokens": 3}


def test_stop_skips_reasoning(fake_server: ModelServer) -> None:
    # vLLM PR #14550: stop strings are only looked for once the thinking is over.
    fake_server.set_model(
        "think",
        ModelScript(
            replies=[STOP_REPLY], cycle=True, reasoning_field="reasoning", stop_skips_reasoning=True
        ),
    )

    async def scenario() -> None:
        _, chunks = await collect(fake_server, "think", stop=["Then"])
        assert split_reply(chunks, "reasoning")[:2] == ("First add. Then check.", "Final Answer: 2")
        _, chunks = await collect(fake_server, "think", stop=["Then", "Answer"])
        assert split_reply(chunks, "reasoning")[:2] == ("First add. Then check.", "Final ")
        assert finish_reason(chunks) == "stop"

    asyncio.run(scenario())


@pytest.mark.parametrize("field", [None, "reasoning"])
def test_max_tokens_counts_thinking_and_answer(fake_server: ModelServer, field: Any) -> None:
    fake_server.set_model(
        "think", ModelScript(replies=[THINKING_REPLY], cycle=True, reasoning_field=field)
    )

    async def scenario() -> None:
        cases: list[tuple[dict[str, Any], int]] = [
            ({"max_tokens": 5}, 3),
            ({"max_completion_tokens": 2}, 2),
        ]
        for params, reasoning_tokens in cases:
            _, chunks = await collect(fake_server, "think", **params)
            assert finish_reason(chunks) == "length"
            usage = chunks[-1].usage
            assert usage is not None
            assert usage.completion_tokens_details is not None
            limit = next(iter(params.values()))
            assert usage.completion_tokens == limit
            if field is not None:
                assert usage.completion_tokens_details.reasoning_tokens == reasoning_tokens
                reasoning, content, _, _ = split_reply(chunks, field)
                assert reasoning + content == "".join([*THINKING, *ANSWER][:limit])
            else:
                # Raw tokens: "<think>Let", " me", " add.</think>The", " sum", …
                text = "".join(tokenize(THINKING_REPLY)[:limit])
                assert split_reply(chunks, "reasoning")[:2] == ("", text)
        _, chunks = await collect(fake_server, "think", max_tokens=7)
        assert finish_reason(chunks) == "stop"

    asyncio.run(scenario())


# The JSON OpenAI answers, verbatim (sources beside OPENAI_REASONING_REJECTS, model_server/chat.py).
REJECTIONS: list[tuple[dict[str, Any], str, str, str]] = [
    (
        {"max_tokens": 100},
        "max_tokens",
        "unsupported_parameter",
        "Unsupported parameter: 'max_tokens' is not supported with this model."
        " Use 'max_completion_tokens' instead.",
    ),
    (
        {"stop": ["Observation:"]},
        "stop",
        "unsupported_parameter",
        "Unsupported parameter: 'stop' is not supported with this model.",
    ),
    (
        {"temperature": 0},
        "temperature",
        "unsupported_value",
        "Unsupported value: 'temperature' does not support 0 with this model."
        " Only the default (1) value is supported.",
    ),
    (
        {"temperature": 0.01},
        "temperature",
        "unsupported_value",
        "Unsupported value: 'temperature' does not support 0.01 with this model."
        " Only the default (1) value is supported.",
    ),
    # Several at once: the first in OPENAI_REASONING_REJECTS' order is the one reported.
    (
        {"temperature": 0.2, "stop": "x", "max_tokens": 5},
        "max_tokens",
        "unsupported_parameter",
        "Unsupported parameter: 'max_tokens' is not supported with this model."
        " Use 'max_completion_tokens' instead.",
    ),
    (
        {"temperature": 0.2, "stop": "x"},
        "stop",
        "unsupported_parameter",
        "Unsupported parameter: 'stop' is not supported with this model.",
    ),
]


@pytest.mark.parametrize(("params", "param", "code", "message"), REJECTIONS)
@pytest.mark.parametrize("stream", [False, True])
def test_rejected_parameters_get_openais_400(
    fake_server: ModelServer,
    params: dict[str, Any],
    param: str,
    code: str,
    message: str,
    stream: bool,
) -> None:
    fake_server.set_model(
        "o3", ModelScript(replies=["hello"], reject_params=OPENAI_REASONING_REJECTS)
    )
    body = {"model": "o3", "messages": USER, "stream": stream, **params}
    assert asyncio.run(post_chat(fake_server, body)) == (
        400,
        {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": param,
                "code": code,
            }
        },
    )
    assert fake_server.wait_for_stat("errors", 1)
    assert fake_server.stats["finished"] == 0


def test_rejections_through_the_sdk_and_what_passes(fake_server: ModelServer) -> None:
    fake_server.set_model(
        "o3",
        ModelScript(
            replies=["hello"],
            cycle=True,
            hidden_reasoning_tokens=10,
            reject_params=OPENAI_REASONING_REJECTS,
        ),
    )

    async def scenario() -> None:
        with pytest.raises(openai.BadRequestError, match="Use 'max_completion_tokens'") as info:
            await collect(fake_server, "o3", max_tokens=50)
        assert (info.value.status_code, info.value.param, info.value.code) == (
            400,
            "max_tokens",
            "unsupported_parameter",
        )
        # The default temperature, null values and max_completion_tokens all pass.
        passing: list[dict[str, Any]] = [
            {"temperature": 1},
            {"temperature": 1.0},
            {"max_completion_tokens": 50},
        ]
        for params in passing:
            assert (await collect(fake_server, "o3", **params))[0] == "hello"
        status, answer = await post_chat(
            fake_server, {"model": "o3", "messages": USER, "stop": None, "max_tokens": None}
        )
        assert (status, answer["choices"][0]["message"]["content"]) == (200, "hello")

    asyncio.run(scenario())
    assert fake_server.stats["errors"] == 1
    assert fake_server.wait_for_stat("finished", 4)


def test_a_custom_rejection_and_other_errors_keep_param_null(
    fake_server: ModelServer,
) -> None:
    # o1 in September 2024 (https://github.com/ChatGPTNextWeb/NextChat/issues/5410):
    # stream=true refused, stream=false fine.
    no_stream = UnsupportedParam(
        "stream",
        "Unsupported value: 'stream' does not support {value} with this model."
        " Only the default (false) value is supported.",
        code="unsupported_value",
        allowed=(False,),
    )
    fake_server.set_model("o1", ModelScript(replies=["hi"], cycle=True, reject_params=(no_stream,)))

    async def scenario() -> None:
        status, error = await post_chat(
            fake_server, {"model": "o1", "messages": USER, "stream": True}
        )
        assert status == 400
        assert error["error"]["message"].startswith(
            "Unsupported value: 'stream' does not support true"
        )
        assert (error["error"]["param"], error["error"]["code"]) == ("stream", "unsupported_value")
        status, _ = await post_chat(fake_server, {"model": "o1", "messages": USER, "stream": False})
        assert status == 200
        status, error = await post_chat(fake_server, {"model": "nope", "messages": USER})
        assert (status, error["error"]["param"]) == (404, None)

    asyncio.run(scenario())
    assert fake_server.stats["errors"] == 2


# ---- lifecycle and bookkeeping ---------------------------------------------------


def test_context_manager_restart_and_reset() -> None:
    with ModelServer() as server:
        assert server.base_url == f"http://{server.host_port}/v1"
        assert server.host_port.startswith("127.0.0.1:")
        server.set_model("m1", ModelScript(replies=["one"]))
        assert asyncio.run(collect(server, "m1"))[0] == "one"
        assert len(server.requests) == 1
        server.reset()
        assert server.requests == []
        assert server.stats["completions"] == 0
        with pytest.raises(openai.NotFoundError):
            asyncio.run(collect(server, "m1"))
    with pytest.raises(RuntimeError):
        _ = server.base_url
    with server:  # a stopped server starts again, on a new port maybe
        server.set_model("m1", ModelScript(replies=["two"]))
        assert asyncio.run(collect(server, "m1"))[0] == "two"


def test_concurrent_streams(fake_server: ModelServer) -> None:
    reply = " ".join(f"w{i}" for i in range(200))
    fake_server.set_model("m1", ModelScript(replies=[reply], rate=2000.0))

    async def scenario() -> list[str]:
        results = await asyncio.gather(*(collect(fake_server, "m1") for _ in range(4)))
        return [text for text, _ in results]

    assert asyncio.run(scenario()) == [reply] * 4
    assert fake_server.wait_for_stat("finished", 4)


# ---- throughput ------------------------------------------------------------------

# 4,000 keeps the suite quick; FAKESERVER_BENCH_TOKENS=20000 for a longer measurement.
BENCH_TOKENS = int(os.environ.get("FAKESERVER_BENCH_TOKENS", "4000"))
# Rate floors mean nothing under asyncio debug mode or tracemalloc (5-10x slower).
CHECK_RATES = not sys.flags.dev_mode and not tracemalloc.is_tracing()


def stream_through_the_sdk(server: ModelServer) -> tuple[int, float]:
    """Unthrottled, one request, consumed by the real SDK: content chunks and seconds."""
    reply = " ".join(f"w{i}" for i in range(BENCH_TOKENS))
    server.set_model("fast", ModelScript(replies=[reply]))

    async def scenario() -> tuple[int, float]:
        count = 0
        async with make_client(server) as client:
            started = time.perf_counter()
            stream = await client.chat.completions.create(
                model="fast",
                messages=USER,
                stream=True,
            )
            async for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    count += 1
            return count, time.perf_counter() - started

    return asyncio.run(scenario())


def stream_from_a_raw_socket(server: ModelServer) -> tuple[bytes, float]:
    """Raw socket reader, no SDK: the whole response and seconds."""
    reply = " ".join(f"w{i}" for i in range(BENCH_TOKENS))
    server.set_model("fast", ModelScript(replies=[reply]))
    body = json.dumps({"model": "fast", "messages": USER, "stream": True}).encode()
    host, port = server.host_port.split(":")

    async def scenario() -> tuple[bytes, float]:
        reader, writer = await asyncio.open_connection(host, int(port))
        started = time.perf_counter()
        writer.write(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        data = await asyncio.wait_for(reader.read(-1), 30)
        elapsed = time.perf_counter() - started
        writer.close()
        await writer.wait_closed()
        return data, elapsed

    return asyncio.run(scenario())


def content_chunks(data: bytes) -> int:
    assert data.startswith(b"HTTP/1.1 200")
    assert b"data: [DONE]" in data
    return data.count(b'"delta":{"content":') + data.count(b'"delta":{"role":')


def test_an_unthrottled_stream_arrives_whole_through_the_sdk(
    fake_server: ModelServer,
) -> None:
    count, _ = stream_through_the_sdk(fake_server)
    assert count == BENCH_TOKENS
    assert fake_server.wait_for_stat("finished", 1)


def test_an_unthrottled_stream_arrives_whole_on_a_raw_socket(
    fake_server: ModelServer,
) -> None:
    data, _ = stream_from_a_raw_socket(fake_server)
    assert content_chunks(data) == BENCH_TOKENS


@pytest.mark.latency
@pytest.mark.skipif(not CHECK_RATES, reason="rates mean nothing under -X dev or tracemalloc")
def test_throughput_through_the_sdk(fake_server: ModelServer) -> None:
    count, elapsed = stream_through_the_sdk(fake_server)
    assert count == BENCH_TOKENS
    # Loose on purpose: ~3,000-4,000/s on a 2-core box, mostly the SDK building models.
    assert count / elapsed > 1_000, f"{count / elapsed:.0f} chunks/s"


@pytest.mark.latency
@pytest.mark.skipif(not CHECK_RATES, reason="rates mean nothing under -X dev or tracemalloc")
def test_throughput_of_the_server_alone(fake_server: ModelServer) -> None:
    data, elapsed = stream_from_a_raw_socket(fake_server)
    chunks = content_chunks(data)
    assert chunks == BENCH_TOKENS
    assert chunks / elapsed > 5_000, f"{chunks / elapsed:.0f} chunks/s"
