"""The Chat Completions stream (tests/model_server/chat.py): SSE chunks written as bytes,
each ``data: {chunk}`` the way the captures in tests/data/streams/chat_completions.sse are,
with the fault hooks (cut, malformed, invalid UTF-8, stalled) between the content chunks.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any

from aiohttp import web

from tests.model_server import passback
from tests.model_server.chat_calls import call_deltas, finish_choice, split_calls
from tests.model_server.events import faults_after, finish_stream
from tests.model_server.script import (
    ModelScript,
    Plan,
    chunk_style,
    find_thinking,
    prompt_tokens,
    usage_of,
)

if TYPE_CHECKING:
    from tests.model_server.server import ModelServer

SSE_HEADERS = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    "Connection": "keep-alive",
}
_DONE = b"data: [DONE]\n\n"
_MALFORMED = b"data: {this is not json\n\n"
_BAD_CONTENT = b'"\xff\xfe"'


async def stream_calls(
    server: ModelServer,
    request: web.Request,
    script: ModelScript,
    model: str,
    reply: str,
    messages: list[Any],
) -> web.StreamResponse:
    """A reply with tool calls, streamed in ``script.tool_call_style``'s shape: the text
    before the first call as content, then the calls, finish "tool_calls", usage."""
    style = script.tool_call_style
    assert style is not None
    content, calls = split_calls(reply)
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    span = find_thinking(content) if script.passback else None
    thinking: list[str] = []
    if span is not None and script.passback is not None:
        thinking = script.tokenizer(content[span[0] : span[1]])
        deltas += passback.thinking_deltas(script.passback, thinking)
        content = content[span[2] :]
    deltas += [{"content": token} for token in script.tokenizer(content)]
    first_id = server.next_id() * 16
    pieces = call_deltas(style, calls, script.tokenizer, first_id)
    if script.passback is not None:
        pieces = passback.sign_calls(script.passback, pieces)
        server.sent.update(
                (p["id"], "".join(thinking)) for d in pieces for p in d.get("tool_calls", ())
                if "id" in p
            )  # fmt: skip
    deltas += pieces
    completion_id = f"chatcmpl-fake{server.next_id()}"
    head = {"id": completion_id, "object": "chat.completion.chunk", "model": model}
    interval = 1.0 / script.rate if script.rate else 0.0
    response = web.StreamResponse(status=200, headers=SSE_HEADERS)

    async def write() -> bool:
        await response.prepare(request)
        for delta in deltas:
            if interval:
                await asyncio.sleep(interval)
            chunk = head | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        tokens = len(deltas) - 1
        usage = {
            "prompt_tokens": prompt_tokens(messages),
            "completion_tokens": tokens,
            "total_tokens": prompt_tokens(messages) + tokens,
        }
        tail = [
            head | {"choices": [finish_choice(style)]},
            head | {"choices": [], "usage": usage},
        ]
        for last in tail:
            await response.write(f"data: {json.dumps(last)}\n\n".encode())
        await response.write(_DONE)
        await response.write_eof()
        return True

    return await finish_stream(server, response, write())


async def stream(
    server: ModelServer,
    request: web.Request,
    script: ModelScript,
    model: str,
    plan: Plan,
    prompt_tokens: int,
    include_usage: bool,
) -> web.StreamResponse:
    loop = asyncio.get_running_loop()
    completion_id = f"chatcmpl-fake{server.next_id()}"
    created = int(time.time())
    tokens = plan.tokens
    usage_head = (
        f'data: {{"id":{json.dumps(completion_id)},"object":"chat.completion.chunk",'
        f'"created":{created},"model":{json.dumps(model)},'
    ).encode()
    head = usage_head + b'"choices":[{"index":0,'
    # A chunk is prefix + token + suffix. Reasoning chunks (the first
    # ``plan.reasoning_chunks``) have their own r_* parts; with ``twice`` (OpenRouter,
    # whose text is in ``reasoning`` and again in ``reasoning_details``) a reasoning
    # chunk is r_prefix + token + twice + token + r_suffix.
    first_prefix = head + b'"delta":{"role":"assistant","content":'
    prefix = head + b'"delta":{"content":'
    suffix = r_suffix = b'},"finish_reason":null}]}\n\n'
    end_delta = b"{}"
    r_first_prefix = r_prefix = b""
    twice: bytes | None = None
    field_name = script.reasoning_field
    if field_name is not None:
        key = json.dumps(field_name).encode()
        style = chunk_style(script)
        if style == "deepseek":  # both keys, the idle one null
            r_first_prefix = head + b'"delta":{"role":"assistant","content":null,' + key + b":"
            r_prefix = head + b'"delta":{"content":null,' + key + b":"
            suffix = b"," + key + b':null},"finish_reason":null}]}\n\n'
            end_delta = b'{"content":"",' + key + b":null}"
        elif style == "sparse":  # only the key in use
            r_first_prefix = head + b'"delta":{"role":"assistant",' + key + b":"
            r_prefix = head + b'"delta":{' + key + b":"
        else:  # openrouter: the role again on every chunk
            r_first_prefix = r_prefix = (
                head + b'"delta":{"role":"assistant","content":"",' + key + b":"
            )
            twice = b',"reasoning_details":[{"type":"reasoning.text","text":'
            r_suffix = b',"format":"unknown","index":0}]},"finish_reason":null}]}\n\n'
            prefix = first_prefix
            suffix = b"," + key + b':null,"reasoning_details":[]},"finish_reason":null}]}\n\n'
    reasoning_chunks = plan.reasoning_chunks
    finish = head + (
        b'"delta":'
        + end_delta
        + f',"finish_reason":{json.dumps(plan.finish_reason)}}}]}}\n\n'.encode()
    )
    encoded: dict[str, bytes] = {}

    response = web.StreamResponse(status=200, headers=SSE_HEADERS)

    async def write() -> bool:
        await response.prepare(request)
        if script.delay_first > 0:
            await asyncio.sleep(script.delay_first)
        interval = 1.0 / script.rate if script.rate else 0.0
        start = loop.time()
        count = len(tokens)
        for sent in range(count + 1):
            if not await faults_after(server, request, response, script, sent, _MALFORMED):
                return False
            if sent == script.bad_bytes_after:
                await response.write(prefix + _BAD_CONTENT + suffix)
            if sent == count:
                break
            if interval:
                # Paced against the start time, so sleep overshoot never accumulates.
                delay = start + sent * interval - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
            elif sent & 63 == 63:
                await asyncio.sleep(0)  # unthrottled: let other streams have a turn
            token = tokens[sent]
            content = encoded.get(token)
            if content is None:
                # A lone surrogate goes out as JSON's escape of it, as a real server's
                # encoder writes one ("\ud800"): legal JSON, no UTF-8 character.
                quoted = json.dumps(token, ensure_ascii=False)
                content = encoded[token] = quoted.encode("utf-8", "backslashreplace")
            if sent >= reasoning_chunks:
                await response.write((first_prefix if sent == 0 else prefix) + content + suffix)
            elif twice is None:
                await response.write(
                    (r_first_prefix if sent == 0 else r_prefix) + content + r_suffix
                )
            else:
                await response.write(r_prefix + content + twice + content + r_suffix)
        tail = finish
        if include_usage and script.sends_usage:
            usage = json.dumps(script.usage or usage_of(prompt_tokens, plan))
            tail += usage_head + f'"choices":[],"usage":{usage}}}\n\n'.encode()
        await response.write(tail + _DONE)
        await response.write_eof()
        return True

    return await finish_stream(server, response, write())
