"""Writing a kind's stream with the knobs every kind shares (tests/model_server/script.py):
the wait before the first event, the pace of the content events, and the broken streams
(cut, stalled, one malformed event), each counted after that many content events, as the Chat
Completions stream (chat_stream.py) counts its chunks. A response sent to the end counts as
finished, one the client hung up on first as aborted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING

from aiohttp import web

from tests.pacing import Pace

if TYPE_CHECKING:
    from tests.model_server.script import ModelScript
    from tests.model_server.server import ModelServer


async def finish_stream(
    server: ModelServer, response: web.StreamResponse, writing: Awaitable[bool]
) -> web.StreamResponse:
    """Run a stream's writes: finished when they end (True; False: cut on purpose), aborted
    when the client hung up first (unless the server is stopping)."""
    try:
        finished = await writing
    except ConnectionResetError:
        if not server.stopping:
            server.bump("aborted")
        return response
    except asyncio.CancelledError:
        if not server.stopping:
            server.bump("aborted")
        raise
    if finished:
        server.bump("finished")
    return response


def abort(request: web.Request) -> None:
    if request.transport is not None:
        request.transport.abort()


async def faults_after(
    server: ModelServer,
    request: web.Request,
    response: web.StreamResponse,
    script: ModelScript,
    sent: int,
    malformed: bytes,
) -> bool:
    """The script's fault hooks, every kind's, after ``sent`` content chunks (0: before any):
    the stream cut (False: it is over), stalled until someone hangs up, or a broken event."""
    if sent == script.cut_after:
        abort(request)
        server.bump("cut")
        return False
    if sent == script.stall_after:
        await asyncio.Future()  # until the client or the server hangs up
    if sent == script.malformed_after:
        await response.write(malformed)
    return True


async def send_events(
    server: ModelServer,
    request: web.Request,
    script: ModelScript,
    events: Iterable[tuple[bytes, bool]],
    content_type: str,
    malformed: bytes,
) -> web.StreamResponse:
    """Stream ``events`` (bytes, whether it carries content); ``malformed``: the kind's
    broken event (``data: {this is not json`` for SSE)."""
    response = web.StreamResponse(headers={"Content-Type": content_type})
    await response.prepare(request)
    transport = request.transport
    if transport is not None:
        server.active.add(transport)  # hung up on at stop, as a stalled stream needs

    async def write() -> bool:
        if script.delay_first > 0:
            await asyncio.sleep(script.delay_first)
        pace, sent = Pace(script.rate), 0
        for event, content in events:
            if content:
                if not await faults_after(server, request, response, script, sent, malformed):
                    return False
                await pace()
                sent += 1
            await response.write(event)
        await response.write_eof()
        return True

    try:
        return await finish_stream(server, response, write())
    finally:
        if transport is not None:
            server.active.discard(transport)
