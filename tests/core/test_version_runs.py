"""Each prompt version's runs per model, from the history database (issue 34, item 6): never
pooled over models; single runs (the window's, ``react-sandbox run``'s) and test-set results
alike; read along indexes, never a run's row."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sandbox_app.cli.main import main
from sandbox_app.core.comparing import version_runs as module
from sandbox_app.core.comparing.version_runs import VersionRuns, version_runs
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.history.history_schema import MIGRATIONS
from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.scenarios.scenario_file import load_scenario, scenarios_dir

EXAMPLE = scenarios_dir() / "prompt_variants.json"
GROUNDED, BRIEF = "dc401975" + "0" * 56, "31bfb942" + "0" * 56


def result(lane: str, case: int, passed: bool, version: str) -> EvalResult:
    return EvalResult.from_dict(
        {"lane": lane, "case": case, "repeat": 0, "passed": passed, "prompt_version": version}
    )


def offline_run(store: HistoryStore, version: str, passed: bool | None) -> None:
    settings = {"prompt_version": version, "backend": "scripted", "model": ""}
    store.add_run("Run tab", "Variants", {"status": "answered", "settings": settings}, passed)


def test_a_version_on_three_models_is_three_counts_never_one_pooled(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    offline_run(store, GROUNDED, True)
    offline_run(store, GROUNDED, True)
    offline_run(store, GROUNDED, None)  # no expected answer: a run, not a checked one
    evaluation = store.begin_evaluation(
        "Variants", "", {"A": "good-7b", "B": "sloppy-3b"}, 5, 1, "eval"
    )
    for lane, model in (("A", "good-7b"), ("B", "sloppy-3b")):
        for case in range(5):
            store.add_result(evaluation, result(lane, case, case != 2, GROUNDED), [], model)
    store.add_result(evaluation, result("A", 9, True, "another scenario's version"), [], "good-7b")
    assert version_runs(store, [GROUNDED, BRIEF]) == {
        GROUNDED: [
            VersionRuns(GROUNDED, "good-7b", 5, 5, 4),
            VersionRuns(GROUNDED, "sloppy-3b", 5, 5, 4),
            VersionRuns(GROUNDED, "scripted", 3, 2, 2),
        ]
    }


def test_the_counts_are_read_from_indexes_alone(tmp_path: Path) -> None:
    old = tmp_path / "step4.sqlite3"
    db = sqlite3.connect(old, isolation_level=None)
    for step in MIGRATIONS[:4]:
        step(db)
    db.execute("PRAGMA user_version = 4")  # a file of the app before this step
    db.close()
    HistoryStore(old).close()
    with sqlite3.connect(old) as db:
        for query in ("_RESULTS", "_RUNS"):
            sql = getattr(module, query).format(marks="?, ?")
            plan = " ".join(r[-1] for r in db.execute(f"EXPLAIN QUERY PLAN {sql}", ("a", "b")))
            assert "USING COVERING INDEX" in plan, plan
            assert "TEMP B-TREE" not in plan, plan  # counted in the index's order: no sort


def test_run_stores_its_run_with_its_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "h.sqlite3"
    assert main(["run", str(EXAMPLE), "--prompt", "brief", "--db", str(db)]) == 0
    assert main(["run", str(EXAMPLE), "--db", str(db)]) == 0  # the editor's words: grounded
    capsys.readouterr()
    history = load_scenario(EXAMPLE).prompt_history
    ids = {entry.name: entry.id for entry in history}
    store = HistoryStore(db)
    assert [(r[2], r[5]) for r in store.runs()] == [("react-sandbox run", "answered")] * 2
    counted = version_runs(store, ids.values())
    # brief guesses $2,160 (wrong), grounded looks the price up ($2,592): on the offline model.
    assert counted[ids["brief"]] == [VersionRuns(ids["brief"], "scripted", 1, 1, 0)]
    assert counted[ids["grounded"]] == [VersionRuns(ids["grounded"], "scripted", 1, 1, 1)]
