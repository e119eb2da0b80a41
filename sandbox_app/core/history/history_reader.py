"""A second connection to a history file, for the long reads the window makes off its own
thread (the results matrix's filters over every result of an evaluation): it never writes
(``query_only``), it holds no lock the store's own connection needs (WAL: readers and the
writer do not wait for each other), and a read can be stopped from another thread when its
answer is no longer wanted (the filter typed on).
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from sandbox_app.core.history.history_schema import LOCK_WAIT_S, HistoryError, reason


class Stopped(HistoryError):
    """A read stopped by :meth:`HistoryReader.stop` (its answer no longer wanted)."""


class HistoryReader:
    """Reads one at a time (a lock); :meth:`stop` from any thread ends the read under way."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._closed = False
        try:
            self._db = sqlite3.connect(
                path, timeout=LOCK_WAIT_S, isolation_level=None, check_same_thread=False
            )
            self._db.execute("PRAGMA query_only=ON")
        except sqlite3.Error as err:
            raise HistoryError(f"{path}: {reason(err)}") from None

    def read(self, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        with self._lock:
            try:
                return self._db.execute(sql, args).fetchall()
            except sqlite3.OperationalError as err:
                if "interrupted" in str(err):
                    raise Stopped(f"{self.path}: read stopped") from None
                raise HistoryError(f"{self.path}: {reason(err)}") from None
            except sqlite3.Error as err:
                raise HistoryError(f"{self.path}: {reason(err)}") from None

    def stop(self) -> None:
        """End the read under way (it raises :class:`Stopped`); none: nothing happens."""
        if not self._closed:
            self._db.interrupt()

    def close(self) -> None:
        self.stop()
        with self._lock:
            self._closed = True
            self._db.close()
