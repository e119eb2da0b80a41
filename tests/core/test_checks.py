"""The shape every grading check reports in (core/results/checks.py)."""

from __future__ import annotations

from sandbox_app.core.results.checks import CheckResult, failure_lines, overall
from sandbox_app.core.results.eval_result import EvalResult


def test_a_run_passes_only_when_its_answer_and_every_check_passed() -> None:
    ok, bad, unjudged = CheckResult("a", True), CheckResult("b", False), CheckResult("j", None)
    assert overall(True, [ok])
    assert not overall(False, [ok])
    assert not overall(True, [ok, bad])
    assert not overall(True, [unjudged])  # undecided is never a pass


def test_checks_round_trip_and_bad_lines_are_skipped() -> None:
    checks = [CheckResult("tool used: search", False, "never called"), CheckResult("j", None)]
    line = {"lane": "a", "case": 0, "repeat": 0, "passed": False}
    result = {**line, "checks": [c.to_dict() for c in checks] + ["junk", {"name": 3}]}
    assert EvalResult.from_dict(result).checks == tuple(checks)
    assert EvalResult.from_dict(line).checks == ()  # a line written before checks existed
    assert failure_lines(checks) == ["✗ tool used: search — never called", "? j"]
