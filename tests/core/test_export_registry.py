"""The one export registry (core/results/exports.py): every format of a run, a comparison and a test
set writes a file through it; an unknown format is an error naming the known ones; the CLI's
report is the registry's HTML."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.core.results.compare import LaneRecord
from sandbox_app.core.results.eval_result import EvalResult, ResultMetrics
from sandbox_app.core.results.evaluation import read_results
from sandbox_app.core.results.exports import (
    COMPARE_FORMATS,
    RUN_FORMATS,
    TEST_SET_FORMATS,
    Comparison,
    EvalResults,
    Exporter,
    ExportError,
    Formats,
    RunExport,
)
from sandbox_app.core.running.events import Event, RunFinished, TokenDelta
from sandbox_app.core.running.metrics import RunMetrics
from sandbox_app.core.running.recording import RecordedLane, load_recording, recording_of
from sandbox_app.core.running.records import RunRecord
from sandbox_app.core.scenarios.scenario_file import load_scenario, scenarios_dir
from tests.helpers import builtin, run_events, scripted


@dataclass(frozen=True)
class _Style:  # what ui/common/theme.py's Style gives the HTML page, without Qt
    color: str
    background: str | None = None
    bold: bool = False
    italic: bool = False


def _run() -> RunExport:
    scenario = builtin("brightgrid")
    record = RunRecord()
    record.add(run_events(scenario, scripted(scenario)), at=0.0)  # timed: a recording's
    lane = RecordedLane(record.settings, tuple(record.timeline))
    styles = {"thought": _Style("#123456"), "step": _Style("#000", bold=True)}
    return RunExport(record, styles, recording_of(scenario, [lane], "test"))


def _comparison() -> Comparison:
    lanes = []
    for name, answer in (("Lane 1", "$1,680"), ("Lane 2", "$1,260")):
        lane = LaneRecord(name, "m")
        events: list[Event] = [
            TokenDelta(1, f"Answer: {answer}"),
            RunFinished("answered", "", answer, RunMetrics()),
        ]
        lane.history.start().add(events)
        lanes.append(lane)
    rows = [lane.summary(None, None) for lane in lanes]
    return Comparison("T", "Q", lanes, rows)


def _results() -> EvalResults:
    record = RunRecord()
    record.add([TokenDelta(1, "Answer: 4"), RunFinished("answered", "", "4", RunMetrics())])
    metrics = {"steps": [{}], "tool_calls": 0, "wall_s": 1.0, "tokens_in": 10}
    runs: list[tuple[EvalResult, RunRecord | None]] = [
        (EvalResult("a", c, 0, c == 0, metrics=ResultMetrics.from_document(metrics, "m")), record)
        for c in range(2)
    ]
    return EvalResults("T", ["2+2?", "3+3?"], ["a"], runs)


CASES: list[tuple[Formats[Any], Any]] = [
    (RUN_FORMATS, _run()),
    (COMPARE_FORMATS, _comparison()),
    (TEST_SET_FORMATS, _results()),
]


@pytest.mark.parametrize(
    ("formats", "subject", "kind"),
    [(formats, subject, kind) for formats, subject in CASES for kind in formats],
)
def test_every_registered_format_writes_a_file(
    formats: Formats[Any], subject: Any, kind: str, tmp_path: Path
) -> None:
    exporter = formats.exporter(kind)
    path = tmp_path / f"out{exporter.suffix}"
    exporter.save(subject, path)
    assert path.stat().st_size > 0
    assert formats.for_path(path) is exporter  # its suffix finds it again
    assert exporter.filter.startswith(f"{exporter.label} (*{exporter.suffix}")


@pytest.mark.parametrize("formats", [formats for formats, _ in CASES])
def test_an_unknown_format_is_an_error_naming_the_known_ones(formats: Formats[Any]) -> None:
    with pytest.raises(
        ValueError, match=f"unknown export format 'xlsx'; choose {', '.join(formats)}$"
    ):
        formats.exporter("xlsx")


def test_the_kinds_each_subject_exports_to() -> None:
    assert list(RUN_FORMATS) == ["md", "html", "json"]  # the window adds its PNG
    assert list(COMPARE_FORMATS) == ["md", "csv", "json"]
    assert list(TEST_SET_FORMATS) == ["md", "csv", "json", "html"]
    assert RUN_FORMATS.suffixes() == ".md, .html or .json"
    assert RUN_FORMATS.dialog_filter() == (
        "Markdown (*.md);;HTML page (*.html *.htm);;Recording (*.json)"
    )


def test_a_name_finds_its_format_by_suffix_or_by_the_chosen_filter() -> None:
    html = RUN_FORMATS.exporter("html")
    assert RUN_FORMATS.for_path(Path("a.HTM")) is html
    assert RUN_FORMATS.for_path(Path("a"), html.filter) is html
    assert RUN_FORMATS.for_path(Path("a.txt"), html.filter) is None  # a suffix says which
    assert RUN_FORMATS.for_path(Path("a")) is None


def test_two_formats_with_one_suffix_are_refused() -> None:
    twin = Exporter[Comparison]("markdown", "Markdown again", ".md", lambda c: "x")
    with pytest.raises(ValueError, match="two formats share a kind or a suffix"):
        COMPARE_FORMATS.plus(twin)


def test_a_new_format_is_one_line() -> None:
    plain = COMPARE_FORMATS.plus(
        Exporter("txt", "Plain text", ".txt", lambda c: "\n".join(r["Lane"] for r in c.rows))
    )
    assert plain.exporter("txt").text(_comparison()) == "Lane 1\nLane 2"
    assert plain.dialog_filter().endswith(";;Plain text (*.txt)")
    assert list(COMPARE_FORMATS) == ["md", "csv", "json"]  # the registry itself is untouched


def test_a_recording_of_nothing_is_an_export_error_and_writes_nothing(tmp_path: Path) -> None:
    run = _run()
    path = tmp_path / "run.json"
    with pytest.raises(ExportError, match="Nothing to record yet"):
        RUN_FORMATS.exporter("json").save(RunExport(run.record, run.styles), path)
    assert not path.exists()
    RUN_FORMATS.exporter("json").save(run, path)
    assert load_recording(path).lanes[0].finished == run.record.finished


def test_eval_report_is_the_test_sets_html_format(tmp_path: Path) -> None:
    report, results = tmp_path / "report.html", tmp_path / "results.jsonl"
    example = scenarios_dir() / "test_set.json"
    assert (
        eval_command([str(example), "--out", str(results), "--report", str(report)], io.StringIO())
        == 0
    )
    scenario = load_scenario(example)
    written = read_results(results)
    questions = [case.question for case in scenario.test_set]
    labels = sorted({r.lane for r in written})
    expected = EvalResults(scenario.title, questions, labels, [(r, None) for r in written])
    assert report.read_text(encoding="utf-8") == TEST_SET_FORMATS.exporter("html").text(expected)
