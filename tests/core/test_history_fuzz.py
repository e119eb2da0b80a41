"""The history database read back after rows that are not what the app wrote were added to it
(by another program, a hand with ``sqlite3``, a damaged disk): every column of a new row in
any table of the wrong type, text that is not UTF-8, a 24-digit or negative id, JSON that is
not JSON, nested 10,000 deep or of the wrong shape (tests/hostile_input.py), a 10 MB string,
a trace that unpacks to 100 MB; new results in the app's own evaluations too.

What the app stored is still read back, field for field, and ``history list``, ``show`` and
``diff`` (in process) print it, saying each bad row in one line, never a traceback; what they
print can be written anywhere (no lone surrogate).
"""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sandbox_app.cli.main import main
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.results.eval_result import EvalResult
from tests.hostile_input import ID_24, hostile_json

TABLES = ("evaluations", "results", "traces", "runs")
TALLIED = ("runs", "passed", "prompt_versions")  # a new result in a stored evaluation counts
_BOMB = zlib.compress(b"[" * 100_000_000, 9)  # 100 MB of brackets, ~100 KB packed
# Column values as SQL literals: what a row of the wrong kind holds.
LITERALS = [
    "NULL",
    "0",
    "-1",
    "1",
    "2",
    "9223372036854775807",
    str(ID_24),
    "-" + str(ID_24),
    "1e308",
    "0.5",
    "''",
    "'not json'",
    "'{{'",
    "'[1, 2]'",
    "'{}'",
    "'[\"\\ud800\"]'",
    "'\x1b[2J\x1b]0;pwned\x07'",
    "x'00ff'",
    "x'eda080'",
    "CAST(x'eda080' AS TEXT)",  # a lone surrogate as UTF-8 would spell it: not UTF-8
    "CAST(x'ff0a41' AS TEXT)",
    "replace(hex(zeroblob(5000000)), '00', 'xy')",  # 10 MB of text
    "'" + "[" * 10_000 + "]" * 10_000 + "'",
    "x'" + zlib.compress(b'["\\ud800", {"a": NaN}]').hex() + "'",
    "x'" + zlib.compress(b"\xff\xfe").hex() + "'",
    "x'" + zlib.compress(b"[" * 10_000).hex() + "'",
    "x'" + _BOMB.hex() + "'",
]


def _result(lane: str, case: int, passed: bool) -> EvalResult:
    return EvalResult.from_dict(
        {
            "lane": lane,
            "case": case,
            "repeat": 0,
            "passed": passed,
            "prompt_version": "v1",
            "question": f"question {case + 1}",
            "answer": "yes" if passed else "no",
            "checks": [{"name": "answer", "passed": passed, "detail": "exact"}],
            "metrics": {"steps": [{}], "tool_calls": 1, "tokens_in": 10, "wall_s": 0.5},
        }
    )


@pytest.fixture(scope="module")
def stored() -> Iterator[Path]:
    """A history file as the app writes it: two evaluations of 3 runs each, a single run."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "history.sqlite3"
        store = HistoryStore(path)
        for title in ("first", "second"):
            evaluation = store.begin_evaluation(title, "", {"a": "m"}, 3, 1, "cli")
            for case in range(3):
                events = [{"type": "answer", "text": f"case {case}"}]
                store.add_result(evaluation, _result("a", case, case != 2), events, "m")
            store.finish_evaluation(evaluation)
        store.add_run("run", "single", {"settings": {"model": "m"}, "status": "answered"}, True)
        store.close()
        yield path


def _read_back(path: Path) -> dict[str, Any]:
    """What the app stored, as the app reads it back."""
    store = HistoryStore(path)
    try:
        rows = {row.id: row for row in store.evaluations()}
        return {
            "evaluations": {
                n: {k: v for k, v in rows[n].to_dict().items() if k not in TALLIED}
                for n in (1, 2)
                if n in rows
            },
            "results": {n: [r.to_dict() for r in store.results(n, events=True)] for n in (1, 2)},
            "runs": [row for row in store.runs() if row[0] == 1],
        }
    finally:
        store.close()


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return f"x'{value.hex()}'"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


@st.composite
def hostile_rows(draw: st.DrawFn, path: Path) -> list[str]:
    """INSERT statements for one to three rows: each column the app's own value of a stored
    row, a wrong literal, or (a JSON column) its JSON damaged."""
    statements = []
    with sqlite3.connect(path) as db:
        for _ in range(draw(st.integers(1, 3), label="rows")):
            table = draw(st.sampled_from(TABLES), label="table")
            cursor = db.execute(f"SELECT * FROM {table} LIMIT 1")
            names = [d[0] for d in cursor.description]
            valid = cursor.fetchone()
            values = []
            for name, value in zip(names, valid, strict=True):
                how = draw(st.sampled_from(["own", "wrong", "json"]), label=name)
                parsed = _json(value)
                if name == "id" and how == "own":
                    values.append("NULL")  # a new row, not the stored one
                elif how == "json" and parsed is not None:
                    values.append(_literal(draw(hostile_json(parsed), label=f"{name} json")))
                elif how == "wrong":
                    values.append(draw(st.sampled_from(LITERALS), label=f"{name} literal"))
                else:
                    values.append(_literal(value))
            statements.append(
                f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join(values)})"
            )
    return statements


def _json(value: Any) -> Any:
    if isinstance(value, bytes):
        try:
            value = zlib.decompress(value).decode()
        except (zlib.error, UnicodeDecodeError):
            return None
    if not isinstance(value, str):
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    return parsed if isinstance(parsed, list | dict) else None


def _history(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["history", *argv])
    return code, out.getvalue(), err.getvalue()


def _added(path: Path, statements: list[str]) -> None:
    # Literals may hold a lone surrogate (JSON damaged): as SQLite text it is not UTF-8.
    with sqlite3.connect(path) as db:
        for statement in statements:
            try:
                db.execute(statement.encode("utf-8", "surrogatepass").decode("utf-8", "replace"))
            except sqlite3.Error:  # a type SQLite itself refuses (an id that is not an integer)
                continue


# Each example copies a file, adds rows and runs the CLI four times: an eighth of the
# profile's examples (25 a run, about 3 s; 1,250 under ci-deep).
@settings(max_examples=max(10, settings.default.max_examples // 8))
@given(data=st.data())
@example(data=None).via("a title that is not UTF-8: every read failed, nothing listed")
def test_stored_rows_are_read_back_after_hostile_rows_were_added(
    stored: Path, data: st.DataObject | None
) -> None:
    before = _read_back(stored)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "history.sqlite3"
        shutil.copyfile(stored, path)
        if data is None:
            statements = [
                "INSERT INTO evaluations (started, scenario_title, lanes, cases, repeats, source)"
                " VALUES ('2026', CAST(x'eda080' AS TEXT), '[]', 1, 1, 'cli')"
            ]
        else:
            statements = data.draw(hostile_rows(path), label="rows")
        _added(path, statements)
        after = _read_back(path)
        assert (after["evaluations"], after["runs"]) == (before["evaluations"], before["runs"])
        for evaluation, results in before["results"].items():  # new ones may be among them
            assert all(result in after["results"][evaluation] for result in results)
        db = ("--db", str(path))
        for argv in (("list",), ("show", "1"), ("show", "2", "--json"), ("diff", "1", "2")):
            code, out, err = _history(*argv, *db)
            assert code == 0, (argv, err)
            assert "Traceback" not in err
            lines = err.splitlines()
            assert all(line.startswith("react-sandbox history: ") for line in lines), err
            out.encode("utf-8")
            err.encode("utf-8")
            if argv[0] == "list":
                assert ("#1" in out, "#2" in out) == (True, True), out[:300]
        (last,) = sqlite3.connect(path).execute("SELECT max(id) FROM evaluations").fetchone()
        if isinstance(last, int) and last > 2:  # a hostile evaluation: shown, or one line
            code, out, err = _history("show", str(last), *db)
            assert "Traceback" not in err
            out.encode("utf-8")
