"""The history database against what the app did not expect: several processes creating one
new file at once, and rows that are not what the app wrote (damaged by hand)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.results.history_db import HistoryStore
from sandbox_app.core.results.history_schema import SCHEMA_VERSION, HistoryError


def result(lane: str, case: int, passed: bool) -> EvalResult:
    line = {
        "lane": lane,
        "case": case,
        "repeat": 0,
        "passed": passed,
        "prompt_version": "v1",
        "question": f"question {case + 1}",
        "answer": "yes" if passed else "no",
    }
    return EvalResult.from_dict(line)


def _four_at_once(path: Path) -> list[str]:
    """Four openers of ``path`` started together, each storing an evaluation of 3 runs."""
    start = threading.Barrier(4)
    failures: list[str] = []

    def evaluate(worker: int) -> None:
        start.wait()
        try:
            store = HistoryStore(path)
            evaluation = store.begin_evaluation(f"worker {worker}", "", {"a": "m"}, 3, 1, "cli")
            for case in range(3):
                store.add_result(evaluation, result("a", case, True), [], "m")
            store.finish_evaluation(evaluation)
            store.close()
        except HistoryError as err:
            failures.append(str(err))

    workers = [threading.Thread(target=evaluate, args=(n,)) for n in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return failures


def test_openers_creating_one_new_file_at_once_all_store_everything(tmp_path: Path) -> None:
    for attempt in range(6):  # a race: several new files, four openers each
        path = tmp_path / f"history{attempt}.sqlite3"
        assert _four_at_once(path) == []
        store = HistoryStore(path)
        rows = store.evaluations()
        assert sorted(row.scenario_title for row in rows) == [f"worker {n}" for n in range(4)]
        assert [row.runs for row in rows] == [3, 3, 3, 3]
        assert store.read("PRAGMA user_version") == [(SCHEMA_VERSION,)]
        assert store.read("PRAGMA journal_mode") == [("wal",)]
        store.close()


def test_a_negative_schema_version_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = -1")
    with pytest.raises(HistoryError, match=r"not a history database \(schema -1\)$"):
        HistoryStore(path)
