"""``eval --shard I/N`` and ``eval --merge``: the shipped test set run in three shards (one
killed mid-way and run again) and merged is the same evaluation as the test set run whole —
the same runs, the same verdicts, the same history and the same JUnit file."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sqlite3
import xml.etree.ElementTree as ET
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.cli.evaluating.eval_command import eval_command, parser
from sandbox_app.cli.evaluating.eval_shards import run_shard, shard_argv
from sandbox_app.core.comparing.evaluations import diff_evaluations
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.results.evaluation import iter_plan, read_results
from sandbox_app.core.results.result_stream import split_line
from sandbox_app.core.results.shards import Shard, ShardPlan, case_ids, shard_of
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir
from sandbox_app.core.untrusted.file_reader import ReadError
from tests.model_server import ModelScript, ModelServer

EXAMPLE = scenarios_dir() / "test_set.json"
# Two arms and two repeats of the shipped test set: 48 runs.
FLAGS = ["--lane", "scripted", "--lane", "scripted,tool_calling=native", "--repeat", "2"]


def evaluate(*args: str, progress: io.StringIO | None = None) -> int:
    """eval of the shipped test set; its progress and notices to ``progress``."""
    return eval_command([str(EXAMPLE), *FLAGS, *args], io.StringIO(), progress or io.StringIO())


def same(value: Any) -> Any:
    """A result's document without what a second run measures differently (its times)."""
    if isinstance(value, dict):
        return {k: same(v) for k, v in value.items()}
    if isinstance(value, list):
        return [same(v) for v in value]
    return None if isinstance(value, float) else value


def junit_cases(path: Path) -> dict[str, Any]:
    """Each suite's counts and each test case's verdict, times left out."""
    suites = {}
    for suite in ET.parse(path).getroot().iter("testsuite"):
        counts = {k: v for k, v in suite.attrib.items() if k not in ("time", "timestamp")}
        cases = sorted(
            (case.get("name"), [(child.tag, child.get("message"), child.text) for child in case])
            for case in suite.iter("testcase")
        )
        suites[suite.get("name")] = (counts, cases)
    return suites


def test_shards_merged_are_the_unsharded_evaluation_run_for_run(tmp_path: Path) -> None:
    db = str(tmp_path / "history.db")
    whole = tmp_path / "whole.jsonl"
    assert evaluate("--out", str(whole), "--db", db, "--junit", str(tmp_path / "whole.xml")) == 0
    shards = [tmp_path / f"shard{i}.jsonl" for i in (1, 2, 3)]
    for number, path in enumerate(shards, 1):
        assert evaluate("--shard", f"{number}/3", "--out", str(path), "--db", db) == 0
    sizes = [len(read_results(path)) for path in shards]
    assert sum(sizes) == 48
    assert all(sizes)
    # Shard 2 killed mid-way: half its lines and one cut short, as a kill leaves it.
    lines = shards[1].read_bytes().splitlines(keepends=True)
    killed = b"".join(lines[: len(lines) // 2]) + lines[len(lines) // 2][:200]
    shards[1].write_bytes(killed)
    shutil.copy(shards[1], tmp_path / "killed.jsonl")
    # Run again, it replaces its file (never doubles a run) …
    assert evaluate("--shard", "2/3", "--out", str(shards[1])) == 0
    assert len(shards[1].read_bytes().splitlines()) == sizes[1]
    # … and a merge given the killed file too keeps the later file's result of each run.
    files = [str(shards[0]), str(tmp_path / "killed.jsonl"), str(shards[1]), str(shards[2])]
    merged = tmp_path / "merged.jsonl"
    junit = tmp_path / "merged.xml"
    assert evaluate("--merge", *files, "--out", str(merged), "--db", db, "--junit", str(junit)) == 0

    ours, theirs = read_results(whole), read_results(merged)
    assert len(theirs) == 48 == len({r.key for r in theirs})
    by_key = {r.key: same(r.to_dict()) for r in ours}
    assert {r.key: same(r.to_dict()) for r in theirs} == by_key  # results and verdicts
    assert junit_cases(junit) == junit_cases(tmp_path / "whole.xml")
    # The history holds two evaluations (the shards wrote none), equal run for run.
    store = HistoryStore(Path(db))
    try:
        first, second = store.evaluations()[-2:]
        assert {first.id, second.id} == {1, 2}
        assert store.verdicts(1) == store.verdicts(2)
        stored = [  # each run's row and trace, as the history gives them back
            {r.key: same(r.to_dict()) for r in store.results(e, events=True)} for e in (1, 2)
        ]
        assert stored[0] == stored[1] == by_key
        assert (first.lanes, first.cases, first.repeats) == (
            second.lanes,
            second.cases,
            second.repeats,
        )
        assert {lane: (t.runs, t.passed) for lane, t in first.by_lane.items()} == {
            lane: (t.runs, t.passed) for lane, t in second.by_lane.items()
        }
        diff = diff_evaluations(store, 1, 2)
        assert diff.comparisons
        assert not diff.only_first
        assert not diff.only_second
        assert all(c.verdict.better_cases == c.verdict.worse_cases == 0 for c in diff.comparisons)
    finally:
        store.close()


def test_a_merge_missing_runs_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    one = tmp_path / "one.jsonl"
    assert evaluate("--shard", "1/2", "--out", str(one)) == 0
    merged = tmp_path / "merged.jsonl"
    err = io.StringIO()
    assert evaluate("--merge", str(one), "--out", str(merged), progress=err) == 1
    assert "are in none of the 1 file" in err.getvalue()
    assert not merged.exists()
    assert not list(tmp_path.glob(".merging-*"))


def test_a_run_keeps_its_shard_when_the_cases_are_reordered() -> None:
    cases = load_scenario(EXAMPLE).test_set
    ids, turned = case_ids(cases), case_ids(tuple(reversed(cases)))
    assert turned == tuple(reversed(ids))
    plan = iter_plan(["a", "b"], len(cases), 3)
    for number in range(4):
        shard = Shard(number, 4)
        before = {(k.lane, ids[k.case], k.repeat) for k in ShardPlan(plan, shard, ids)}
        after = {(k.lane, turned[k.case], k.repeat) for k in ShardPlan(plan, shard, turned)}
        assert before == after
    # The slices cover the plan once, and are about even (sha256 spreads them).
    counts = [
        len(ShardPlan(iter_plan(["a"], 1000, 1), Shard(i, 4), case_ids(many()))) for i in range(4)
    ]
    assert sum(counts) == 1000
    assert min(counts) > 200
    assert shard_of("a", ids[0], 0, 7) == shard_of("a", ids[0], 0, 7)


def many() -> tuple[Any, ...]:
    case = load_scenario(EXAMPLE).test_set[0]
    return tuple(replace(case, question=f"{case.question} #{i}") for i in range(1000))


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "x", "1/2/3", "2"])
def test_a_bad_shard_is_one_line(text: str) -> None:
    with pytest.raises(ValueError, match="--shard must be I/N"):
        Shard.parse(text)


# What a history row holds, but its ids, its model (the lane's, not the line's) and its time.
COLUMNS = (
    "r.lane, r.case_no, r.repeat, r.prompt_version, r.passed, r.status, r.question, "
    "r.expected, r.answer, r.checks, r.metrics, r.arm, r.reason, r.judge, t.events"
)


def stored_rows(db: Path, evaluation: int) -> list[tuple[Any, ...]]:
    """An evaluation's rows as the file holds them, each trace unpacked (its bytes)."""
    with contextlib.closing(sqlite3.connect(db)) as connection:
        rows = connection.execute(
            f"SELECT {COLUMNS} FROM results r JOIN traces t ON t.result_id = r.id "
            "WHERE r.evaluation_id = ? ORDER BY r.lane, r.case_no, r.repeat",
            (evaluation,),
        ).fetchall()
    return [(*row[:-1], zlib.decompress(row[-1])) for row in rows]


def test_a_merge_stores_each_run_as_storing_it_alone_would(tmp_path: Path) -> None:
    """The merge takes a row's metrics and trace as its line holds them, and reads the rest:
    the history gets the very rows (byte for byte) that storing each result of the merged
    file on its own writes; a line whose metrics nest the keys the merge cuts at is read
    whole, and one that is no result is left out (its run made again, as a resume would)."""
    shards = [tmp_path / f"shard{i}.jsonl" for i in (1, 2)]
    for number, path in enumerate(shards, 1):
        assert evaluate("--shard", f"{number}/2", "--out", str(path)) == 0
    lines = shards[0].read_bytes().splitlines()
    trapped = json.loads(lines[0])
    trapped["metrics"]["x"] = {"a": "→ ]}", "metrics": {"steps": []}, "events": [7]}
    lines[0] = json.dumps(trapped, ensure_ascii=False).encode()
    refused = json.loads(lines[1])
    refused["metrics"]["tool_calls"] = "two"
    lines[1] = json.dumps(refused, ensure_ascii=False).encode()
    shards[0].write_bytes(b"\n".join(lines) + b"\n")
    merged, db = tmp_path / "merged.jsonl", tmp_path / "history.db"
    err = io.StringIO()
    evaluate("--merge", *map(str, shards), "--out", str(merged), "--db", str(db), progress=err)
    assert "1 damaged line" in err.getvalue()
    kept = merged.read_bytes().splitlines()
    assert len(kept) == 48
    assert b'"two"' not in merged.read_bytes()
    store = HistoryStore(db)
    try:
        alone = store.begin_evaluation("alone", "", {}, 12, 2, "test")
        for number, line in enumerate(kept, 1):
            result = EvalResult.from_json(line, f"line {number}")
            store.add_result(alone, replace(result, events=None), result.events or (), "")
    finally:
        store.close()
    ours, theirs = stored_rows(db, 1), stored_rows(db, alone)
    assert len(ours) == 48
    assert ours == theirs
    first = next(
        row
        for row in ours
        if (row[0], row[1], row[2]) == (trapped["lane"], trapped["case"], trapped["repeat"])
    )
    assert json.loads(first[10])["x"]["events"] == [7]  # read whole: its own metrics
    assert split_line(kept[-1], "line 48").metrics is not None  # a line as eval writes it: cut
    assert json.loads(first[-1]) == trapped["events"]


@pytest.mark.parametrize(
    "change",
    [
        {"passed": "yes"},
        {"metrics": {"tool_calls": "two"}},
        {"metrics": [1]},
        {"case": -1},
        {"checks": {"name": "answer"}},
    ],
)
def test_a_shard_line_that_is_no_result_is_refused_by_the_merge(
    tmp_path: Path, change: dict[str, Any]
) -> None:
    """A shard file may come from another machine: a line the merge cuts is still read by
    the one reader and EvalResult's checks, whatever it holds."""
    sample = tmp_path / "sample.jsonl"
    assert evaluate("--shard", "1/9", "--out", str(sample)) == 0
    line = json.loads(sample.read_bytes().splitlines()[0])
    for key, value in change.items():
        if isinstance(value, dict) and isinstance(line.get(key), dict):
            line[key].update(value)
        else:
            line[key] = value
    with pytest.raises(ReadError, match="line 1"):
        split_line(json.dumps(line, ensure_ascii=False).encode(), "shard.jsonl line 1")


def test_a_shard_on_a_worker_answers_from_the_cache_the_evaluation_names(
    tmp_path: Path, fake_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What `eval --ray --cache DIR` hands each Ray task (shard_argv), run here as a worker
    # runs it (run_shard: its own folder, eval in-process); the cache named relative to where
    # `eval` was started.
    replies = list(load_scenario(EXAMPLE).test_set[0].replies)
    fake_server.set_model("m", ModelScript(replies=replies))
    scenario = load_scenario(EXAMPLE)
    path = tmp_path / "one.json"
    save_scenario(scenario.with_changes(test_set=scenario.test_set[:1]), path)
    monkeypatch.chdir(tmp_path)
    args = parser().parse_args([str(path), "--lane", f"{fake_server.base_url}:m", "--cache"])
    argv = shard_argv(args)
    scenario_file = (path.name, path.read_bytes())
    first = run_shard(eval_command, scenario_file, None, argv, "1/1")
    asked = fake_server.stats["completions"]
    assert first[0] == 0, first
    assert asked == len(replies)
    assert any((tmp_path / ".react-sandbox-cache").iterdir())  # kept where eval was started
    again = run_shard(eval_command, scenario_file, None, argv, "1/1")
    assert again[0] == 0, again
    assert fake_server.stats["completions"] == asked  # every request answered from the cache
    assert answers(again[1]) == answers(first[1])


def answers(data: bytes) -> list[tuple[str, bool]]:
    """A shard's results' answers and verdicts."""
    return [
        (r.answer or "", r.passed)
        for r in map(EvalResult.from_dict, map(json.loads, data.splitlines()))
    ]


def test_a_worker_that_cannot_use_the_cache_says_so_with_its_shards_end(tmp_path: Path) -> None:
    taken = tmp_path / "a file, not a folder"
    taken.write_text("")
    args = parser().parse_args([str(EXAMPLE), "--lane", "scripted", "--cache", str(taken)])
    code, data, last = run_shard(
        eval_command, (EXAMPLE.name, EXAMPLE.read_bytes()), None, shard_argv(args), "1/4"
    )
    assert code == 0
    assert data
    assert "--cache" in last, last
    assert "running without the cache" in last
