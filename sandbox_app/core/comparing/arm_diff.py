"""Two arms compared case by case: each case's k/N in each, the cases whose pass rate moved
(largest change first), and the paired verdict (paired_verdict.py) on the difference.

A case is its question as asked (its variables filled) with its expected answer: two
evaluations of one test set pair by them even when a case was added between them, and a case
whose expected answer changed is another case; a result without its question (an old file)
is its case number. Repeats are never paired with repeats: a case's runs are counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sandbox_app.core.comparing.arms import (
    ArmPair,
    arm_name,
    identity,
    pair_across,
    pairs_within,
    what_changed,
)
from sandbox_app.core.comparing.paired_verdict import CaseCounts, PairedVerdict, paired_verdict
from sandbox_app.core.results.eval_result import Arm, EvalResult


@dataclass
class Cell:
    """One case on one arm: its runs, how many passed, its case number (the first seen)."""

    case: int
    question: str = ""
    passed: int = 0
    runs: int = 0
    lane: str = ""  # the lane its first run was on (where its traces are found)

    def text(self) -> str:
        return f"{self.passed}/{self.runs}"


CaseKey = str
Case = tuple[int, str | None, str | None]  # its number, question and expected answer
ArmCells = dict[CaseKey, Cell]


def case_key(case: int, question: str | None, expected: str | None) -> CaseKey:
    return f"{question}\x00{expected or ''}" if question else f"case {case + 1}"


@dataclass
class Cells:
    """An evaluation's results counted per arm and case (the arms in the order first seen)."""

    arms: list[Arm] = field(default_factory=list)
    by_arm: dict[tuple[tuple[str, Any], ...], ArmCells] = field(default_factory=dict)

    def add(self, arm: Arm, case: Case, runs: int, passed: int, lane: str = "") -> None:
        """``case``: its number, question and expected answer."""
        number, question, expected = case
        key = identity(arm)
        cells = self.by_arm.get(key)
        if cells is None:
            cells = self.by_arm[key] = {}
            self.arms.append(arm)
        case_at = case_key(number, question, expected)
        cell = cells.setdefault(case_at, Cell(number, question or f"case {number + 1}", lane=lane))
        cell.runs += runs
        cell.passed += passed

    def count(self, result: EvalResult, sign: int = 1) -> None:
        """One result counted in (``sign`` -1: taken out again, as a re-run replaces it)."""
        case = (result.case, result.question, result.expected)
        self.add(result.arm, case, sign, sign * int(result.passed), result.lane)

    def of(self, arm: Arm) -> ArmCells:
        return self.by_arm.get(identity(arm), {})


def cells_of(results: Iterable[EvalResult]) -> Cells:
    """Results counted (what a window or ``eval`` holds; the history counts in SQL)."""
    cells = Cells()
    for r in results:
        cells.count(r)
    return cells


@dataclass(frozen=True)
class CaseChange:
    key: CaseKey
    case: int  # the case's number in the later evaluation (0-based)
    a: Cell
    b: Cell

    @property
    def change(self) -> float:
        return self.b.passed / self.b.runs - self.a.passed / self.a.runs

    def line(self) -> str:
        sign = "+" if self.change > 0 else ""
        return (
            f"case {self.case + 1}: {self.a.text()} → {self.b.text()} "
            f"({sign}{round(self.change * 100)} points) {self.b.question}"
        )


@dataclass(frozen=True)
class ArmComparison:
    pair: ArmPair
    verdict: PairedVerdict
    changes: list[CaseChange]  # the cases whose pass rate moved, largest change first
    only_a: int  # cases one arm ran and the other did not
    only_b: int
    factor: str = ""
    was: str = ""  # the factor's value in a ("brief"), or the arm's name
    now: str = ""
    where: str = ""  # "on good-7b"

    @property
    def regressed(self) -> list[CaseChange]:
        return [c for c in self.changes if c.change < 0]

    @property
    def title(self) -> str:
        if not self.factor:
            return self.now
        return f"{self.factor} {self.was} → {self.now}, {self.where}"

    def heading(self, first: str, second: str) -> str:
        """The title, and for one arm in two evaluations which two ("brief · m: #3 → #4")."""
        return self.title if self.factor else f"{self.title}: {first} → {second}"

    def sentence(self, first: str = "", second: str = "") -> str:
        """The verdict in words; ``first``/``second`` name the two evaluations when the arm
        is one and the same ("#3", "#4")."""
        if self.factor:
            return self.verdict.sentence(self.was, self.now, self.where)
        return self.verdict.sentence(first or "before", second or "now", f"for {self.now}")


def compare_pair(
    pair: ArmPair, a: ArmCells, b: ArmCells, names: Mapping[str, str]
) -> ArmComparison:
    common = [key for key in b if key in a and a[key].runs and b[key].runs]
    counts = [
        CaseCounts(i, a[key].passed, a[key].runs, b[key].passed, b[key].runs)
        for i, key in enumerate(common)
    ]
    changes = [CaseChange(key, b[key].case, a[key], b[key]) for key in common]
    # The largest change first; of two as large, the fall first (what a prompt engineer fixes).
    moved = sorted(
        (c for c in changes if c.change), key=lambda c: (-abs(c.change), c.change, c.case)
    )
    factor, was, now, where = what_changed(pair, names)
    return ArmComparison(
        pair,
        paired_verdict(counts),
        moved,
        sum(1 for key in a if key not in b),
        sum(1 for key in b if key not in a),
        factor,
        was,
        now,
        where,
    )


@dataclass(frozen=True)
class EvaluationDiff:
    """Two evaluations (or one with itself: its arms that differ in one factor) compared."""

    comparisons: list[ArmComparison]
    only_first: list[str]  # arms without a counterpart, by name
    only_second: list[str]

    @property
    def worse(self) -> list[ArmComparison]:
        return [c for c in self.comparisons if c.verdict.word == "worse"]


def compare_evaluations(first: Cells, second: Cells, names: Mapping[str, str]) -> EvaluationDiff:
    pairing = pair_across(first.arms, second.arms)
    return EvaluationDiff(
        [compare_pair(p, first.of(p.a), second.of(p.b), names) for p in pairing.pairs],
        [arm_name(arm, names) for arm in pairing.only_first],
        [arm_name(arm, names) for arm in pairing.only_second],
    )


def compare_within(cells: Cells, names: Mapping[str, str]) -> list[ArmComparison]:
    return [compare_pair(p, cells.of(p.a), cells.of(p.b), names) for p in pairs_within(cells.arms)]


def verdict_document(
    comparison: ArmComparison, first: str = "", second: str = ""
) -> dict[str, Any]:
    """What ``--json``, JUnit properties and the report carry of one comparison."""
    v = comparison.verdict
    return {
        "arms": comparison.title,
        "factor": comparison.factor,
        "a": comparison.was,
        "b": comparison.now,
        "verdict": v.word,
        "difference_points": round(v.difference * 100, 1),
        "ci95_points": [round(v.low * 100, 1), round(v.high * 100, 1)],
        "cases": v.cases,
        "cases_better": v.better_cases,
        "cases_worse": v.worse_cases,
        "method": v.method,
        "sentence": comparison.sentence(first, second),
        "regressed": [
            {"case": c.case + 1, "question": c.b.question, "was": c.a.text(), "now": c.b.text()}
            for c in comparison.regressed
        ],
    }
