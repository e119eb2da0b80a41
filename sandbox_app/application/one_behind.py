"""Work done on a thread of its own, one piece behind the code that makes it: what a merge of
100,000 runs writes (its results file, its history rows) is written while the next lines are
read, on the machine's other core.

Only writing goes there, work that lets go of the GIL (a file's ``write``, zlib, SQLite): a
piece is handed over whole, and the next waits for it, so at most one piece is in memory
beside the one being made, and the pieces are done in the order given. A piece's exception
is raised where the next is handed over (or by :meth:`OneBehind.wait`).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType


class OneBehind:
    """Use as a context manager: leaving it waits for the last piece (its exception raised)."""

    def __init__(self, name: str) -> None:
        self._thread = ThreadPoolExecutor(1, thread_name_prefix=name)
        self._doing: Future[object] | None = None

    def hand(self, piece: Callable[[], object]) -> None:
        """``piece`` done on the thread, once the one before it is done."""
        self.wait()
        self._doing = self._thread.submit(piece)

    def wait(self) -> None:
        doing, self._doing = self._doing, None
        if doing is not None:
            doing.result()

    def __enter__(self) -> OneBehind:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        try:
            if kind is None:
                self.wait()
        finally:
            self._thread.shutdown(wait=True)
