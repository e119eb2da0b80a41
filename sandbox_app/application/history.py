"""The app's history of runs, for every front end: the window's test sets, Run tab and lanes,
and ``react-sandbox eval``, all stored as they end in one database (core/history/history_db.py).

History is a record, never a condition of running: a database that cannot be opened or
written (damaged, locked, on a full disk, made by a newer app) is said once, in one line,
through ``say``, and from then on the runs go on without it. Nothing here raises.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandbox_app.application.one_behind import OneBehind
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.history.history_rows import result_row
from sandbox_app.core.history.history_schema import HistoryError, default_path, packed_json
from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.results.result_stream import LineParts
from sandbox_app.core.running.events import event_to_dict
from sandbox_app.core.running.recording import event_from_dict
from sandbox_app.core.running.records import RunRecord
from sandbox_app.core.untrusted.file_reader import ReadError

if TYPE_CHECKING:  # the window loads this at its first run's end: nothing heavy before
    from sandbox_app.application.backend_choice import BackendChoice

Say = Callable[[str], None]


class History:
    """The database at ``path`` (None: the default one), or none, said once why."""

    def __init__(
        self,
        path: Path | None = None,
        say: Say = lambda _line: None,
        stored: Callable[[], None] = lambda: None,
        keep: bool = True,
    ) -> None:
        """``stored``: called after each run the database took (on the thread that stored
        it), so what counts runs can count again; ``keep`` False: no history, unsaid (a
        shard's runs, which reach it when merged)."""
        self.path = path or default_path()
        self._say = say
        self.stored = stored
        self.problem = ""  # the one line saying why there is no history ("": there is)
        self._said = threading.Lock()
        self.store: HistoryStore | None = None
        if not keep:
            return
        try:
            self.store = HistoryStore(self.path)
        except HistoryError as err:
            self.store = None
            self._off(err)

    def _off(self, err: HistoryError) -> None:
        """No history from now on; said once (two threads may fail at the same moment)."""
        with self._said:
            if self.problem:
                return
            self.problem = f"history off ({err}); runs go on without it"
            store, self.store = self.store, None
        if store is not None:
            store.close()
        self._say(self.problem)

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None

    def begin(
        self,
        title: str,
        scenario_path: str,
        lanes: Sequence[BackendChoice],
        cases: int,
        repeats: int,
        source: str,
        *,
        results_file: str = "",
        resume: bool = False,
        done: Iterable[EvalResult] = (),
    ) -> EvaluationLog:
        """An evaluation's log. ``resume``: go on with the newest evaluation written beside
        ``results_file``, adding the ``done`` results it lacks (a kill can come between the
        results file's line and the database's row)."""
        models = {lane.label: lane.config.model or lane.config.kind.id for lane in lanes}
        log = EvaluationLog(self, None, models)
        store = self.store
        if store is None:
            return log
        try:
            found = store.latest_for_file(results_file) if resume and results_file else None
            if found is None:
                found = store.begin_evaluation(
                    title, scenario_path, models, cases, repeats, source, results_file
                )
            else:
                store.reopen(found)
            log.id = found
            have = store.verdicts(found)
            for result in done:
                key = result.key
                if (key.lane, key.case, key.repeat) not in have:
                    log.add(result)
        except HistoryError as err:
            self._off(err)
        return log

    def run_finished(self, place: str, record: RunRecord, passed: bool | None) -> None:
        """A single run (the Run tab's, a lane's) with its run document."""
        store = self.store
        if store is None or record.finished is None:
            return
        from sandbox_app.core.results.exports import run_document

        title = record.scenario.title if record.scenario is not None else ""
        try:
            number = store.add_run(place, title, run_document(record), passed)
        except HistoryError as err:
            self._off(err)
            return
        record.stored_as = ("run", number, str(store.path))  # what a grade of it is kept by
        self.stored()


class EvaluationLog:
    """Where one evaluation's results go as each run ends: a row each, in its own
    transaction (on the thread that calls :meth:`add`)."""

    def __init__(self, history: History, evaluation: int | None, models: dict[str, str]) -> None:
        self.history, self.id, self.models = history, evaluation, models

    def add(self, result: EvalResult, record: RunRecord | None = None) -> None:
        self.stored(result, record)

    def stored(self, result: EvalResult, record: RunRecord | None = None) -> bool:
        """:meth:`add`, saying whether the result (and its trace) is in the database now: the
        window keeps a run the database did not take itself (ui/compare/eval_results.py)."""
        store = self.history.store
        if store is None or self.id is None:
            return False
        events = result.events or (
            [event_to_dict(e) for e in record.events] if record is not None else []
        )
        try:
            store.add_result(self.id, result, events, self.models.get(result.lane, ""))
        except HistoryError as err:
            self.history._off(err)
            return False
        self.history.stored()
        return True

    def add_many(self, results: Iterable[LineParts], batch: int = 1000) -> None:
        """Each result with its trace and metrics as the JSON its line held (a merge's: never
        parsed again, never written again), ``batch`` a transaction. ``results`` is gone
        through whole, history or not: what makes them may count them as they come.

        A batch is compressed and stored on a thread of its own while the next is read
        (zlib and SQLite let go of the GIL: a merge of 100,000 runs uses both cores); one
        batch at most waits, so memory stays a batch's."""
        rows: list[tuple[tuple[Any, ...], bytes]] = []
        with OneBehind("history-rows") as writer:
            for result, events, metrics in results:
                if self.history.store is None or self.id is None:
                    continue
                model = self.models.get(result.lane, "")
                rows.append((result_row(self.id, result, model, metrics), events))
                if len(rows) == batch:
                    self._stored(writer, rows)
                    rows = []
            if rows:
                self._stored(writer, rows)
            self._stored(writer, [])

    def _stored(self, writer: OneBehind, rows: list[tuple[tuple[Any, ...], bytes]]) -> None:
        """The batch before stored (the history off if it could not be), ``rows`` handed on."""
        try:
            writer.wait()
        except HistoryError as err:
            self.history._off(err)
        if rows:
            writer.hand(lambda: self._store_rows(rows))

    def _store_rows(self, rows: list[tuple[tuple[Any, ...], bytes]]) -> None:
        store = self.history.store
        if store is not None:
            store.add_rows((row, packed_json(events)) for row, events in rows)
            self.history.stored()

    def finish(self) -> None:
        store = self.history.store
        if store is None or self.id is None:
            return
        try:
            store.finish_evaluation(self.id)
        except HistoryError as err:
            self.history._off(err)


def record_of(events: Iterable[dict[str, Any]]) -> RunRecord:
    """A stored trace as a record the window can draw (an event it cannot read ends it)."""
    record = RunRecord()
    for item in events:
        try:
            event = event_from_dict(item)
        except ReadError:
            break
        record.add([event])
    return record
