"""Run records keep a run's events in bounded memory; exports read them (exports.py)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from sandbox_app.core.results.compare import COLUMNS, LaneRecord
from sandbox_app.core.results.exports import (
    COMPARE_FORMATS,
    export_comparison,
    run_document,
    to_csv,
    to_markdown,
    trace_text,
)
from sandbox_app.core.running import records
from sandbox_app.core.running.events import Observation, RunFinished, StepStarted, TokenDelta
from sandbox_app.core.running.metrics import RunMetrics
from sandbox_app.core.running.records import RunHistory, RunRecord, RunSettings
from sandbox_app.core.scenarios.scenario import Expected
from tests.helpers import builtin, run_events, scripted


def test_a_frames_tokens_are_kept_as_one_event_per_step() -> None:
    observation = Observation(1, "calculator", "4", False, "Observation: 4")
    record = RunRecord()
    record.add([TokenDelta(1, "Action: "), TokenDelta(1, "calc[2+2]"), observation])
    record.add([TokenDelta(2, "Answer"), TokenDelta(2, ": 4")])
    assert record.events == [
        TokenDelta(1, "Action: calc[2+2]"),
        observation,
        TokenDelta(2, "Answer: 4"),
    ]


def test_a_step_stays_one_event_when_the_record_is_read_mid_step() -> None:
    record = RunRecord()
    record.add([TokenDelta(1, "Thought: ")])
    assert record.events == [TokenDelta(1, "Thought: ")]  # a lane redrawn while streaming
    record.add([TokenDelta(1, "more"), TokenDelta(2, "Answer: 4")])
    assert record.events == [TokenDelta(1, "Thought: more"), TokenDelta(2, "Answer: 4")]


def test_a_record_keeps_at_most_its_budget_of_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(records, "MAX_RECORD_CHARS", 10)
    record = RunRecord()
    record.add([TokenDelta(1, "0123456"), TokenDelta(1, "789abcdef")])
    assert record.events == [TokenDelta(1, "0123456789")]
    assert record.chars_not_kept == 6
    assert run_document(record)["chars_not_kept"] == 6


def test_a_history_keeps_the_last_runs_only() -> None:
    history = RunHistory(limit=3)
    for i in range(5):
        history.start(RunSettings(model=f"m{i}")).add(
            [RunFinished("answered", "", str(i), RunMetrics())]
        )
    assert [r.settings.model for r in history] == ["m2", "m3", "m4"]
    assert [f.answer for f in history.finished] == ["2", "3", "4"]


def test_the_trace_text_of_a_real_run_reads_like_the_cli() -> None:
    scenario = builtin("brightgrid")
    record = RunRecord()
    record.add(run_events(scenario, scripted(scenario)))
    text = trace_text(record)
    assert text.startswith("── Step 1 ──\nThought:")
    assert "Observation: 1680\n── Step 3 ──\n" in text
    assert "\nFinal answer: $1,680 per year\n" in text
    assert text.endswith("s\n")  # the metrics line closes it


def test_copy_trace_judges_the_answer_as_the_cli_does() -> None:
    scenario = builtin("brightgrid")
    record = RunRecord()
    record.add(run_events(scenario, scripted(scenario)))
    record.scenario = scenario  # as the window's pane keeps it
    text = trace_text(record)
    assert "\nFinal answer: $1,680 per year\n✔ Correct · answered in 3 steps\n" in text


def test_a_run_document_holds_outcome_settings_and_events_never_a_key() -> None:
    record = RunRecord(RunSettings(backend="custom", base_url="http://127.0.0.1:1/v1", model="m"))
    record.add(
        [StepStarted(1), TokenDelta(1, "Answer: 4"), RunFinished("answered", "", "4", RunMetrics())]
    )
    document = run_document(record)
    assert (document["status"], document["answer"]) == ("answered", "4")
    assert document["settings"]["model"] == "m"
    assert [e["type"] for e in document["events"]] == ["StepStarted", "TokenDelta", "RunFinished"]
    assert "key" not in json.dumps(document).lower()


def lane(name: str, model: str, answer: str) -> LaneRecord:
    record = LaneRecord(name, model)
    record.history.start().add(
        [TokenDelta(1, f"Answer: {answer}"), RunFinished("answered", "", answer, RunMetrics())]
    )
    return record


def test_comparison_exports_say_what_the_table_says() -> None:
    lanes = [lane("Lane 1", "m|1", "$1,680"), lane("Lane 2", "m2", "$1,260")]
    rows = [record.summary(Expected("$1,680"), None) for record in lanes]
    markdown = to_markdown(rows)
    assert markdown.splitlines()[0] == "| " + " | ".join(COLUMNS) + " |"
    assert "m\\|1" in markdown  # a pipe in a model name does not break the table
    assert list(csv.DictReader(io.StringIO(to_csv(rows)))) == rows
    document = json.loads(export_comparison("json", "T", "Q", lanes, rows))
    assert [lane["summary"]["Correct"] for lane in document["lanes"]] == ["yes", "no"]
    assert document["lanes"][1]["runs"][0]["events"][0] == {
        "type": "TokenDelta",
        "step": 1,
        "text": "Answer: $1,260",
    }
    assert set(COMPARE_FORMATS) == {"md", "csv", "json"}


def test_an_unknown_export_format_is_an_error_not_json() -> None:
    with pytest.raises(ValueError, match="unknown export format 'xlsx'; choose md, csv, json"):
        export_comparison("xlsx", "T", "Q", [], [])
