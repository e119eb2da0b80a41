"""The history database: every evaluation's results and every single run, in one SQLite file.

The standard library's ``sqlite3`` in WAL mode (readers never block the writer; a commit is
on disk before the next result is run, so a SIGKILL leaves only whole rows) with
``synchronous=NORMAL`` (a commit survives a killed process; only a power cut can lose the
last few). The schema is versioned by ``PRAGMA user_version`` and brought up to date at open
by :data:`MIGRATIONS`, one function per step, each in its own transaction.

Size: a result's row holds its fields (core/results/eval_result.py ``EvalResult``: lane, case,
repeat, passed, the arm, the answer, checks, metrics…); its events live apart in ``traces``,
zlib-compressed JSON (~1-3 KB a run), read only when a trace is shown, so 100,000 runs stay
a few hundred MB and a diff reads only an index (``results_diff``).

Every failure is a :class:`HistoryError` of one line (a corrupt or locked file, a schema
from a newer app); the application (application/history.py) says it once and goes on without
history. No Qt here.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from sandbox_app.core.history.history_rows import (
    EVALUATION_COLUMNS,
    TALLIED,
    VERDICTS,
    Tally,
    bad_results,
    counted,
    evaluation_row,
    result_of,
    result_row,
    select_results,
)
from sandbox_app.core.history.history_rows import (
    EvaluationRow as EvaluationRow,
)
from sandbox_app.core.history.history_schema import (
    LOCK_WAIT_S,
    HistoryError,
    migrate,
    now,
    packed,
    reason,
    use_wal,
)
from sandbox_app.core.results.eval_result import EvalResult

_NEW_EVALUATION = (
    "INSERT INTO evaluations (started, scenario_title, scenario_path, lanes, cases, repeats, "
    "source, results_file) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_NEW_RESULT = (
    "INSERT INTO results (evaluation_id, lane, case_no, repeat, prompt_version, model, passed, "
    "status, question, expected, answer, checks, metrics, arm, reason, judge, recorded) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (evaluation_id, lane, case_no, repeat) DO UPDATE SET "
    "prompt_version = excluded.prompt_version, model = excluded.model, "
    "passed = excluded.passed, status = excluded.status, question = excluded.question, "
    "expected = excluded.expected, answer = excluded.answer, checks = excluded.checks, "
    "metrics = excluded.metrics, arm = excluded.arm, reason = excluded.reason, "
    "judge = excluded.judge, "
    "recorded = excluded.recorded"
)
_NEW_TRACE = (
    "INSERT OR REPLACE INTO traces (result_id, events) SELECT id, ? FROM results "
    "WHERE evaluation_id = ? AND lane = ? AND case_no = ? AND repeat = ?"
)
_DROP_GRADE = (
    "DELETE FROM grades WHERE result_id = (SELECT id FROM results "
    "WHERE evaluation_id = ? AND lane = ? AND case_no = ? AND repeat = ?)"
)
_NEW_RUN = (
    "INSERT INTO runs (recorded, place, scenario_title, prompt_version, backend, model, "
    "status, answer, passed, document) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)

_RUN_TEXTS = "recorded, place, scenario_title, model"
RunKeyTuple = tuple[str, int, int]  # lane, case, repeat


class HistoryStore:
    """One history file. Safe to use from several threads (the window writes a test set's
    results on its evaluation thread): one connection, one lock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._skipped: dict[str, str] = {}  # bad rows read past, not yet said: row → line
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                path, timeout=LOCK_WAIT_S, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as err:
            raise HistoryError(f"{path}: {reason(err)}") from None
        # Text not UTF-8 (another program's) failed every read it was in: each bad byte is
        # U+FFFD, as in any text from outside (core/untrusted/outside_text.py).
        self._db.text_factory = functools.partial(str, encoding="utf-8", errors="replace")
        try:
            use_wal(self._db)
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            migrate(self._db)
        except (sqlite3.Error, HistoryError) as err:
            self._db.close()
            raise HistoryError(f"{path}: {reason(err)}") from None

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _write(self, work: Callable[[sqlite3.Connection], Any]) -> Any:
        """``work`` in one transaction: all of it is on disk, or none."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    value = work(self._db)
                    self._db.execute("COMMIT")
                except BaseException:
                    if self._db.in_transaction:
                        self._db.execute("ROLLBACK")
                    raise
            except sqlite3.Error as err:
                raise HistoryError(f"{self.path}: {reason(err)}") from None
            return value

    def execute(self, sql: str, args: tuple[Any, ...]) -> int:
        """One statement in its own transaction; the row id it made, if any."""
        return int(self._write(lambda db: db.execute(sql, args).lastrowid or 0))

    def read(self, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        with self._lock:
            try:
                return self._db.execute(sql, args).fetchall()
            except sqlite3.Error as err:
                raise HistoryError(f"{self.path}: {reason(err)}") from None
            except OverflowError:  # an id beyond SQLite's integers: there is no such row
                raise HistoryError(f"{self.path}: a number beyond SQLite's integers") from None

    def skip(self, row: str, line: str | HistoryError) -> None:
        """A bad row read past (core/history/history_rows.py), said once by :meth:`skipped`."""
        with self._lock:
            self._skipped.setdefault(row, str(line))

    def skipped(self) -> list[str]:
        """The bad rows read past since last asked, a line each (said by the front end)."""
        with self._lock:
            lines, self._skipped = list(self._skipped.values()), {}
        return lines

    # ---- writing ---------------------------------------------------------------------------

    def begin_evaluation(
        self,
        title: str,
        scenario_path: str,
        lanes: dict[str, str],
        cases: int,
        repeats: int,
        source: str,
        results_file: str = "",
    ) -> int:
        """A new evaluation; ``lanes``: each lane's label and its model."""
        lanes_json = json.dumps([{"label": k, "model": v} for k, v in lanes.items()])
        row = (now(), title, scenario_path, lanes_json, cases, repeats, source, results_file)
        return self.execute(_NEW_EVALUATION, row)

    def latest_for_file(self, results_file: str) -> int | None:
        """The newest evaluation written beside this results file (a resumed ``eval``)."""
        rows = self.read(
            "SELECT id FROM evaluations WHERE results_file = ? ORDER BY id DESC LIMIT 1",
            (results_file,),
        )
        return int(rows[0][0]) if rows else None

    def reopen(self, evaluation: int) -> None:
        self.execute("UPDATE evaluations SET finished = NULL WHERE id = ?", (evaluation,))

    def finish_evaluation(self, evaluation: int) -> None:
        self.execute("UPDATE evaluations SET finished = ? WHERE id = ?", (now(), evaluation))

    def add_result(
        self, evaluation: int, result: EvalResult, events: Sequence[Any], model: str
    ) -> None:
        """One result and its trace, in one transaction; a run again replaces its row."""
        self.add_rows([(result_row(evaluation, result, model), packed(list(events)))])

    def add_rows(self, rows: Iterable[tuple[tuple[Any, ...], bytes]]) -> None:
        """Results' rows (``history_rows.result_row``) and packed traces, in one transaction
        (a merge stores 100,000 runs a thousand a transaction, not one each)."""

        def work(db: sqlite3.Connection) -> None:
            # Each statement once for all the rows (the rows bound in C, not one call each);
            # a trace finds its result's id by the (evaluation, lane, case, repeat) index.
            many = list(rows)
            db.executemany(_NEW_RESULT, [row for row, _trace in many])
            db.executemany(_NEW_TRACE, [(trace, *row[:4]) for row, trace in many])
            if db.execute("SELECT 1 FROM grades LIMIT 1").fetchone() is not None:
                # A run again is another run: a person's grade of the one it replaces goes.
                db.executemany(_DROP_GRADE, [row[:4] for row, _trace in many])

        self._write(work)

    def add_run(self, place: str, title: str, document: dict[str, Any], passed: bool | None) -> int:
        """A single run (the Run tab's, a lane's) with its whole run document."""
        settings = document.get("settings") or {}
        row = (
            now(),
            place,
            title,
            str(settings.get("prompt_version") or ""),
            str(settings.get("backend") or ""),
            str(settings.get("model") or ""),
            document.get("status"),
            document.get("answer"),  # run_document's: text or None
            None if passed is None else int(passed),
            packed(document),
        )
        return self.execute(_NEW_RUN, row)

    # ---- reading ---------------------------------------------------------------------------

    def evaluations(self, only: int | None = None, tallied: bool = True) -> list[EvaluationRow]:
        """Every evaluation, newest first (or just ``only``), with its lanes' tallies (not
        ``tallied``: none, and no result read); a bad row is skipped and said (:meth:`skipped`)."""
        where, args = ("WHERE id = ?", (only,)) if only is not None else ("", ())
        found: dict[int, EvaluationRow] = {}
        for r in self.read(
            f"SELECT {EVALUATION_COLUMNS} FROM evaluations {where} ORDER BY id DESC", args
        ):
            try:
                row = evaluation_row(r)
            except HistoryError as err:
                self.skip(f"evaluation {r[0]}", err)
                continue
            found[row.id] = row
        if not tallied:
            return list(found.values())
        of = "AND evaluation_id = ?" if only is not None else ""
        tallies = self.read(
            "SELECT evaluation_id, prompt_version, lane, COUNT(*), SUM(passed) FROM results "
            f"WHERE {counted()} {of} GROUP BY evaluation_id, prompt_version, lane",
            args,
        )
        self.skip_bad(of, args)
        for evaluation, version, lane, runs, passed in tallies:
            held = found.get(evaluation)
            if held is None:
                continue
            if version and version not in held.versions:
                held.versions.append(version)
            was = held.by_lane.get(lane, Tally())
            held.by_lane[lane] = Tally(was.runs + runs, was.passed + passed)
        return list(found.values())

    def skip_bad(self, of: str, args: tuple[Any, ...], columns: tuple[str, ...] = TALLIED) -> None:
        """The results left out of the counts (``history_rows.counted``), said (the first few)."""
        bad = self.read(
            f"SELECT id, evaluation_id FROM results WHERE NOT {counted(columns=columns)} {of} "
            "LIMIT 10",
            args,
        )
        for (number, _), line in zip(bad, bad_results(bad), strict=True):
            self.skip(f"result {number}", line)

    def evaluation(self, evaluation: int, tallied: bool = True) -> EvaluationRow:
        rows = self.evaluations(evaluation, tallied)
        if not rows:
            raise HistoryError(f"no evaluation {evaluation} in {self.path}")
        return rows[0]

    def verdicts(self, evaluation: int) -> dict[RunKeyTuple, bool]:
        """Each run's pass or fail: all a diff reads (from the ``results_diff`` index)."""
        rows = self.read(
            "SELECT lane, case_no, repeat, passed FROM results WHERE evaluation_id = ? "
            f"AND {counted(columns=VERDICTS)}",
            (evaluation,),
        )
        self.skip_bad("AND evaluation_id = ?", (evaluation,), VERDICTS)
        return {(lane, case, repeat): bool(passed) for lane, case, repeat, passed in rows}

    def results(
        self, evaluation: int, keys: list[RunKeyTuple] | None = None, events: bool = False
    ) -> Iterator[EvalResult]:
        """Results as ``eval`` writes them (``events`` with their traces), by case."""
        query = select_results(events) + " WHERE r.evaluation_id = ?"
        if keys is None:
            rows = self.read(query + " ORDER BY r.case_no, r.repeat, r.id", (evaluation,))
        else:  # a few runs (a diff's flips, a trace): found by the index, never all read
            rows = []
            for start in range(0, len(keys), 300):
                chunk = keys[start : start + 300]
                values = ", ".join("(?, ?, ?)" for _ in chunk)
                flat = tuple(part for key in chunk for part in key)
                rows += self.read(
                    f"{query} AND (r.lane, r.case_no, r.repeat) IN (VALUES {values})",
                    (evaluation, *flat),
                )
        for row in rows:
            if (result := self._result(row, events)) is not None:
                yield result

    def _result(self, row: tuple[Any, ...], events: bool) -> EvalResult | None:
        try:
            return result_of(row, events)
        except HistoryError as err:
            self.skip(f"result {row[-1]}", err)
            return None

    def pages(
        self, evaluation: int, events: bool = False, size: int = 500
    ) -> Iterator[list[EvalResult]]:
        """Every result of an evaluation in the order first recorded (a run again keeps its
        place), ``size`` at a time: a page is read, used and dropped before the next, each its
        own short read (the evaluation thread may write between two)."""
        # "+": along the row ids from the last page's, not the evaluation's index (which
        # would sort the evaluation's rows again for every page).
        query = select_results(events) + " WHERE +r.evaluation_id = ? AND r.id > ?"
        query += " ORDER BY r.id LIMIT ?"
        last = 0
        while True:
            rows = self.read(query, (evaluation, last, size))
            if not rows:
                return
            last = rows[-1][-1]
            yield [r for row in rows if (r := self._result(row, events)) is not None]

    def trend(self) -> list[tuple[str, str, int, str, int, int]]:
        """(prompt version, model, evaluation, its start, runs, passed), oldest first."""
        rows = self.read(
            "SELECT r.prompt_version, r.model, r.evaluation_id, e.started, COUNT(*), "
            "SUM(r.passed) FROM results r JOIN evaluations e ON e.id = r.evaluation_id "
            f"WHERE {counted('r.')} AND typeof(e.started) = 'text' "
            "GROUP BY r.prompt_version, r.model, r.evaluation_id ORDER BY r.evaluation_id"
        )
        return [tuple(row) for row in rows]

    def runs(self, limit: int = 200) -> list[tuple[int, str, str, str, str, str | None]]:
        """The newest single runs: id, when, where, scenario, model, status (rows whose
        columns are what the app writes)."""
        texts = " AND ".join(f"typeof({c}) = 'text'" for c in _RUN_TEXTS.split(", "))
        return [
            tuple(row)
            for row in self.read(
                f"SELECT id, {_RUN_TEXTS}, status FROM runs WHERE {texts} AND "
                "typeof(status) IN ('text', 'null') ORDER BY id DESC LIMIT ?",
                (limit,),
            )
        ]
