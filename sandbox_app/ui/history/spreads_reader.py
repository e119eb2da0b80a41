"""The History list's intervals by case, counted off the window's thread: each evaluation's
spread over its cases (core/history/history_arms.case_spreads) takes about half a second for
100,000 results and seconds for a million, so the list shows each pass rate at once
("92% (22/24, …)") and its interval when the count comes back. The count is made on a second
connection (core/history/history_reader.py) that a newer asking or the list's closing stops.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from sandbox_app.core.history.history_arms import case_spreads
from sandbox_app.core.history.history_reader import HistoryReader
from sandbox_app.core.history.history_schema import HistoryError


class SpreadsReader(QObject):
    """``came(number, answer)``: the spreads (or a ``HistoryError``) of asking ``number``;
    only the latest asking's answer is worth showing (:attr:`asked`)."""

    came = Signal(int, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.asked = 0
        self._reader: HistoryReader | None = None

    def ask(self, path: Path) -> None:
        self.stop()
        self.asked += 1
        number = self.asked

        def count() -> None:
            try:
                reader = HistoryReader(path)
            except HistoryError as err:
                self._answer(number, err)
                return
            self._reader = reader
            try:
                answer: object = case_spreads(reader)
            except HistoryError as err:  # stopped, or a file gone bad since it was listed
                answer = err
            finally:
                reader.close()
            self._answer(number, answer)

        threading.Thread(target=count, name="history-spreads", daemon=True).start()

    def stop(self) -> None:
        """End the count under way: its answer is no longer wanted."""
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.stop()

    def _answer(self, number: int, answer: object) -> None:
        with contextlib.suppress(RuntimeError):  # the list closed, its reader deleted
            self.came.emit(number, answer)
