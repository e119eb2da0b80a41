"""What `react-sandbox eval` writes: the results file and the report are checked before the
first run (one line, exit 1, nothing run); the response cache is a saving, so one that
cannot be used is skipped with one line and the evaluation runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox_app.cli.main import main
from sandbox_app.core.results.evaluation import read_results
from sandbox_app.core.scenarios.scenario_file import scenarios_dir

TEST_SET = scenarios_dir() / "test_set.json"
CASES = 12  # in the example test set


def evaluate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["eval", str(TEST_SET), *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("kind", ["a file", "under a file"])
def test_a_cache_that_cannot_be_used_is_skipped_and_every_run_made(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "taken"
    taken.write_text("not a folder", encoding="utf-8")
    cache = taken if kind == "a file" else taken / "cache"
    results = tmp_path / "results.jsonl"
    code, out, err = evaluate(capsys, "--out", str(results), "--cache", str(cache))
    assert code == 0, err
    assert len(read_results(results)) == CASES
    assert "scripted: 92% (11/12" in out
    (line,) = [line for line in err.splitlines() if line.startswith("react-sandbox")]
    assert line.startswith(f"react-sandbox eval: --cache {cache}")
    assert "running without the cache" in line
    assert taken.read_text(encoding="utf-8") == "not a folder"  # left as it was


def test_a_report_naming_a_folder_is_refused_before_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results.jsonl"
    code, out, err = evaluate(capsys, "--out", str(results), "--report", str(tmp_path))
    assert code == 1
    assert err == f"react-sandbox eval: --report {tmp_path} is a folder; name a file in it\n"
    assert out == ""
    assert not results.exists()  # nothing ran


def test_a_report_in_a_missing_folder_is_refused_before_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results.jsonl"
    report = tmp_path / "missing" / "report.html"
    code, out, err = evaluate(capsys, "--out", str(results), "--report", str(report))
    assert code == 1
    assert err == (
        f"react-sandbox eval: --report {report}: the folder {report.parent} does not exist\n"
    )
    assert out == ""
    assert not results.exists()


def test_a_report_that_would_replace_the_scenario_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results.jsonl"
    before = TEST_SET.read_bytes()
    code, _, err = evaluate(capsys, "--out", str(results), "--report", str(TEST_SET))
    assert code == 1
    assert "is the scenario file" in err
    assert TEST_SET.read_bytes() == before
    assert not results.exists()


def test_results_in_a_missing_folder_are_one_line_not_a_traceback(tmp_path: Path) -> None:
    out = tmp_path / "missing" / "results.jsonl"
    result = subprocess.run(
        [sys.executable, "-m", "sandbox_app", "eval", str(TEST_SET), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr == (
        f"react-sandbox eval: --out {out}: the folder {out.parent} does not exist\n"
    )
    assert result.stdout == ""
    assert not out.parent.exists()


def test_results_naming_a_folder_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = evaluate(capsys, "--out", str(tmp_path))
    assert code == 1
    assert err == f"react-sandbox eval: --out {tmp_path} is a folder; name a file in it\n"
    assert out == ""
