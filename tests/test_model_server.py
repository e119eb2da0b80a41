"""The one test server (tests/model_server/): its shared machinery exercised through the real
``openai`` SDK (turns, stop and token limits, pacing, HTTP failures, broken streams, lifecycle),
each kind's encoding checked against the stream captured from that kind's real API
(tests/data/streams/, each naming its source), and the replay of a recorded stream.

Several tests pin down which exception the SDK raises for each kind of broken
stream; the app's error translation relies on exactly these.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from typing import Any

import aiohttp
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai import AsyncOpenAI, AsyncStream
from openai.types.chat import ChatCompletionChunk, ChatCompletionMessageParam

from tests.model_server import (
    LocalModel,
    ModelScript,
    ModelServer,
    fake_server,
    split_every,
    tokenize,
)
from tests.model_server.replay import STREAMS, Recording, stream_bytes

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


# ---- split_every ------------------------------------------------------------------


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


# ---- each kind's encoding against its captured stream ------------------------------------

# One reply in raw model output, the same for every kind: each encodes it in its own shape.
CALL = {"name": "get_weather", "arguments": {"location": "Paris"}}
THINK = "<think>The user wants the weather.</think>"
ONE_REPLY = f"{THINK}Let me check.<tool_call>{json.dumps(CALL)}</tool_call>"
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]


FREE_FORM = {"args", "arguments", "input"}  # a tool call's arguments: any object


def shape(value: Any) -> Any:
    """A JSON value's shape: an object's keys with their values' shapes, an array's element
    shapes, a scalar's type (null: "null")."""
    if isinstance(value, dict):
        return {k: "object" if k in FREE_FORM else shape(item) for k, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value]
    return type(value).__name__ if value is not None else "null"


def fits(small: Any, big: Any) -> bool:
    """Whether a shape is one the captured one allows: every key the capture has (a server
    trims fields, never invents them), a value of the same type, or null on either side."""
    if "null" in (small, big):
        return True
    if isinstance(small, dict) and isinstance(big, dict):
        return all(key in big and fits(item, big[key]) for key, item in small.items())
    if isinstance(small, list) and isinstance(big, list):
        return all(any(fits(item, other) for other in big) for item in small) if big else not small
    return bool(small == big)


def payloads(data: bytes) -> list[tuple[str, Any]]:
    """The (event name, JSON) of each SSE event or JSON line ([DONE] left out)."""
    text = data.decode().replace("\r\n", "\n")
    if not text.startswith(("data:", "event:")):
        return [("", json.loads(line)) for line in text.splitlines() if line]
    found = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "data" in fields and fields["data"] != "[DONE]":
            found.append((fields.get("event", ""), json.loads(fields["data"])))
    return found


def _kind(name: str, payload: Any) -> tuple[str, str]:
    """An event's name and the type of what it carries (a Responses item, an Anthropic block
    or delta)."""
    for key in ("item", "content_block", "delta"):
        inner = payload.get(key) if isinstance(payload, dict) else None
        if isinstance(inner, dict) and "type" in inner:
            return name, str(inner["type"])
    return name, ""


def assert_shaped_like(sent: bytes, capture: str, shortened: bool = False) -> None:
    """Every event the server sent has the shape of one event of the same name captured: no
    field the real API does not send. ``shortened``: a capture that leaves events and fields
    out (its header says so): each event kind it has was sent, with at least its fields."""
    captured = payloads(stream_bytes(STREAMS / capture))
    events = payloads(sent)
    assert events
    if shortened:
        kinds = {_kind(name, payload) for name, payload in captured}
        sent_kinds = {_kind(name, payload) for name, payload in events}
        assert kinds <= sent_kinds, kinds - sent_kinds
        for name, real in captured:
            assert any(
                _kind(name, real) == _kind(other, payload) and fits(shape(real), shape(payload))
                for other, payload in events
            ), (name, real)
        return
    for name, payload in events:
        assert any(
            name == other and fits(shape(payload), shape(real)) for other, real in captured
        ), (name, payload)


async def post(url: str, body: dict[str, Any], **headers: str) -> bytes:
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, json=body, headers=headers) as response,
    ):
        assert response.status == 200, await response.text()
        return await response.read()


def test_the_chat_completions_encoding_is_the_captured_one(fake_server: ModelServer) -> None:
    fake_server.set_model("m", ModelScript(replies=[ONE_REPLY], hidden_reasoning_tokens=4))
    body = {"model": "m", "messages": USER, "stream": True, "tools": TOOLS}
    sent = asyncio.run(post(f"{fake_server.base_url}/chat/completions", body))
    assert_shaped_like(sent, "chat_completions.sse")
    plain = {**body, "stream_options": {"include_usage": True}}
    del plain["tools"]
    sent = asyncio.run(post(f"{fake_server.base_url}/chat/completions", plain))
    assert_shaped_like(sent, "chat_completions.sse")


def test_the_gemini_encoding_is_the_captured_one(fake_server: ModelServer) -> None:
    fake_server.set_model("m", ModelScript(replies=[ONE_REPLY]))
    body = {"contents": [{"role": "user", "parts": [{"text": QUESTION}]}]}
    url = f"{fake_server.root}/v1beta/models/m:streamGenerateContent?alt=sse"
    sent = asyncio.run(post(url, body))
    assert sent.endswith(b"\r\n\r\n")  # Gemini's line ends, as captured
    assert_shaped_like(sent, "gemini.sse")


def test_the_responses_encoding_is_the_captured_one(fake_server: ModelServer) -> None:
    fake_server.set_model("m", ModelScript(replies=[ONE_REPLY]))
    body = {"model": "m", "input": USER, "stream": True, "tools": TOOLS}
    body["include"] = ["reasoning.encrypted_content"]
    sent = asyncio.run(post(f"{fake_server.base_url}/responses", body))
    assert_shaped_like(sent, "responses.sse", shortened=True)


def test_the_anthropic_encoding_is_the_captured_one(fake_server: ModelServer) -> None:
    fake_server.set_model("m", ModelScript(replies=[ONE_REPLY]))
    body = {"model": "m", "messages": USER, "max_tokens": 1024, "stream": True, "tools": TOOLS}
    sent = asyncio.run(post(f"{fake_server.root}/v1/messages", body))
    assert_shaped_like(sent, "anthropic.sse", shortened=True)


def test_the_ollama_encoding_is_the_captured_one() -> None:
    with ModelServer("ollama") as server:
        server.add(LocalModel("m"), ModelScript(replies=[ONE_REPLY]))
        body = {"model": "m", "messages": USER, "tools": TOOLS}
        sent = asyncio.run(post(f"{server.root}/api/chat", body))
    assert_shaped_like(sent, "ollama.jsonl")


# ---- the shared knobs, in every kind's stream ----------------------------------------------

ASKED = {"model": "m", "messages": USER, "stream": True, "max_tokens": 1024}
REQUESTS: dict[str, tuple[str, dict[str, Any]]] = {
    "chat": ("/v1/chat/completions", ASKED),
    "responses": ("/v1/responses", {"model": "m", "input": USER, "stream": True}),
    "anthropic": ("/v1/messages", ASKED),
    "gemini": ("/v1beta/models/m:streamGenerateContent?alt=sse", {"contents": []}),
    "ollama": ("/api/chat", ASKED),
}


@pytest.mark.parametrize("kind", list(REQUESTS))
def test_every_kind_breaks_its_stream_as_scripted(kind: str) -> None:
    path, body = REQUESTS[kind]
    with ModelServer("ollama") as server:  # Ollama's routes too; the others are always there
        url = f"{server.root}{path}"
        server.add(LocalModel("m"), ModelScript(replies=[ONE_REPLY], malformed_after=1))
        assert b"{this is not json" in asyncio.run(post(url, body))
        server.set_model("m", ModelScript(replies=[ONE_REPLY], cut_after=1))
        with pytest.raises(aiohttp.ClientError):
            asyncio.run(post(url, body))
        assert server.wait_for_stat("cut", 1)
        assert server.stats["finished"] == 1  # the malformed one went to its end


# ---- replay ----------------------------------------------------------------------------


def test_replay_serves_a_recorded_stream_byte_for_byte(fake_server: ModelServer) -> None:
    recorded = stream_bytes(STREAMS / "chat_completions.sse")
    fake_server.replay(STREAMS / "chat_completions.sse", cut=7)
    body = {"model": "any", "messages": USER, "stream": True}
    assert asyncio.run(post(f"{fake_server.base_url}/chat/completions", body)) == recorded
    assert fake_server.requests == [body]
    fake_server.replay(None)  # back to the scripts: a model not set is a 404 again
    with pytest.raises(AssertionError, match="does not exist"):
        asyncio.run(post(f"{fake_server.base_url}/chat/completions", body))


def test_a_stream_file_that_names_no_source_is_refused(tmp_path: Any) -> None:
    nameless = tmp_path / "nameless.sse"
    nameless.write_bytes(b"data: {}\n\n")
    with pytest.raises(ValueError, match="names no source"):
        Recording.load(nameless)
