"""An evaluation's results as a grid (cases × lanes) and a self-contained HTML report.

The grid is what the window's results view and every export show: each cell is a case's runs on
a lane, "pass", "fail" or "k/N" with repeats; the report adds the per-lane summary (pass rate
with its 95 % interval, by case when cases repeat), the verdicts on its arms one factor apart
(the documents core/comparing/ made: the same figures as ``eval --json`` and the window's) and,
for every failed run, its answer and why. Model text is escaped, never interpreted: a reply
holding ``<script>`` stays text."""

from __future__ import annotations

import csv
import html
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sandbox_app.core.estimates.pass_rates import interval_words
from sandbox_app.core.results.checks import described, failure_lines
from sandbox_app.core.results.eval_result import EvalResult, RunKey
from sandbox_app.core.results.evaluation import summarise
from sandbox_app.core.untrusted.markdown import inline


def latest_results(results: Iterable[EvalResult]) -> dict[RunKey, EvalResult]:
    latest: dict[RunKey, EvalResult] = {}
    for result in results:
        latest[result.key] = result
    return latest


def grid(
    questions: Sequence[str], lanes: Sequence[str], results: Iterable[EvalResult]
) -> list[list[str]]:
    """One row per case: its number, its question, then one cell per lane."""
    cells: dict[tuple[int, str], list[bool]] = {}
    for key, result in sorted(latest_results(results).items()):
        cells.setdefault((key.case, key.lane), []).append(result.passed)
    rows = []
    for case, question in enumerate(questions):
        row = [str(case + 1), question]
        row += [cell_text(cells.get((case, lane), [])) for lane in lanes]
        rows.append(row)
    return rows


def cell_text(passes: Sequence[bool]) -> str:
    """A cell of the grid: "—" (not run), "pass", "fail", or "k/N" passed with repeats."""
    if not passes:
        return "—"
    if len(passes) == 1:
        return "pass" if passes[0] else "fail"
    return f"{sum(passes)}/{len(passes)}"


def cell_failed(text: str) -> bool:
    """Whether a cell holds a failed run: "fail", or "k/N" with k < N."""
    passed, _, total = text.partition("/")
    return text == "fail" or (bool(total) and passed != total)


def to_html(
    title: str,
    questions: Sequence[str],
    lanes: Sequence[str],
    results: Sequence[EvalResult],
    verdicts: Sequence[Mapping[str, Any]] = (),
    grades: Mapping[RunKey, Mapping[str, Any]] | None = None,
) -> str:
    """A report that opens in any browser, offline: no scripts, no external files; with
    ``grades``, the people's grades of runs listed after the failed runs."""
    e = html.escape
    latest = latest_results(results)
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{e(title)}: evaluation</title><style>{_STYLE}</style></head><body>",
        f"<h1>{e(title)}</h1><h2>Summary</h2><table><tr><th>Lane</th><th>Pass rate</th>"
        "<th>95% interval</th><th>Steps</th><th>Tool calls</th><th>Format errors</th><th>Loops</th>"
        "<th>Tokens in / out</th><th>Thinking tokens</th><th>Latency p50 / p95</th>"
        "<th>Judge</th></tr>",
    ]
    for s in summarise(results, lanes):
        parts.append(
            f"<tr><td>{e(s.lane)}</td><td>{s.pass_rate:.0%} ({s.passed}/{s.runs})</td>"
            f"<td>{interval_words(s.interval, s.cases, s.runs)}</td><td>{s.mean_steps:.1f}</td>"
            f"<td>{s.tool_calls}</td>"
            f"<td>{s.format_errors}</td><td>{s.loops}</td>"
            f"<td>{'~' * s.estimated}{s.tokens_in:,} / {'~' * s.estimated}{s.tokens_out:,}</td>"
            f"<td>{s.thinking_tokens:,}</td>"
            f"<td>{s.latency_p50_s:.2f} s / {s.latency_p95_s:.2f} s</td>"
            f"<td>{e(s.judge_words()) if s.judge_tokens else '—'}</td></tr>"
        )
    parts.append("</table>")
    parts += _verdicts(verdicts)
    # Each repeat's answer and why it was judged so (checks.described), gathered once for all
    # cells (not by walking every result for each cell: quadratic at 100,000 runs).
    answers: dict[tuple[int, str], list[str]] = {}
    for key, result in sorted(latest.items()):
        answers.setdefault((key.case, key.lane), []).append(described(result.answer, result.checks))
    parts.append("<h2>Cases</h2><table><tr><th>#</th><th>Question</th>")
    parts += [f"<th>{e(lane)}</th>" for lane in lanes]
    parts.append("</tr>")
    for row in grid(questions, lanes, results):
        case = int(row[0]) - 1
        parts.append(f"<tr><td>{row[0]}</td><td>{e(row[1])}</td>")
        for lane, cell in zip(lanes, row[2:], strict=True):
            css = "" if cell == "—" else "fail" if cell_failed(cell) else "pass"
            title = e("; ".join(answers.get((case, lane), [])))
            parts.append(f"<td class='{css}' title='{title}'>{e(cell)}</td>")
        parts.append("</tr>")
    parts.append("</table><h2>Failed runs</h2><ul>")
    for key, result in sorted(latest.items()):
        if not result.passed:
            parts.append(
                f"<li>case {key.case + 1}, {e(key.lane)}, repeat {key.repeat + 1}: "
                f"answered {e(repr(result.answer))}, expected "
                f"{e(repr(result.expected))} ({e(str(result.status))}"
                f"{': ' + e(result.reason) if result.reason else ''})"
                + "".join(f"<br>{e(line)}" for line in failure_lines(result.checks))
                + "</li>"
            )
    parts.append("</ul>")
    if grades:
        parts.append("<h2>Human grades</h2><ul>")
        for key, grade in sorted(grades.items()):
            said = "👍" if grade.get("good") else "👎"
            note = f" {e(str(grade.get('note') or ''))}" if grade.get("note") else ""
            where = f"case {key.case + 1}, {e(key.lane)}, repeat {key.repeat + 1}"
            parts.append(f"<li>{where}: {said}{note}</li>")
        parts.append("</ul>")
    parts.append("</body></html>\n")
    return "".join(parts)


def _verdicts(documents: Sequence[Mapping[str, Any]]) -> list[str]:
    """The arms one factor apart, each with its verdict's sentence and figures (points)."""
    if not documents:
        return []
    e = html.escape
    parts = [
        "<h2>Arms compared</h2><table><tr><th>Arms</th><th>Verdict</th><th>Difference</th>"
        "<th>95% interval</th><th>Cases</th><th>Better / worse</th></tr>"
    ]
    for d in documents:
        low, high = d["ci95_points"]
        parts.append(
            f"<tr><td>{e(str(d['arms']))}</td><td>{e(str(d['sentence']))}</td>"
            f"<td>{d['difference_points']:+.1f} points</td><td>{low:+.1f} to {high:+.1f}</td>"
            f"<td>{d['cases']}</td><td>{d['cases_better']} / {d['cases_worse']}</td></tr>"
        )
    return [*parts, "</table>"]


_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2em;color:#202124}"
    "table{border-collapse:collapse;margin-bottom:1.5em}"
    "td,th{border:1px solid #dadce0;padding:4px 8px;text-align:left}"
    "th{background:#f1f3f4}.pass{background:#e6f4ea}.fail{background:#fce8e6}"
)


# The test set's other formats (core/results/exports.py's TEST_SET_FORMATS lists them all):
# ``results``
# are each run's latest result, as the results file holds it.


def results_markdown(
    questions: Sequence[str], labels: Sequence[str], results: Sequence[EvalResult]
) -> str:
    """Each lane's summary line as a list item, then the grid as a table; every piece is
    literal text (a lane's name is the scenario file's: a model named like an image stays
    text)."""
    header, rows = ["#", "Question", *labels], grid(questions, labels, results)
    lines = ["| " + " | ".join(inline(c) for c in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(inline(c) for c in row) + " |" for row in rows]
    summary = [f"- {inline(s.row())}" for s in summarise(results, labels)]
    return "\n".join([*summary, "", *lines, *_failed_checks(results)]) + "\n"


def _failed_checks(results: Sequence[EvalResult]) -> list[str]:
    """The runs whose checks did not all pass, each with them (a right answer reached by the
    wrong path is a failed cell: this says why); none when every check passed."""
    lines = []
    for key, result in sorted(latest_results(results).items()):
        failures = failure_lines(result.checks)
        if failures:
            where = f"case {key.case + 1}, {key.lane}, repeat {key.repeat + 1}"
            lines.append(f"- {inline(where)}: " + "; ".join(inline(f) for f in failures))
    return ["", "Failed checks:", "", *lines] if lines else []


def results_csv(
    questions: Sequence[str], labels: Sequence[str], results: Sequence[EvalResult]
) -> str:
    """The grid: a header row, then one row per case."""
    out = io.StringIO()
    rows = grid(questions, labels, results)
    csv.writer(out, lineterminator="\n").writerows([["#", "Question", *labels], *rows])
    return out.getvalue()


def results_json(
    runs: Iterable[tuple[EvalResult, Sequence[Any]]],
    grades: Mapping[RunKey, Mapping[str, Any]] | None = None,
) -> str:
    """Every run: its result (verdict, metrics) with its full event trace as dicts, and its
    human grade (``"grade": {"good", "note"}``) where it has one.

    The text ``json.dumps`` gives the list, written a run at a time: each run's dicts are
    dropped once written (the window reads its runs from the database as this goes)."""
    graded = grades or {}
    parts = [
        _in_list(
            {**result.to_dict(), "events": list(events)}
            | ({"grade": dict(graded[result.key])} if result.key in graded else {})
        )
        for result, events in runs
    ]
    return "[\n" + ",\n".join(parts) + "\n]" if parts else "[]"


def _in_list(document: dict[str, Any]) -> str:
    # A level deeper, as inside the list: every line one more space (JSON text holds no raw
    # newline inside a string, so each newline is a line of the layout).
    return " " + json.dumps(document, ensure_ascii=False, indent=1).replace("\n", "\n ")
