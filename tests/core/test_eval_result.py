"""A test-set run's result as typed data (core/results/eval_result.py): written and read back
the same through the results file and the history database, files written before it still
read, a damaged line one line naming where, and each result saying what made it."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest

from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.history.history_schema import MIGRATIONS
from sandbox_app.core.results.eval_result import RESULT_SCHEMA, Arm, EvalResult
from sandbox_app.core.results.evaluation import read_results, results_file
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir
from sandbox_app.core.untrusted.file_reader import ReadError

EXAMPLE = scenarios_dir() / "test_set.json"

# A line exactly as the results file of the app before typed results holds it (schema 1).
SCHEMA_1_LINE = (
    '{"lane": "scripted", "case": 2, "repeat": 1, "question": "What is 6 x 7?", '
    '"expected": "42", "prompt_version": "a9c0387f5e", "status": "answered", '
    '"answer": "41", "reason": "", "metrics": {"steps": [{"tokens_in": 9}, {"tokens_in": 3}], '
    '"wall_s": 0.5, "tool_calls": 1, "format_errors": 0, "tokens_in": 12, "tokens_out": 4}, '
    '"events": [{"type": "Notice", "text": "hi"}], '
    '"judge": {"tokens_in": 30, "tokens_out": 5, "cost": 0.25}, '
    '"checks": [{"name": "tool used: search", "passed": false, "detail": "never called"}], '
    '"passed": false}'
)


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> list[EvalResult]:
    """Two cases on two lanes of the offline model (text and native tool calls), as ``eval``
    writes them."""
    folder = tmp_path_factory.mktemp("eval")
    scenario = load_scenario(EXAMPLE)
    path = folder / "two.json"
    save_scenario(scenario.with_changes(test_set=scenario.test_set[:2]), path)
    out = folder / "results.jsonl"
    lanes = ["--lane", "scripted", "--lane", "scripted,tool_calling=native"]
    assert eval_command([str(path), *lanes, "--out", str(out)], io.StringIO()) == 0
    return read_results(out)


def test_a_result_written_and_read_back_is_the_same(evaluated: list[EvalResult]) -> None:
    for result in evaluated:
        line = json.dumps(result.to_dict(), ensure_ascii=False).encode()
        assert EvalResult.from_json(line, "results.jsonl line 1") == result
        assert json.loads(line)["schema"] == RESULT_SCHEMA


def test_a_result_stored_in_the_history_reads_back_the_same(
    evaluated: list[EvalResult], tmp_path: Path
) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    evaluation = store.begin_evaluation("T", "", {"scripted": "scripted"}, 2, 1, "eval")
    for result in evaluated:
        store.add_result(evaluation, result, result.events or (), "scripted")
    again = {r.key: r for r in store.results(evaluation, events=True)}
    assert again == {r.key: r for r in evaluated}
    store.close()


def test_each_result_says_what_made_its_lane(evaluated: list[EvalResult]) -> None:
    arms = {r.lane: r.arm for r in evaluated}
    text, native = arms["scripted"], arms["scripted (native tools)"]
    assert text.known
    assert (text.backend, text.model, text.server) == ("scripted", "", "")
    assert native.settings["tool_calling"] == "native" != text.settings["tool_calling"]
    assert text != native  # two lanes of one model told apart by what changes the request
    # Every case of a lane was made the same way: its runs pair by arm, case and repeat.
    assert {r.arm for r in evaluated if r.lane == "scripted"} == {text}
    # Its prompt version in full; native tool calls are told another prompt (another version).
    assert len(text.prompt_version) == 64
    assert native.prompt_version != text.prompt_version
    assert sorted((r.case, r.repeat) for r in evaluated if r.lane == "scripted") == [
        (0, 0),
        (1, 0),
    ]


def test_a_results_file_of_the_app_before_typed_results_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_text(SCHEMA_1_LINE + "\n", encoding="utf-8")
    (result,) = read_results(path)
    assert (result.key.lane, result.case, result.repeat, result.passed) == ("scripted", 2, 1, False)
    assert result.arm == Arm("a9c0387f5e")
    assert not result.arm.known
    assert (result.metrics.steps, result.metrics.tokens_in, result.metrics.wall_s) == (2, 12, 0.5)
    assert result.judge is not None
    assert result.judge.cost == 0.25
    assert [c.name for c in result.checks] == ["tool used: search"]
    # Written again, it keeps every field it had (and says its schema).
    rewritten = result.to_dict()
    assert {**json.loads(SCHEMA_1_LINE), "schema": RESULT_SCHEMA, "arm": None} == rewritten


def test_a_history_row_of_the_app_before_typed_results_still_reads(tmp_path: Path) -> None:
    old = tmp_path / "old.sqlite3"
    db = sqlite3.connect(old, isolation_level=None)
    for step in MIGRATIONS[:2]:  # the file as the app before typed results left it
        step(db)
    db.execute("PRAGMA user_version = 2")
    db.execute(
        "INSERT INTO evaluations (started, scenario_title, lanes, cases, repeats, source) "
        'VALUES (\'2026-01-01T00:00:00+00:00\', \'Old\', \'[{"label": "A", "model": "m"}]\', '
        "1, 1, 'eval')"
    )
    db.execute(
        "INSERT INTO results (evaluation_id, lane, case_no, repeat, prompt_version, model, "
        "passed, status, question, expected, answer, checks, metrics, recorded) VALUES "
        "(1, 'A', 0, 0, 'v1', 'qwen3:8b', 0, 'answered', 'Q?', '42', '41', "
        '\'[{"name": "judge", "passed": null, "detail": "unjudged"}]\', '
        "'{\"steps\": [{}], \"wall_s\": 1.5}', '2026-01-01')"
    )
    db.close()
    store = HistoryStore(old)
    (result,) = store.results(1)
    store.close()
    assert (result.lane, result.answer, result.expected, result.passed) == ("A", "41", "42", False)
    assert (result.prompt_version, result.arm.model, result.reason) == ("v1", "qwen3:8b", "")
    assert (result.metrics.steps, result.metrics.wall_s) == (1, 1.5)
    assert result.checks[0].passed is None
    assert result.to_dict()["arm"]["model"] == "qwen3:8b"  # `history show --json` still says it


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ('{"lane": "a", "case": 0, "repeat": 0, "passed": "no"}', '"result.passed" must be'),
        ('{"lane": "a", "case": 0, "repeat": 0}', '"result.passed" is missing'),
        ('{"lane": "a", "case": -1, "repeat": 0, "passed": true}', "must be at least 0"),
        (
            '{"lane": "a", "case": 0, "repeat": 0, "passed": true, "metrics": {"wall_s": "x"}}',
            '"result.metrics.wall_s" must be a number',
        ),
        (
            '{"lane": "a", "case": 0, "repeat": 0, "passed": true, "arm": {"temperature": 9}}',
            "result.arm.temperature",
        ),
        ('{"lane": "a", "case": 0, "repeat": 0, "passed": true, "schema": 9}', "newer"),
        ('{"lane": "a", "case": 0, "repeat": 0, "pass', "not valid JSON"),
    ],
)
def test_a_damaged_line_is_one_line_naming_where(line: str, said: str, tmp_path: Path) -> None:
    with pytest.raises(ReadError) as caught:
        EvalResult.from_json(line.encode(), "results.jsonl line 7")
    message = str(caught.value)
    assert message.startswith("results.jsonl line 7")
    assert said in message
    assert "\n" not in message
    path = tmp_path / "r.jsonl"  # in a file: skipped and counted, never the whole file lost
    path.write_text(SCHEMA_1_LINE + "\n" + line + "\n", encoding="utf-8")
    found = results_file(path)
    assert (len(found.results), found.damaged) == (1, 1)
