"""What a test-set run is graded by besides its answer: named checks, each passed, failed or
not decided, with a one-line detail — the shape trajectory checks (the path the run took)
and judged answers (a judge model's verdict on a rubric) both report in.

A run passes when its answer check and every one of its checks passed; a check that could not
be decided (``passed`` None: a judge that answered nonsense, "unjudged") is never a pass.
Results carry them (core/results/eval_result.py ``EvalResult.checks``; ``"checks": [{"name",
"passed", "detail"}]`` in the JSONL) to the reports and the grid's tooltips, in the order
they were made.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

UNDECIDED = "undecided"  # how a check with passed None is named where a word is needed


@dataclass(frozen=True)
class CheckResult:
    name: str  # "answer", "tool used: search", "steps ≤ 4", "judge", …
    passed: bool | None  # None: could not be decided (never a pass)
    detail: str = ""  # one line: why it failed, or what was seen

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "detail": self.detail}

    @staticmethod
    def from_dict(item: Any) -> CheckResult | None:
        """A check as a results file holds it; None for anything else (a hand-edited line)."""
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            return None
        passed = item.get("passed")
        detail = item.get("detail")
        return CheckResult(
            item["name"],
            passed if isinstance(passed, bool) else None,
            detail if isinstance(detail, str) else "",
        )


def overall(answer_passed: bool, checks: Iterable[CheckResult]) -> bool:
    """The run's verdict: its answer and every check passed (an undecided check fails it)."""
    return answer_passed and all(check.passed is True for check in checks)


def failed(checks: Iterable[CheckResult]) -> list[CheckResult]:
    """The checks that did not pass, undecided ones included: what a tooltip or report names."""
    return [check for check in checks if check.passed is not True]


def failure_lines(checks: Sequence[CheckResult]) -> list[str]:
    """One line per check that did not pass: "✗ tool used: search — never called"."""
    return [
        f"{'?' if check.passed is None else '✗'} {check.name}"
        + (f" — {check.detail}" if check.detail else "")
        for check in failed(checks)
    ]


# Checks whose detail is worth reading when they pass too: a judge's reason says why.
SHOWN_WHEN_PASSED = frozenset({"judge"})


def described(answer: str | None, checks: Sequence[CheckResult]) -> str:
    """A run in one line for a grid cell's tooltip or a report: its answer, then each check
    that did not pass ("1680 · ✗ tool used: search — never called"), and a passed judge's
    verdict ("✓ judge — pass — states the yearly price")."""
    passed = [
        f"✓ {c.name} — {c.detail}"
        for c in checks
        if c.passed is True and c.name in SHOWN_WHEN_PASSED and c.detail
    ]
    return " · ".join([str(answer), *failure_lines(checks), *passed])
