"""Expected-answer rules, lane summaries, repeat statistics, costs and exports."""

from __future__ import annotations

import csv
import io
import json

import pytest

from sandbox_app.core.compare import COLUMNS, LaneRecord, Price, to_csv, to_json, to_markdown
from sandbox_app.core.events import RunFinished
from sandbox_app.core.metrics import RunMetrics, StepMetrics
from sandbox_app.core.scenario import Expected
from sandbox_app.core.verdict import first_number, matches


@pytest.mark.parametrize(
    ("answer", "expected", "result"),
    [
        ("$1,680 per year", Expected("$1,680", "contains"), True),
        ("$1.680 per year", Expected("$1,680", "contains"), False),
        ("  668 ", Expected("668", "exact"), True),
        ("668.0", Expected("668", "exact"), False),
        ("The answer is 668.0", Expected("668", "number"), True),
        ("$1,680 per year", Expected("1680", "number"), True),
        ("about 1,679", Expected("1680", "number"), False),
        ("about 1,679", Expected("1680", "number", tolerance=1.0), True),
        ("no number here", Expected("1680", "number"), False),
        ("Refunds take 5 working days", Expected(r"\b5\s+(working\s+)?days", "regex"), True),
        ("Refunds take five days", Expected(r"\b5\s+days", "regex"), False),
        ("anything", Expected("([unclosed", "regex"), False),
        (None, Expected("x", "contains"), False),
        ("x", None, None),
    ],
)
def test_expected_answer_rules(
    answer: str | None, expected: Expected | None, result: bool | None
) -> None:
    assert matches(answer, expected) is result


def test_first_number_reads_thousands_and_decimals() -> None:
    assert first_number("$1,680.50 per year") == 1680.5
    assert first_number("-3 degrees") == -3
    assert first_number("none") is None


def finished(answer: str | None, steps: int, wall: float, tokens: tuple[int, int] = (100, 20)):
    step_metrics = tuple(
        StepMetrics(i + 1, 0.05, wall / steps, tokens[0] // steps, tokens[1] // steps, False)
        for i in range(steps)
    )
    metrics = RunMetrics(step_metrics, wall, tool_calls=steps - 1)
    status = "answered" if answer is not None else "max_steps"
    return RunFinished(status, "", answer, metrics)


def test_repeat_pass_rate_and_ranges() -> None:
    record = LaneRecord("Lane 1", "qwen2.5")
    record.runs = [
        finished("$1,680", 3, 1.0),
        finished("$1,600", 2, 2.0),
        finished("$1,680", 3, 1.5),
        finished("$1,680 per year", 4, 1.2),
        finished(None, 5, 3.0),
    ]
    expected = Expected("$1,680", "contains")
    assert record.pass_rate(expected) == pytest.approx(0.6)
    row = record.summary(expected, None)
    assert row["Pass rate"] == "60% (3/5)"
    assert row["Steps"] == "3 (2–5)"
    assert row["Time"] == "1.74 s (1.00 s–3.00 s)"
    assert row["Cost"] == "—"  # no price entered: never guessed
    assert row["Correct"] == "no"  # the latest run


def test_cost_from_the_price_table() -> None:
    record = LaneRecord("Lane 1", "gpt-4o-mini")
    record.runs = [finished("$1,680", 2, 1.0, tokens=(1_000_000, 500_000))]
    row = record.summary(None, Price(0.15, 0.60))
    assert row["Cost"] == "$0.4500"
    assert row["Correct"] == "—"
    assert row["Tokens in"] == "1,000,000"


def test_exports_say_what_the_table_says() -> None:
    record = LaneRecord("Lane 1", "m|1")
    record.runs = [finished("$1,680", 3, 1.0)]
    record.traces = [[record.runs[0]]]
    rows = [record.summary(Expected("$1,680"), None)]
    markdown = to_markdown(rows)
    assert markdown.splitlines()[0] == "| " + " | ".join(COLUMNS) + " |"
    assert "m\\|1" in markdown  # a pipe in a model name does not break the table
    parsed = list(csv.DictReader(io.StringIO(to_csv(rows))))
    assert parsed == rows
    document = json.loads(to_json("T", "Q", [record], rows))
    assert document["lanes"][0]["runs"][0]["events"][0]["type"] == "RunFinished"
    assert document["lanes"][0]["summary"]["Correct"] == "yes"


def test_a_frames_tokens_are_recorded_as_one_event_per_step() -> None:
    from sandbox_app.core.compare import coalesce_tokens
    from sandbox_app.core.events import Observation, TokenDelta

    observation = Observation(1, "calculator", "4", False, "Observation: 4")
    events = [
        TokenDelta(1, "Action: "),
        TokenDelta(1, "calc[2+2]"),
        observation,
        TokenDelta(2, "Answer"),
        TokenDelta(2, ": 4"),
    ]
    assert coalesce_tokens(events) == [
        TokenDelta(1, "Action: calc[2+2]"),
        observation,
        TokenDelta(2, "Answer: 4"),
    ]
