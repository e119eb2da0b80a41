"""One evaluation's arms one factor apart (two prompt versions on one model) compared: the
same verdict in ``eval``'s text after the lane rows, ``--json``'s ``"comparisons"``, a JUnit
suite's properties (valid for Jenkins) and the HTML report (issue 34: the same numbers
everywhere)."""

from __future__ import annotations

import io
import json
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree

import pytest
import xmlschema

from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.core.comparing.report_lines import WITHIN_SUITE
from sandbox_app.core.results.eval_report import to_html
from tests.core.test_eval_baseline import CASES, scenario  # noqa: F401 (a fixture)
from tests.core.test_eval_ci import JUNIT_XSD

SENTENCE = (
    f"grounded is better than brief on scripted by 100 points (95 % CI 76 to 100), "
    f"{CASES} cases better, 0 worse"
)


def both_versions(path: Path, tmp_path: Path, name: str, *more: str) -> str:
    out = io.StringIO()
    argv = [str(path), "--prompt", "brief", "--prompt", "grounded", "--lane", "scripted"]
    argv += ["--out", str(tmp_path / f"{name}.jsonl"), "--db", str(tmp_path / "h.sqlite3")]
    assert eval_command([*argv, *more], out) == 0
    return out.getvalue()


def test_text_json_junit_and_report_carry_the_same_verdict(
    scenario: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    junit, report = tmp_path / "r.xml", tmp_path / "r.html"
    text = both_versions(scenario, tmp_path, "text", "--junit", str(junit), "--report", str(report))
    lines = text.splitlines()
    rows = [n for n, line in enumerate(lines) if line.startswith("scripted @ ")]
    assert lines[max(rows) + 2] == SENTENCE  # after the lane rows, a blank line between
    document = json.loads(both_versions(scenario, tmp_path, "json", "--json"))
    (comparison,) = document["comparisons"]
    assert comparison["arms"] == "prompt brief → grounded, on scripted"
    assert comparison["sentence"] == SENTENCE
    figures = (comparison["verdict"], comparison["difference_points"], comparison["ci95_points"])
    assert figures == ("better", 100.0, [75.9, 100.0])
    # JUnit: a suite of properties only (a difference within an evaluation is no failure).
    xmlschema.XMLSchema(JUNIT_XSD).validate(str(junit))
    suite = ElementTree.parse(junit).getroot().find(f"testsuite[@name='{WITHIN_SUITE}']")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.findall("testcase")) == ("0", "0", [])
    prefix = f"{comparison['arms']} · "
    properties = {
        str(p.get("name")).removeprefix(prefix): p.get("value") for p in suite.iter("property")
    }
    assert properties["verdict"] == "better"
    assert properties["difference_points"] == "100.0"
    assert (properties["ci95_low_points"], properties["ci95_high_points"]) == ("75.9", "100.0")
    assert (properties["cases"], properties["cases_better"]) == (str(CASES), str(CASES))
    # The report: the same sentence and figures in a table of their own.
    table = report_table(report.read_text(encoding="utf-8"), "Arms compared")
    assert table == [
        ["Arms", "Verdict", "Difference", "95% interval", "Cases", "Better / worse"],
        [comparison["arms"], SENTENCE, "+100.0 points", "+75.9 to +100.0", "10", "10 / 0"],
    ]


def test_with_history_off_the_results_file_gives_the_same_verdict(
    scenario: Path,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    damaged = tmp_path / "h.sqlite3"  # the --db both_versions names
    damaged.write_bytes(b"not a database" * 100)
    document = json.loads(both_versions(scenario, tmp_path, "off", "--json"))
    assert "history off (" in capsys.readouterr().err
    (comparison,) = document["comparisons"]
    assert (comparison["sentence"], comparison["ci95_points"]) == (SENTENCE, [75.9, 100.0])


def test_one_arm_compares_nothing(scenario: Path, tmp_path: Path) -> None:  # noqa: F811
    out, junit = io.StringIO(), tmp_path / "r.xml"
    argv = [str(scenario), "--prompt", "grounded", "--lane", "scripted", "--json"]
    argv += ["--junit", str(junit), "--out", str(tmp_path / "r.jsonl")]
    assert eval_command([*argv, "--db", str(tmp_path / "h.sqlite3")], out) == 0
    assert json.loads(out.getvalue())["comparisons"] == []
    names = [s.get("name") for s in ElementTree.parse(junit).getroot().findall("testsuite")]
    assert names == ["scripted @ grounded"]  # its lane's, no other


def test_the_reports_verdicts_are_escaped() -> None:
    hostile = {
        "arms": "prompt <script>alert(1)</script> → b, on m",
        "sentence": "b is better than <img src=x onerror=alert(1)>",
        "difference_points": 12.5,
        "ci95_points": [1.0, 24.0],
        "cases": 3,
        "cases_better": 2,
        "cases_worse": 0,
    }
    page = to_html("t", ["q"], ["lane"], [], [hostile])
    assert "<script>" not in page
    assert "<img" not in page
    table = report_table(page, "Arms compared")
    assert table[1][:3] == [hostile["arms"], hostile["sentence"], "+12.5 points"]


def report_table(page: str, heading: str) -> list[list[str]]:
    """The cells' text of the table after ``heading``, row by row, as a browser shows them."""
    reader = _Tables()
    reader.feed(page)
    return reader.tables[reader.headings.index(heading)]


class _Tables(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.headings: list[str] = []
        self.tables: list[list[list[str]]] = []
        self._in: str = ""
        self._heading = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "h2":
            self._in, self._heading = "h2", ""
        elif tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.tables[-1][-1].append("")
            self._in = "cell"

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2":
            # A table belongs to the heading just before it: pad the headings to the tables.
            self.headings += [""] * (len(self.tables) - len(self.headings)) + [self._heading]
        if tag in ("h2", "td", "th"):
            self._in = ""

    def handle_data(self, data: str) -> None:
        if self._in == "h2":
            self._heading += data
        elif self._in == "cell":
            self.tables[-1][-1][-1] += data
