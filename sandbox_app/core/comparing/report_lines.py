"""An evaluation diff in words and in JUnit: the lines ``history diff`` and ``eval
--baseline`` print (one rendering for both), and the test suite ``eval --junit`` adds for the
comparison with a baseline: a test case per pair of arms, failed when the later arm is worse
beyond the interval, naming the cases that fell; the verdict's figures as properties.

Within one evaluation (its arms one factor apart, arm_diff.compare_within): the lines ``eval``
prints after its lane rows and the window's Test set tab shows (``within_lines``), and a
suite of properties only (``within_suite``): two arms of one evaluation differing is what it
was run to find out, never a failed test."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sandbox_app.core.comparing.arm_diff import (
    ArmComparison,
    Cells,
    EvaluationDiff,
    compare_within,
    verdict_document,
)
from sandbox_app.core.results.junit import SuiteCounts, xml_attribute, xml_text

CASES_SHOWN = 20  # per comparison on a terminal; --json has them all


def diff_lines(diff: EvaluationDiff, first: str, second: str) -> list[str]:
    count = len(diff.comparisons)
    lines = [f"{first} → {second}: {count} arm{'s' * (count != 1)} compared"]
    for c in diff.comparisons:
        v = c.verdict
        lines += [
            "",
            c.heading(first, second),
            f"  {c.sentence(first, second)}",
            f"  pass rate {v.rate_a:.0%} → {v.rate_b:.0%} over {v.cases} cases ({v.method})",
        ]
        if c.only_a or c.only_b:
            lines.append(f"  cases only in one: {c.only_a} in {first}, {c.only_b} in {second}")
        if c.changes:
            lines.append("  cases that changed, largest first:")
        lines += [f"    {change.line()}" for change in c.changes[:CASES_SHOWN]]
        if len(c.changes) > CASES_SHOWN:
            lines.append(f"    … and {len(c.changes) - CASES_SHOWN} more (--json has them)")
    if not diff.comparisons:
        lines.append(f"no arm of {second} has a counterpart in {first}: nothing compared")
    for where, names in ((first, diff.only_first), (second, diff.only_second)):
        if names:
            lines += ["", f"only in {where} (no counterpart): " + "; ".join(names)]
    return lines


def junit_suite(diff: EvaluationDiff, first: str, second: str) -> tuple[str, SuiteCounts, str]:
    """(its name, its counts, its XML body) for junit.write_junit's ``extra``: the verdicts'
    figures as the suite's properties (JUnit has none on a test case), named by the test
    case they belong to."""
    counts = SuiteCounts()
    names = [c.heading(first, second) for c in diff.comparisons]
    named = list(zip(names, diff.comparisons, strict=True))
    body = _properties_element(named)
    for name, c in named:
        counts.tests += 1
        failure = ""
        if c.verdict.word == "worse":
            counts.failures += 1
            fell = "\n".join(change.line() for change in c.regressed)
            message = xml_attribute(c.sentence(first, second))
            failure = f'<failure message={message} type="regression">{xml_text(fell)}</failure>'
        body += f'<testcase name={xml_attribute(name)} classname="baseline">{failure}</testcase>\n'
    return f"compared with baseline {first}", counts, body


WITHIN_SUITE = "arms compared within this evaluation"


def compared_within(cells: Cells, names: Mapping[str, str]) -> list[ArmComparison]:
    """An evaluation's arms one factor apart that ran a case in common, compared (two arms
    with none, as a resumed file's line from an older prompt beside the new runs, say
    nothing worth a line)."""
    return [c for c in compare_within(cells, names) if c.verdict.cases]


def within_lines(comparisons: Sequence[ArmComparison]) -> list[str]:
    """Each comparison of one evaluation's arms in a line: its verdict's sentence."""
    return [c.sentence() for c in comparisons]


def within_suite(comparisons: Sequence[ArmComparison]) -> tuple[str, SuiteCounts, str]:
    """For junit.write_junit's ``extra``: the verdicts' figures as properties, named by the
    arms compared ("prompt brief → grounded, on scripted · verdict"), and no test case."""
    return WITHIN_SUITE, SuiteCounts(), _properties_element([(c.title, c) for c in comparisons])


def _properties_element(named: Sequence[tuple[str, ArmComparison]]) -> str:
    properties = "".join(_properties(name, c) for name, c in named)
    return f"<properties>{properties}</properties>\n" if properties else ""


def _properties(name: str, c: ArmComparison) -> str:
    # The figures --json carries (verdict_document), one property each.
    document = verdict_document(c)
    low, high = document["ci95_points"]
    figures = {
        **{k: document[k] for k in ("verdict", "difference_points")},
        "ci95_low_points": low,
        "ci95_high_points": high,
        **{k: document[k] for k in ("cases", "cases_better", "cases_worse", "method")},
    }
    return "".join(
        f"<property name={xml_attribute(f'{name} · {key}')} value={xml_attribute(value)}/>"
        for key, value in figures.items()
    )
