"""`react-sandbox eval` in CI: JUnit XML that Jenkins' schema accepts and whose counts are the
summary's, the summary as JSON on stdout, exit codes a script can tell apart, and an
evaluation whose memory does not grow with its runs."""

from __future__ import annotations

import gc
import io
import json
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest
import xmlschema

from sandbox_app.cli.cli_io import EXIT_USAGE
from sandbox_app.cli.evaluating.eval_command import eval_command, parser
from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.results.evaluation import read_results
from sandbox_app.core.running.records import RunRecord
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir

EXAMPLE = scenarios_dir() / "test_set.json"
JUNIT_XSD = Path(__file__).parents[1] / "data" / "junit-10.xsd"  # Jenkins' (see its .md)


@pytest.fixture(scope="module")
def junit_schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(JUNIT_XSD)


def a_failed_run_with_checks(case: int) -> dict[str, object]:
    """A result as the results file holds one whose path failed its checks (the answer was
    right, the tool that had to be called never was)."""
    return {
        "lane": "scripted",
        "case": case,
        "repeat": 0,
        "question": "How much does Brightgrid Pro cost per year for a team of 3 developers?",
        "expected": "720",
        "passed": False,
        "prompt_version": "a9c0387f",
        "status": "answered",
        "answer": "$720 per year",
        "reason": "",
        "metrics": {"steps": [{}], "tool_calls": 0, "wall_s": 0.25},
        "checks": [
            {"name": "tool used: search", "passed": False, "detail": "never called"},
            {"name": "steps ≤ 4", "passed": True, "detail": ""},
            {"name": "judge", "passed": None, "detail": "the judge's reply was not a verdict"},
        ],
        "events": [],
    }


def test_junit_validates_and_its_counts_are_the_summarys(
    tmp_path: Path, junit_schema: xmlschema.XMLSchema, capsys: pytest.CaptureFixture[str]
) -> None:
    results, junit = tmp_path / "results.jsonl", tmp_path / "report.xml"
    # Case 2 was run before and failed its checks; --resume runs the rest of the plan.
    results.write_text(json.dumps(a_failed_run_with_checks(1), ensure_ascii=False) + "\n")
    args = [str(EXAMPLE), "--out", str(results), "--resume", "--repeat", "2"]
    code = eval_command([*args, "--junit", str(junit), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    summary = json.loads(captured.out)  # stdout holds the JSON and nothing else
    junit_schema.validate(str(junit))
    root = ElementTree.parse(junit).getroot()
    (suite,) = root.findall("testsuite")
    (lane,) = summary["lanes"]
    assert suite.get("name") == lane["lane"] == "scripted"
    assert int(suite.get("tests", -1)) == lane["runs"] == 24
    failures, errors = int(suite.get("failures", -1)), int(suite.get("errors", -1))
    assert failures + errors == lane["runs"] - lane["passed"] == 3  # case 12 twice, case 2 once
    assert suite.get("skipped") == "0"
    cases = suite.findall("testcase")
    assert len(cases) == 24
    assert {c.get("classname") for c in cases} == {"scripted"}
    failed = {c.get("name"): c.find("failure") for c in cases if c.find("failure") is not None}
    assert len(failed) == 3
    checked = failed[
        "case 2, repeat 1: How much does Brightgrid Pro cost per year for a team of 3 developers?"
    ]
    assert checked is not None
    message, body = checked.get("message", ""), checked.text or ""
    assert "✗ tool used: search — never called" in message
    assert "? judge — the judge's reply was not a verdict" in body
    assert "steps ≤ 4" not in body  # a check that passed is not a failure's reason
    assert "answered '$720 per year', expected '720'" in body
    guessed = failed[
        "case 12, repeat 2: How much does Brightgrid Pro cost per year for a team of 9 developers?"
    ]
    assert guessed is not None
    # The example's guess at case 12: a wrong answer, reached without the search it needed.
    assert guessed.get("type") == "failed checks"
    assert "✗ tool used: search" in (guessed.text or "")
    assert "expected '2160'" in (guessed.text or "")
    assert summary["junit"] == str(junit)


def test_junit_holds_hostile_model_text_and_names_errors(
    tmp_path: Path, junit_schema: xmlschema.XMLSchema
) -> None:
    hostile = {
        **a_failed_run_with_checks(0),
        "answer": '<script>alert(1)</script>\x00\x1b[31m ]]> "quoted" & done',
        "question": "Q\x07 with a bell and a line\nbreak" + "x" * 200,
    }
    errored = {
        **a_failed_run_with_checks(1),
        "status": "failed",
        "reason": "HTTP 500",
        "checks": [],
    }
    passed = {**a_failed_run_with_checks(2), "passed": True, "lane": "other"}
    from sandbox_app.core.results.junit import write_junit  # here: the other tests run without

    path = tmp_path / "junit.xml"
    runs = [EvalResult.from_dict(r) for r in (hostile, errored, passed)]
    counts = write_junit(path, "t <&>", ["scripted", "other"], runs)
    junit_schema.validate(str(path))
    assert (counts["scripted"].tests, counts["scripted"].failures, counts["scripted"].errors) == (
        2,
        1,
        1,
    )
    root = ElementTree.parse(path).getroot()
    first, second = root.findall("testsuite")[0].findall("testcase")
    failure = first.find("failure")
    assert failure is not None
    assert "<script>alert(1)</script>" in (failure.text or "")
    assert len(first.get("name", "")) < 120  # a name, not the whole question
    error = second.find("error")
    assert error is not None
    assert error.get("message") == "HTTP 500"


def test_json_summary_on_stdout_and_progress_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results.jsonl"
    code = eval_command([str(EXAMPLE), "--out", str(results), "--json", "--min-pass-rate", "95%"])
    captured = capsys.readouterr()
    assert code == 4  # below the minimum, said in the JSON rather than a line of text
    summary = json.loads(captured.out)
    (lane,) = summary["lanes"]
    assert (lane["runs"], lane["passed"], lane["failed"]) == (12, 11, 1)
    assert lane["pass_rate"] == pytest.approx(11 / 12)
    assert lane["interval"] == pytest.approx([0.6461, 0.9851], abs=1e-4)
    assert summary["total"]["runs"] == 12
    assert (lane["cases"], summary["total"]["cases"]) == (12, 12)  # one run a case: Wilson's
    assert summary["total"]["effective_runs"] == lane["effective_runs"] == 12
    assert summary["total"]["interval"] == lane["interval"]
    assert summary["below_min_pass_rate"] == ["scripted"]
    assert summary["min_pass_rate"] == 0.95
    assert "12/12 scripted case" in captured.err  # the progress, as ever


def test_exit_codes_are_listed_and_distinct(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = dict(re.findall(r"^  (\d)  (.+)$", parser().format_help(), re.M))
    assert set(listed) == {"0", "1", "2", "3", "4", "7"}
    assert "usage" in listed[str(EXIT_USAGE)]
    with pytest.raises(SystemExit) as usage:
        eval_command([str(EXAMPLE), "--junit"])  # --junit without its file: argparse's 2
    assert usage.value.code == EXIT_USAGE
    capsys.readouterr()
    results = tmp_path / "results.jsonl"
    folder = tmp_path / "a folder"
    folder.mkdir()
    # A JUnit file that cannot be written is an error before any run, not after the last.
    assert eval_command([str(EXAMPLE), "--out", str(results), "--junit", str(folder)]) == 1
    assert capsys.readouterr().err.strip().endswith("is a folder; name a file in it")
    assert not results.exists()
    for flag in ("--junit", "--json", "--allow"):
        assert flag in parser().format_help()


def test_two_thousand_runs_keep_no_result_in_memory(tmp_path: Path) -> None:
    """While the last of 2,000 runs is reported, the runs before it are on disk only: neither
    their results nor their records are alive (the old command kept every result)."""
    example = load_scenario(EXAMPLE)
    cases = tuple(example.test_set[i % len(example.test_set)] for i in range(1000))
    scenario = tmp_path / "big.json"
    save_scenario(example.with_changes(test_set=cases), scenario)
    alive: dict[str, int] = {}

    class Progress(io.StringIO):
        def write(self, text: str) -> int:
            if text.startswith("2000/2000 "):  # the last run's progress line
                gc.collect()
                objects = gc.get_objects()
                alive["results"] = sum(1 for o in objects if type(o) is EvalResult)
                alive["records"] = sum(1 for o in objects if type(o) is RunRecord)
            return super().write(text)

    out = io.StringIO()
    lanes = ["--lane", "scripted", "--lane", "scripted,tool_calling=native"]
    results = tmp_path / "results.jsonl"
    code = eval_command([str(scenario), *lanes, "--out", str(results)], out, Progress())
    assert code == 0
    assert results.read_bytes().count(b"\n") == 2000
    assert "scripted: 92% (917/1000" in out.getvalue()
    assert alive["results"] < 50, alive  # at most the runs in flight
    assert alive["records"] < 50, alive


def test_a_rerun_replaces_its_run_in_the_summary_and_the_junit(
    tmp_path: Path, junit_schema: xmlschema.XMLSchema, capsys: pytest.CaptureFixture[str]
) -> None:
    results, junit = tmp_path / "results.jsonl", tmp_path / "junit.xml"
    assert eval_command([str(EXAMPLE), "--out", str(results)]) == 0
    with results.open("a", encoding="utf-8") as file:
        file.write('{"lane": "scripted", "case": 2, "repe')  # a line cut short by a kill
    capsys.readouterr()
    code = eval_command(
        [str(EXAMPLE), "--out", str(results), "--only-failed", "--junit", str(junit)]
    )
    out = capsys.readouterr().out
    assert code == 0
    rerun = read_results(results)[-1]  # on a line of its own, not glued to the cut one
    assert (rerun.case, len(read_results(results))) == (11, 13)
    assert "scripted: 92% (11/12," in out  # its new result counted, the old one not
    junit_schema.validate(str(junit))
    (suite,) = ElementTree.parse(junit).getroot().findall("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("12", "1")
