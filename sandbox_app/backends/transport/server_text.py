"""Where a server's text becomes the app's: every piece of a streamed reply, every error line
and every model name a backend built on an SDK gives (sdk_backend.py) passes here once, by
core/untrusted/outside_text.py's rule (no lone surrogates, no key the request carried). The
engine, the records, the terminal, the exports and the OTel spans then never need to know.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Sequence
from contextlib import aclosing
from dataclasses import replace

from sandbox_app.core.running.backend import BackendError, Delta, ToolCallPiece
from sandbox_app.core.untrusted.outside_text import scrub


async def deltas(
    stream: AsyncGenerator[Delta, None], secrets: Sequence[str]
) -> AsyncGenerator[Delta, None]:
    """``stream``'s pieces and its error, each made safe."""
    try:
        async with aclosing(stream) as pieces:
            async for delta in pieces:
                yield safe_delta(delta, secrets)
    except BackendError as err:
        raise safe_error(err, secrets) from None


async def models(listing: Awaitable[list[str]], secrets: Sequence[str]) -> list[str]:
    """A server's model names, or its error, made safe."""
    try:
        return [scrub(name, secrets) for name in await listing]
    except BackendError as err:
        raise safe_error(err, secrets) from None


def safe_error(err: BackendError, secrets: Sequence[str]) -> BackendError:
    text = str(err)
    safe = scrub(text, secrets)
    return err if safe == text else BackendError(safe)


def safe_delta(delta: Delta, secrets: Sequence[str]) -> Delta:
    """``delta`` with its text, thinking, notice, finish reason and tool-call pieces safe (the
    same object when nothing changes: almost every piece). A key split between two pieces is
    not found: servers quote a key in an error, which comes whole."""
    text = scrub(delta.text, secrets)
    reasoning = scrub(delta.reasoning, secrets)
    notice = scrub(delta.notice, secrets)
    finish = None if delta.finish_reason is None else scrub(delta.finish_reason, secrets)
    calls = tuple(_safe_call(call, secrets) for call in delta.tool_calls)
    if (text, reasoning, notice, finish, calls) == (
        delta.text,
        delta.reasoning,
        delta.notice,
        delta.finish_reason,
        delta.tool_calls,
    ):
        return delta
    return replace(
        delta, text=text, reasoning=reasoning, notice=notice, finish_reason=finish, tool_calls=calls
    )


def _safe_call(call: ToolCallPiece, secrets: Sequence[str]) -> ToolCallPiece:
    fields = (scrub(call.id, secrets), scrub(call.name, secrets), scrub(call.arguments, secrets))
    if fields == (call.id, call.name, call.arguments):
        return call
    return ToolCallPiece(call.index, *fields)
