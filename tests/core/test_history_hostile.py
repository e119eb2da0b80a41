"""The history database against what the app did not expect: several processes creating one
new file at once, and rows that are not what the app wrote (damaged by hand)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from sandbox_app.cli.main import main
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.history.history_schema import SCHEMA_VERSION, HistoryError
from sandbox_app.core.results.eval_result import EvalResult


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


def _two_evaluations(path: Path) -> None:
    store = HistoryStore(path)
    for title in ("first", "second"):
        evaluation = store.begin_evaluation(title, "", {"a": "m"}, 4, 1, "cli")
        for case in range(4):
            store.add_result(evaluation, result("a", case, case != 3), [], "m")
        store.finish_evaluation(evaluation)
    store.close()


def _damaged(path: Path, *statements: str) -> None:
    with sqlite3.connect(path) as db:
        for statement in statements:
            db.execute(statement)


def _history(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, list[str]]:
    code = main(["history", *argv])
    seen = capsys.readouterr()
    assert "Traceback" not in seen.err
    return code, seen.out, seen.err.splitlines()


# The rows of evaluation 1 a hand damaged, and what each command still shows.
DAMAGE = {
    "not json": ("UPDATE results SET checks = '{{' WHERE evaluation_id = 1 AND case_no = 0", 1),
    "text verdict": (
        "UPDATE results SET passed = 'yes' WHERE evaluation_id = 1 AND case_no = 0",
        1,
    ),
    "text case": ("UPDATE results SET case_no = 'x' WHERE evaluation_id = 1 AND case_no = 1", 2),
    "huge case": (
        "UPDATE results SET case_no = 123456789012345678901234 "
        "WHERE evaluation_id = 1 AND case_no = 2",
        3,
    ),
    "arm not json": ("UPDATE results SET arm = '[' WHERE evaluation_id = 1 AND case_no = 0", 1),
    "metrics a number": (
        "UPDATE results SET metrics = '12' WHERE evaluation_id = 1 AND case_no = 0",
        1,
    ),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_result_row_is_one_line_and_the_rest_is_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    path = tmp_path / "history.sqlite3"
    _two_evaluations(path)
    statement, row = DAMAGE[damage]
    _damaged(path, statement)
    db = ("--db", str(path))
    for argv in (("list",), ("show", "1"), ("diff", "1", "2"), ("show", "1", "--json")):
        code, out, err = _history(capsys, *argv, *db)
        assert code == 0, (argv, err)
        assert all(line.startswith("react-sandbox history: ") for line in err), err
        assert len(err) <= 1, err
        assert "second" in out or argv[0] != "list"
        if argv[0] == "list":  # the tallies count only good rows: never "2.0/4"
            assert ".0/" not in out
            assert "75% (3/4" in out
    code, out, err = _history(capsys, "show", "1", *db)
    assert len(err) == 1, err
    assert f"result {row}" in err[0]


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE evaluations SET lanes = 'not json' WHERE id = 1",
        "UPDATE evaluations SET lanes = '[1, 2]' WHERE id = 1",
        "UPDATE evaluations SET cases = 'twelve' WHERE id = 1",
        "UPDATE evaluations SET repeats = 123456789012345678901234 WHERE id = 1",
        "UPDATE evaluations SET started = x'00ff' WHERE id = 1",
    ],
)
def test_a_damaged_evaluation_row_is_one_line_and_the_others_are_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], statement: str
) -> None:
    path = tmp_path / "history.sqlite3"
    _two_evaluations(path)
    _damaged(path, statement)
    db = ("--db", str(path))
    code, out, err = _history(capsys, "list", *db)
    assert code == 0
    assert len(err) == 1, err
    assert "evaluation 1" in err[0]
    assert "#2" in out
    assert "#1" not in out
    for argv in (("show", "1"), ("diff", "1", "2")):
        code, out, err = _history(capsys, *argv, *db)
        assert code == 1
        assert out == ""
        assert any("evaluation 1" in line for line in err), err


def test_an_id_beyond_sqlites_integers_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "history.sqlite3"
    _two_evaluations(path)
    for argv in (("show", "1" * 24), ("diff", "1", "9" * 24), ("baseline", "-3")):
        with pytest.raises(SystemExit) as exit_:
            main(["history", *argv, "--db", str(path)])
        err = capsys.readouterr().err
        assert exit_.value.code == 2
        assert "Traceback" not in err
        assert err.splitlines()[-1].endswith(f"no evaluation has the number {argv[-1]}")
    store = HistoryStore(path)
    with pytest.raises(HistoryError, match="beyond SQLite's integers"):
        store.evaluation(10**24)
