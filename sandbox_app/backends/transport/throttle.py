"""Each server's requests paced as the server asks, for every kind, in one place.

A kind's stream raises :class:`RateLimited` for a 429 before its reply began (with the wait
the server's ``Retry-After`` asked for, if any); :func:`paced` (which every SDK backend's
stream goes through, sdk_backend.py) retries it, at most :data:`MAX_RETRIES` times, and the
server's :class:`ServerThrottle` backs off for everyone sending to it, not only for the
request that was refused:

- the wait pauses the server's every new request (a 429 answers the client, not the
  request: sending the others meanwhile earns more 429s);
- the requests the server takes at once are halved (at least one), then grow by about one
  per round of answered requests up to :data:`CEILING` (additive increase, multiplicative
  decrease: TCP's answer to the same question, a capacity nobody tells you).

What a request waits for — a free place under the server's limit, a pause — is said to the
engine as ``Delta.queued_s``: the run's queue time, kept apart from its working time, so a
throttled evaluation reports what the model cost, not how long it waited (the time to first
token starts when the request is sent, ``Delta.sent_at``, as before).

The throttles live on the network loop (network_loop.py), where every SDK backend's request
runs: one per server (its host and port) for the whole process, shared by every lane and
every run sending to it.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING

from sandbox_app.backends.transport.errors import gave_up
from sandbox_app.core.running.backend import BackendError, Delta
from sandbox_app.lazy_import import lazy_import

if TYPE_CHECKING:  # asyncio itself on the first wait: the window paints before it loads
    import asyncio
else:
    asyncio = lazy_import("asyncio")

MAX_RETRIES = 3  # a request's 429s retried, then the run fails with errors.gave_up's line
MAX_RETRY_WAIT_S = 60.0  # whatever a server's Retry-After says
CEILING = 64  # requests at once a throttle grows back to (eval's --concurrency is at most 64)


class RateLimited(BackendError):
    """A 429 before the reply began. ``wait``: the seconds the server asked for (its
    ``Retry-After``), None when it did not say; ``final``: the line to fail with instead of
    guessing a wait when the server did not say (a kind whose 429 without a wait means out of
    quota), None to back off 1, 2, 4 s."""

    def __init__(self, host: str, wait: float | None, final: BackendError | None = None):
        super().__init__(f"Rate limited (429) by {host}")
        self.wait = None if wait is None else min(max(wait, 0.0), MAX_RETRY_WAIT_S)
        self.final = final


def header_wait(headers: object) -> float | None:
    """The seconds a reply's ``Retry-After`` header asks for (None: none, or not a number of
    seconds; the HTTP date form is rare on APIs and read as none)."""
    get = getattr(headers, "get", None)
    value = get("retry-after") if callable(get) else None
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


class ServerThrottle:
    """One server's pace: how many requests it takes at once now (``limit``) and until when
    it asked for none (``paused_until``, ``time.monotonic()``)."""

    def __init__(self, ceiling: int = CEILING) -> None:
        self.ceiling = ceiling
        self.limit = float(ceiling)
        self.in_flight = 0
        self.paused_until = 0.0
        self._waiters: list[asyncio.Future[None]] = []

    @property
    def allowed(self) -> int:
        return max(1, int(self.limit))

    async def acquire(self) -> float:
        """Wait for a place (after any pause); the seconds waited (0.0: none)."""
        started, waited = time.monotonic(), False
        while True:
            pause = self.paused_until - time.monotonic()
            if pause > 0:
                waited = True
                await asyncio.sleep(pause)
                continue
            if self.in_flight < self.allowed:
                self.in_flight += 1
                return time.monotonic() - started if waited else 0.0
            waited = True
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            await waiter  # a release wakes every waiter; each looks again

    def release(self, answered: bool) -> None:
        """A request is over: ``answered`` (its reply came) grows the limit by 1/limit."""
        self.in_flight -= 1
        if answered:
            self.limit = min(float(self.ceiling), self.limit + 1 / self.limit)
        self._wake()

    def refused(self, wait: float) -> None:
        """A 429: half the requests at once (of those going now), and none for ``wait`` s."""
        self.limit = max(1.0, min(self.limit, self.in_flight) / 2)
        self.paused_until = max(self.paused_until, time.monotonic() + wait)

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)


_THROTTLES: dict[str, ServerThrottle] = {}  # by host:port, on the network loop's thread only


def throttle_for(host: str) -> ServerThrottle:
    return _THROTTLES.setdefault(host.lower(), ServerThrottle())


async def paced(
    host: str, stream: Callable[[], AsyncGenerator[Delta, None]]
) -> AsyncGenerator[Delta, None]:
    """``stream()``'s deltas, sent when ``host``'s throttle lets it (its host and port),
    made again after a 429 (:class:`RateLimited`) once the server's wait is over."""
    throttle = throttle_for(host)
    tried = 0
    while True:
        queued = await throttle.acquire()
        answered = False
        wait: float | None = None
        try:
            if queued:
                yield Delta(queued_s=queued)
            async with aclosing(stream()) as deltas:
                async for delta in deltas:
                    yield delta
            answered = True
            return
        except RateLimited as limited:
            if limited.wait is None and limited.final is not None:
                raise limited.final from None
            if tried == MAX_RETRIES:
                raise gave_up(host, MAX_RETRIES) from None
            wait = 2.0**tried if limited.wait is None else limited.wait
            throttle.refused(wait)
            tried += 1
        finally:
            throttle.release(answered)
        # Said before the wait (the trace shows why nothing comes), waited in acquire().
        yield Delta(notice=f"Rate limited (429): retrying in {wait:g} s ({tried} of {MAX_RETRIES})")
