"""`eval --baseline ID|latest --fail-on-regression`: a CI gate that fails only when an arm is
worse than its baseline arm beyond the interval, naming the cases that fell (issue: "did my
edit help?", baselines for CI)."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path
from xml.etree import ElementTree

import pytest
import xmlschema

from sandbox_app.cli.cli_io import EXIT_REGRESSED
from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.cli.main import main
from sandbox_app.core.scenarios.scenario import EvalCase, Expected
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir
from tests.core.test_eval_ci import JUNIT_XSD

WANTED = ("2,592", "$2,592", "2,592 per", "$2,592 per", "2,592 per year", "$2,592 per year",
          ",592", "592 per", "$2,59", "2,59")  # fmt: skip
CASES = len(WANTED)


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    """prompt_variants.json offline: "grounded" looks the price up ("$2,592 per year"),
    "brief" guesses ("About $2,160 per year"); ten cases (the offline model answers one
    question: ten ways of wanting the looked-up price), so brief is worse on every one."""
    base = load_scenario(scenarios_dir() / "prompt_variants.json")
    cases = tuple(EvalCase(base.question, Expected(part)) for part in WANTED)
    path = tmp_path / "variants.json"
    script = replace(base.script, tokens_per_second=0)
    save_scenario(replace(base, test_set=cases, script=script), path)
    return path


def evaluate(scenario: Path, version: str, tmp_path: Path, *more: str) -> tuple[int, str]:
    out = io.StringIO()
    results = tmp_path / f"{version}-{len(list(tmp_path.glob('*.jsonl')))}.jsonl"
    argv = [str(scenario), "--prompt", version, "--lane", "scripted", "--out", str(results)]
    code = eval_command([*argv, "--db", str(tmp_path / "h.sqlite3"), *more], out)
    return code, out.getvalue()


GATE = ("--baseline", "latest", "--fail-on-regression")


def test_an_unchanged_rerun_passes_and_a_worse_prompt_fails_naming_its_cases(
    scenario: Path, tmp_path: Path
) -> None:
    assert evaluate(scenario, "grounded", tmp_path)[0] == 0  # #1, the baseline
    code, text = evaluate(scenario, "grounded", tmp_path, *GATE)  # #2, the same prompt again
    assert code == 0, text
    assert "no detectable difference between #1 and #2 for grounded · scripted" in text
    junit = tmp_path / "gate.xml"
    code, text = evaluate(scenario, "brief", tmp_path, *GATE, "--junit", str(junit))  # #3
    assert code == EXIT_REGRESSED, text
    assert "prompt grounded → brief, on scripted" in text
    assert "brief is worse than grounded on scripted by 100 points" in text
    fell = [line.strip() for line in text.splitlines() if "→ 0/1 (-100 points)" in line]
    assert len(fell) == CASES
    assert fell[0].startswith("case 1: 1/1 → 0/1 (-100 points) ")
    xmlschema.XMLSchema(JUNIT_XSD).validate(str(junit))
    suite = ElementTree.parse(junit).getroot().find("testsuite[@name='compared with baseline #2']")
    assert suite is not None
    (case,) = suite.findall("testcase")
    failure = case.find("failure")
    assert failure is not None
    assert failure.text is not None
    assert failure.text.count("-100 points") == CASES
    named = f"{case.get('name')} · "
    figures = {
        str(p.get("name")).removeprefix(named): p.get("value") for p in suite.iter("property")
    }
    assert (figures["verdict"], figures["cases"], figures["cases_worse"]) == ("worse", "10", "10")


def test_json_carries_the_comparison_and_the_marked_baseline_is_the_one_used(
    scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evaluate(scenario, "brief", tmp_path)  # #1
    evaluate(scenario, "grounded", tmp_path)  # #2
    assert main(["history", "baseline", "1", "--db", str(tmp_path / "h.sqlite3")]) == 0
    capsys.readouterr()
    code, text = evaluate(scenario, "grounded", tmp_path, *GATE, "--json")  # #3 against #1
    assert code == 0, text
    document = json.loads(text)["baseline"]
    assert (document["baseline"], document["evaluation"], document["regressed"]) == (1, 3, False)
    (comparison,) = document["comparisons"]
    named = (comparison["a"], comparison["b"], comparison["verdict"])
    assert named == ("brief", "grounded", "better")
    assert comparison["difference_points"] == 100.0
    low, high = comparison["ci95_points"]
    assert 0 < low < high <= 100


def test_nothing_to_compare_is_said_and_never_fails(
    scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = evaluate(scenario, "brief", tmp_path, *GATE)  # no earlier evaluation
    assert code == 0
    assert "no earlier evaluation of this scenario" in capsys.readouterr().err
    code, _ = evaluate(scenario, "brief", tmp_path, "--fail-on-regression")
    assert code == 1
    assert "--fail-on-regression needs --baseline" in capsys.readouterr().err
