"""The history database's file: where it lives, its schema and the steps that build it.

The schema is versioned by ``PRAGMA user_version`` and brought up to date when a file is
opened, by :data:`MIGRATIONS`: one function per step, each with its new version number in
one transaction (a kill between steps leaves a whole version). A file from a newer app is
refused in one line rather than changed. No Qt here.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
import zlib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

DATA_ENV = "REACT_SANDBOX_DATA"  # a folder for the app's data instead of the platform's
FILE_NAME = "history.sqlite3"
LOCK_WAIT_S = 2.0  # another writer's transaction is milliseconds; a lock held longer is one


class HistoryError(Exception):
    """The history cannot be read or written, in one line."""


def data_dir() -> Path:
    """``$REACT_SANDBOX_DATA``, else where the window keeps its data (Qt's AppDataLocation
    for organisation and application "ReAct Sandbox"), so the CLI and the window share it."""
    if os.environ.get(DATA_ENV):
        return Path(os.environ[DATA_ENV])
    app = Path("ReAct Sandbox") / "ReAct Sandbox"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming") / app
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / app
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / app


def default_path() -> Path:
    return data_dir() / FILE_NAME


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# ---- the schema, one step a function ---------------------------------------------------


def _v1_tables(db: sqlite3.Connection) -> None:
    db.execute(
        """CREATE TABLE evaluations (
            id INTEGER PRIMARY KEY, started TEXT NOT NULL, finished TEXT,
            scenario_title TEXT NOT NULL, scenario_path TEXT NOT NULL DEFAULT '',
            lanes TEXT NOT NULL, cases INTEGER NOT NULL, repeats INTEGER NOT NULL,
            source TEXT NOT NULL, results_file TEXT NOT NULL DEFAULT '')"""
    )
    db.execute(
        """CREATE TABLE results (
            id INTEGER PRIMARY KEY,
            evaluation_id INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
            lane TEXT NOT NULL, case_no INTEGER NOT NULL, repeat INTEGER NOT NULL,
            prompt_version TEXT NOT NULL DEFAULT '', model TEXT NOT NULL DEFAULT '',
            passed INTEGER NOT NULL, status TEXT, question TEXT, expected TEXT, answer TEXT,
            checks TEXT NOT NULL DEFAULT '[]', metrics TEXT, recorded TEXT NOT NULL,
            UNIQUE (evaluation_id, lane, case_no, repeat))"""
    )
    db.execute(
        """CREATE TABLE traces (
            result_id INTEGER PRIMARY KEY REFERENCES results(id) ON DELETE CASCADE,
            events BLOB NOT NULL)"""
    )
    db.execute(
        """CREATE TABLE runs (
            id INTEGER PRIMARY KEY, recorded TEXT NOT NULL, place TEXT NOT NULL,
            scenario_title TEXT NOT NULL, prompt_version TEXT NOT NULL DEFAULT '',
            backend TEXT NOT NULL DEFAULT '', model TEXT NOT NULL DEFAULT '',
            status TEXT, answer TEXT, passed INTEGER, document BLOB NOT NULL)"""
    )


def _v2_indexes(db: sqlite3.Connection) -> None:
    # What a diff reads (two evaluations' keys and verdicts) and what the list and the trend
    # group by: both answered from the index alone, never the rows.
    db.execute(
        "CREATE INDEX results_diff ON results (evaluation_id, lane, case_no, repeat, passed)"
    )
    db.execute(
        "CREATE INDEX results_trend ON results (evaluation_id, prompt_version, model, lane, passed)"
    )
    db.execute("CREATE INDEX runs_recorded ON runs (recorded)")


def _v3_arms(db: sqlite3.Connection) -> None:
    # The rest of a result's fields (core/results/eval_result.py): what made the run (its
    # ``Arm``, JSON), why it ended as it did, what its judge took (JSON). NULL in rows written
    # before, which have only their prompt version and model.
    for column in ("arm", "reason", "judge"):
        db.execute(f"ALTER TABLE results ADD COLUMN {column} TEXT")


def _v4_baselines(db: sqlite3.Connection) -> None:
    # The evaluation a scenario's later ones are compared with (History → Set as baseline,
    # `history baseline ID`, `eval --baseline`): at most one per scenario file, by the app.
    db.execute("ALTER TABLE evaluations ADD COLUMN baseline INTEGER NOT NULL DEFAULT 0")


def _v5_versions(db: sqlite3.Connection) -> None:
    # The Versions panel's runs per prompt version × model (core/comparing/version_runs.py),
    # single runs and evaluations' alike: a range of each index per version, never the rows.
    db.execute("CREATE INDEX results_versions ON results (prompt_version, model, passed)")
    db.execute("CREATE INDEX runs_versions ON runs (prompt_version, model, backend, passed)")


def _v6_optimizations(db: sqlite3.Connection) -> None:
    # `optimize` (core/optimizing/, application/optimizer.py): each optimization's settings
    # (what a resume finds it by), the evaluation its runs are stored in, and its outcome;
    # each reflection's reply and the candidate it made (or why it was refused), so that a
    # resumed optimization asks the models nothing already answered.
    db.execute(
        """CREATE TABLE optimizations (
            id INTEGER PRIMARY KEY, started TEXT NOT NULL, finished TEXT,
            scenario_title TEXT NOT NULL, scenario_path TEXT NOT NULL DEFAULT '',
            evaluation_id INTEGER REFERENCES evaluations(id) ON DELETE SET NULL,
            settings TEXT NOT NULL, outcome TEXT)"""
    )
    db.execute(
        """CREATE TABLE candidates (
            optimization_id INTEGER NOT NULL REFERENCES optimizations(id) ON DELETE CASCADE,
            number INTEGER NOT NULL, parent INTEGER NOT NULL, failures TEXT NOT NULL,
            reflection_model TEXT NOT NULL, reply TEXT NOT NULL,
            tokens_in INTEGER NOT NULL DEFAULT 0, tokens_out INTEGER NOT NULL DEFAULT 0,
            recorded TEXT NOT NULL, PRIMARY KEY (optimization_id, number))"""
    )
    db.execute("CREATE INDEX optimizations_place ON optimizations (scenario_path, finished)")


def _v7_grades(db: sqlite3.Connection) -> None:
    # Human grades (core/history/history_grades.py): a 👍/👎 and a note on one run, a single
    # run's (``runs``) or a test set's (``results``), at most one each (a new grade replaces
    # it); and blind pairwise choices between two lanes' answers to one case of an evaluation,
    # the choice said by lane (which side each was shown on kept beside it, with the seed).
    db.execute(
        """CREATE TABLE grades (
            id INTEGER PRIMARY KEY,
            run_id INTEGER UNIQUE REFERENCES runs(id) ON DELETE CASCADE,
            result_id INTEGER UNIQUE REFERENCES results(id) ON DELETE CASCADE,
            good INTEGER NOT NULL, note TEXT NOT NULL DEFAULT '', recorded TEXT NOT NULL,
            CHECK ((run_id IS NULL) != (result_id IS NULL)))"""
    )
    db.execute(
        """CREATE TABLE pairwise (
            id INTEGER PRIMARY KEY,
            evaluation_id INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
            case_no INTEGER NOT NULL, first TEXT NOT NULL, second TEXT NOT NULL,
            first_left INTEGER NOT NULL, seed INTEGER NOT NULL,
            choice TEXT NOT NULL CHECK (choice IN ('first', 'second', 'tie')),
            recorded TEXT NOT NULL, UNIQUE (evaluation_id, case_no, first, second))"""
    )


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    _v1_tables,
    _v2_indexes,
    _v3_arms,
    _v4_baselines,
    _v5_versions,
    _v6_optimizations,
    _v7_grades,
)
SCHEMA_VERSION = len(MIGRATIONS)


def use_wal(db: sqlite3.Connection) -> None:
    """Write-ahead logging (readers and the writer never wait for each other). Switching a new
    file to it needs the file alone, and SQLite answers "database is locked" at once, without
    waiting its busy timeout, while another opener holds it (four openers of one new file:
    one in six tries failed): asked again until :data:`LOCK_WAIT_S` has passed."""
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() > deadline:
                raise
        time.sleep(0.005)


def migrate(db: sqlite3.Connection) -> None:
    """Bring the file up to :data:`SCHEMA_VERSION`, a step at a time, each step and its new
    version number in one transaction (a kill between steps leaves a whole version).

    Safe when several processes open one new file at once (two ``eval``s started together):
    each step takes SQLite's write lock first (``BEGIN IMMEDIATE``, waiting ``LOCK_WAIT_S``
    for another opener's step) and reads ``user_version`` again inside it, so a step another
    opener has just made is never made twice."""
    while True:
        version = _version(db)  # outside a transaction: no lock taken for an up-to-date file
        if version == SCHEMA_VERSION:
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            version = _version(db)  # what it is now that this opener alone may write
            if version < SCHEMA_VERSION:
                MIGRATIONS[version](db)
                db.execute(f"PRAGMA user_version = {version + 1}")
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise


def _version(db: sqlite3.Connection) -> int:
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if not isinstance(version, int) or version < 0:
        raise HistoryError(f"not a history database (schema {version})")
    if version > SCHEMA_VERSION:
        raise HistoryError(
            f"made by a newer ReAct Sandbox (schema {version}; this one reads up to "
            f"{SCHEMA_VERSION})"
        )
    return version


def packed(data: Any) -> bytes:
    return packed_json(json.dumps(data, ensure_ascii=False).encode())


def packed_json(raw: bytes) -> bytes:
    """JSON already written (a results line's events, as :func:`packed` would write them)."""
    return zlib.compress(raw, 1)


def reason(err: BaseException) -> str:
    text = str(err) or type(err).__name__
    if isinstance(err, sqlite3.DatabaseError) and "not a database" in text:
        return "not a history database (damaged, or another kind of file)"
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    return " ".join(text.split())  # one line
