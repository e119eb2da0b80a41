"""The history database: evaluations and runs kept across restarts and kills, its schema's
migrations, a damaged or locked file said in one line while the runs go on, and
`react-sandbox history list|show|diff` (the runs that flipped between two evaluations)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from sandbox_app.application.history import History
from sandbox_app.cli.main import main
from sandbox_app.core.comparing.evaluations import diff_evaluations
from sandbox_app.core.history.history_arms import baselines, marked_baseline, set_baseline
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.history.history_schema import (
    DATA_ENV,
    MIGRATIONS,
    SCHEMA_VERSION,
    HistoryError,
)
from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.results.evaluation import read_results
from sandbox_app.core.scenarios.scenario import EvalCase, Expected
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir

EXAMPLE = scenarios_dir() / "test_set.json"


def result(lane: str, case: int, passed: bool, version: str = "v1") -> EvalResult:
    """A result as a results file of today's main holds one (schema 1: no arm)."""
    line = {
        "lane": lane,
        "case": case,
        "repeat": 0,
        "passed": passed,
        "prompt_version": version,
        "question": f"question {case + 1}",
        "answer": "yes" if passed else "no",
        "events": [{"type": "Notice", "text": f"case {case}"}],
    }
    return EvalResult.from_dict(line)


def cli(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(list(argv))
    seen = capsys.readouterr()
    return code, seen.out, seen.err


def test_history_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    store = HistoryStore(path)
    first = store.begin_evaluation("Suite", "/s.json", {"A": "m"}, 2, 1, "eval")
    for case in range(2):
        store.add_result(first, result("A", case, case == 0), [{"type": "Notice"}], "m")
    store.add_run("Run tab", "Suite", {"status": "answered", "answer": "42", "settings": {}}, True)
    store.close()
    again = HistoryStore(path)  # another process, tomorrow: the same file
    (row,) = again.evaluations()
    assert (row.id, row.scenario_title, row.runs, row.passed) == (first, "Suite", 2, 1)
    assert [r.answer for r in again.results(first)] == ["yes", "no"]
    assert [r[2] for r in again.runs()] == ["Run tab"]


def test_a_run_again_replaces_its_row(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    evaluation = store.begin_evaluation("Suite", "", {"A": "m"}, 1, 1, "window")
    store.add_result(evaluation, result("A", 0, False), [], "m")
    store.add_result(evaluation, result("A", 0, True), [], "m")  # Re-run failed
    assert store.verdicts(evaluation) == {("A", 0, 0): True}


def test_a_baseline_is_its_scenarios_and_untitled_ones_go_by_title(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    made = [
        store.begin_evaluation(title, path, {"A": "m"}, 1, 1, "window")
        for title, path in (("A", "/a.json"), ("A", "/a.json"), ("X", ""), ("Y", ""), ("X", ""))
    ]
    for evaluation in made:
        set_baseline(store, evaluation)
    # One a scenario: the newest marked of /a.json, of untitled "X" and of untitled "Y".
    assert sorted(baselines(store)) == [made[1], made[3], made[4]]
    assert marked_baseline(store, made[0]) == made[1]
    assert marked_baseline(store, made[2]) == made[4]
    assert marked_baseline(store, made[3]) is None  # itself: nothing to compare it with


def test_migrations_from_version_0_and_from_each_step(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite3"
    sqlite3.connect(empty).close()  # a file at user_version 0
    HistoryStore(empty).close()
    with sqlite3.connect(empty) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 6
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    # A file made by the first step only (an older app), with a result in it.
    old = tmp_path / "old.sqlite3"
    db = sqlite3.connect(old, isolation_level=None)
    MIGRATIONS[0](db)
    db.execute("PRAGMA user_version = 1")
    db.execute(
        "INSERT INTO evaluations (started, scenario_title, lanes, cases, repeats, source) "
        'VALUES (\'2026-01-01T00:00:00+00:00\', \'Old\', \'[{"label": "A", "model": "m"}]\', '
        "1, 1, 'eval')"
    )
    db.execute(
        "INSERT INTO results (evaluation_id, lane, case_no, repeat, passed, recorded) "
        "VALUES (1, 'A', 0, 0, 1, '2026-01-01')"
    )
    db.close()
    store = HistoryStore(old)
    assert store.verdicts(1) == {("A", 0, 0): True}
    store.close()
    with sqlite3.connect(old) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        indexes = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='index'")}
        assert {"results_diff", "results_trend"} <= indexes
        # The diff reads the index alone, never the rows.
        plan = db.execute(
            "EXPLAIN QUERY PLAN SELECT lane, case_no, repeat, passed FROM results "
            "WHERE evaluation_id = 1"
        ).fetchall()
        assert "COVERING INDEX results_diff" in " ".join(str(step[-1]) for step in plan)


def test_a_newer_or_damaged_file_is_one_line_and_left_as_it_is(tmp_path: Path) -> None:
    newer = tmp_path / "newer.sqlite3"
    with sqlite3.connect(newer) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(HistoryError, match="made by a newer ReAct Sandbox") as caught:
        HistoryStore(newer)
    assert "\n" not in str(caught.value)
    damaged = tmp_path / "damaged.sqlite3"
    damaged.write_bytes(b"not sqlite at all, " * 400)
    said: list[str] = []
    history = History(damaged, said.append)
    assert history.store is None
    assert len(said) == 1
    assert "\n" not in said[0]
    assert "not a history database" in said[0]
    assert "runs go on without it" in said[0]
    assert damaged.read_bytes() == b"not sqlite at all, " * 400


def _two_versions(tmp_path: Path) -> Path:
    """prompt_variants.json with four cases: "brief" guesses $2,160, "grounded" searches and
    answers $2,592. Case 1 flips fail → pass, case 3 pass → fail, 2 and 4 stay."""
    scenario = load_scenario(scenarios_dir() / "prompt_variants.json")
    cases = tuple(
        EvalCase(scenario.question, Expected(answer))
        for answer in ("2,592", "per year", "2,160", "€ nothing")
    )
    path = tmp_path / "versions.json"
    save_scenario(
        replace(scenario, test_set=cases, script=replace(scenario.script, tokens_per_second=0)),
        path,
    )
    return path


def test_diff_lists_exactly_the_runs_that_flipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario, db = _two_versions(tmp_path), str(tmp_path / "h.sqlite3")
    for version in ("brief", "grounded"):
        out = str(tmp_path / f"{version}.jsonl")
        code, _, err = cli(
            "eval",
            str(scenario),
            "--lane",
            "scripted",
            "--prompt",
            version,
            "--out",
            out,
            "--db",
            db,
            capsys=capsys,
        )
        assert code == 0, err
    code, listing, _ = cli("history", "list", "--db", db, capsys=capsys)
    assert code == 0
    lines = listing.splitlines()
    assert lines[0].startswith("#2 ")
    assert " · prompt grounded (" in lines[0]  # the version's name first, then its id
    assert "50% (2/4, 95% CI 15%–85%)" in lines[0]
    assert lines[1].startswith("#1 ")
    code, text, _ = cli("history", "diff", "1", "2", "--db", db, capsys=capsys)
    assert code == 0
    question = load_scenario(scenario).question
    lines = text.splitlines()
    # One arm a prompt version apart (the same offline model): compared case by case, named.
    assert lines[0] == "#1 → #2: 1 arm compared"
    assert lines[2] == "prompt brief → grounded, on scripted"
    assert lines[3].startswith("  no detectable difference between brief and grounded on scripted")
    assert lines[-3:] == [
        "  cases that changed, largest first:",
        f"    case 3: 1/1 → 0/1 (-100 points) {question}",
        f"    case 1: 0/1 → 1/1 (+100 points) {question}",
    ]
    code, document, _ = cli("history", "diff", "1", "2", "--db", db, "--json", capsys=capsys)
    (comparison,) = json.loads(document)["comparisons"]
    named = (comparison["factor"], comparison["a"], comparison["b"])
    assert named == ("prompt", "brief", "grounded")
    assert comparison["verdict"] == "no detectable difference"
    assert [(c["case"], c["was"], c["now"]) for c in comparison["cases"]] == [
        (3, "1/1", "0/1"),
        (1, "0/1", "1/1"),
    ]
    nowhere = tmp_path / "none.sqlite3"
    code, _, err = cli("history", "list", "--db", str(nowhere), capsys=capsys)
    assert (code, err.count("\n"), nowhere.exists()) == (0, 1, False)  # a look makes no file
    code, _, err = cli("history", "show", "7", "--db", db, capsys=capsys)
    assert code == 1
    assert err.count("\n") == 1
    assert "no evaluation 7" in err


def test_a_damaged_or_locked_database_is_one_line_and_the_evaluation_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damaged = tmp_path / "damaged.sqlite3"
    damaged.write_bytes(b"\x00garbage" * 512)
    locked = tmp_path / "locked.sqlite3"
    HistoryStore(locked).close()
    holder = sqlite3.connect(locked, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process in the middle of a write
    try:
        for number, db in enumerate((damaged, locked)):
            out = tmp_path / f"results{number}.jsonl"
            code, summary, err = cli(
                "eval", str(EXAMPLE), "--out", str(out), "--db", str(db), capsys=capsys
            )
            assert code == 0
            assert "scripted: 92% (11/12" in summary
            assert len(read_results(out)) == 12  # no run lost
            problems = [line for line in err.splitlines() if "history" in line]
            assert len(problems) == 1, err
            assert problems[0].startswith("react-sandbox eval: history off (")
            assert ("not a history database" if db is damaged else "locked") in problems[0]
            assert "Traceback" not in err
    finally:
        holder.close()


def test_a_killed_evaluation_leaves_whole_rows_and_resume_completes_it(tmp_path: Path) -> None:
    slow = load_scenario(EXAMPLE)
    slow = slow.with_changes(script=replace(slow.script, tokens_per_second=150.0))
    scenario = tmp_path / "slow.json"
    save_scenario(slow, scenario)
    results, db = tmp_path / "results.jsonl", tmp_path / "history.sqlite3"
    command = [sys.executable, "-m", "sandbox_app", "eval", str(scenario), "--out", str(results)]
    command += ["--db", str(db), "--concurrency", "1"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    # A progress line comes once its run's row is committed.
    progress = [process.stderr.readline() for _ in range(3)]
    assert all("scripted case" in line for line in progress), progress
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    process.stderr.close()
    with sqlite3.connect(db) as check:
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = check.execute("SELECT COUNT(*) FROM results").fetchone()[0]
        whole = check.execute(
            "SELECT COUNT(*) FROM results r JOIN traces t ON t.result_id = r.id "
            "WHERE r.answer IS NOT NULL AND r.metrics IS NOT NULL"
        ).fetchone()[0]
    assert 3 <= rows < 12
    assert whole == rows
    resumed = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    listing = subprocess.run(
        [sys.executable, "-m", "sandbox_app", "history", "show", "1", "--db", str(db), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, DATA_ENV: str(tmp_path / "elsewhere")},
    )
    shown = json.loads(listing.stdout)
    assert (shown["runs"], shown["passed"], shown["finished"] is not None) == (12, 11, True)
    store = HistoryStore(db)
    assert len(store.evaluations()) == 1  # the resumed run went on with the same evaluation
    (itself,) = diff_evaluations(store, 1, 1).comparisons  # one arm, every case in both
    assert (itself.factor, itself.verdict.cases, itself.changes) == ("", 12, [])
