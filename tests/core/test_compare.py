"""Expected-answer rules, lane summaries, repeat statistics and costs."""

from __future__ import annotations

import pytest

from sandbox_app.core.results.compare import LaneRecord, Price
from sandbox_app.core.results.verdict import first_number, matches
from sandbox_app.core.running.events import RunFinished
from sandbox_app.core.running.metrics import RunMetrics, StepMetrics
from sandbox_app.core.scenarios.scenario import Expected


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


def lane_with(name: str, model: str, *runs: RunFinished) -> LaneRecord:
    record = LaneRecord(name, model)
    for run in runs:
        record.history.start().add([run])
    return record


def test_repeat_pass_rate_and_ranges() -> None:
    record = lane_with(
        "Lane 1",
        "qwen2.5",
        finished("$1,680", 3, 1.0),
        finished("$1,600", 2, 2.0),
        finished("$1,680", 3, 1.5),
        finished("$1,680 per year", 4, 1.2),
        finished(None, 5, 3.0),
    )
    expected = Expected("$1,680", "contains")
    assert record.pass_rate(expected) == pytest.approx(0.6)
    row = record.summary(expected, None)
    assert row["Pass rate"] == "60% (3/5)"
    assert row["Steps"] == "3 (2–5)"
    assert row["Time"] == "1.74 s (1.00 s–3.00 s)"
    assert row["Cost"] == "—"  # no price entered: never guessed
    assert row["Correct"] == "3/5"  # as the pass rate counts, not the latest run's "no"


def test_correct_never_says_yes_when_most_repeats_failed() -> None:
    """The latest of five runs was right, the four before it wrong: the table's Correct and
    Pass rate say the same 1/5; one run alone still says yes or no."""
    wrong, right = finished("$1,600", 3, 1.0), finished("$1,680", 3, 1.0)
    expected = Expected("$1,680", "contains")
    row = lane_with("Lane 1", "flaky", wrong, wrong, wrong, wrong, right).summary(expected, None)
    assert (row["Correct"], row["Pass rate"]) == ("1/5", "20% (1/5)")
    assert lane_with("Lane 1", "once", right).summary(expected, None)["Correct"] == "yes"
    assert lane_with("Lane 1", "once", wrong).summary(expected, None)["Correct"] == "no"


def test_cost_from_the_price_table() -> None:
    record = lane_with("Lane 1", "gpt-4o-mini", finished("$1,680", 2, 1.0, (1_000_000, 500_000)))
    row = record.summary(None, Price(0.15, 0.60))
    assert row["Cost"] == "$0.4500"
    assert row["Correct"] == "—"
    assert row["Tokens in"] == "1,000,000"
