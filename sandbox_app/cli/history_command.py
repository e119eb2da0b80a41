"""``react-sandbox history list|show ID|diff A B|baseline ID``: the history database on a
terminal.

Every evaluation (the window's test sets and ``eval``'s) is stored as it runs
(application/history.py); ``list`` shows them newest first with each one's pass rate and its
95 % interval, by case when cases repeat (and the optimization whose runs it holds), ``show`` one
evaluation's lanes and failed runs (and core/comparing/evaluation_details.py: its optimization's
candidates and outcome, its human grades, pairwise choices and the judge's agreement), ``diff``
A and B arm by arm (core/comparing/: paired by what made each arm, per case k/N → k/N, the
difference with its paired interval and a verdict), ``baseline`` marks the evaluation later ones
of its scenario are compared with (``eval --baseline latest``). Scenario titles, lanes,
questions and answers came from files and models: printed through ``terminal.visible``. Exit
codes: 0 done, 1 an error (no database, no such evaluation, a file that is not a history), 2 a
usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import cache
from pathlib import Path
from typing import Any, TextIO

from sandbox_app.cli.evaluating.eval_history import add_db_option, history_at
from sandbox_app.cli.terminal import json_visible, say, visible
from sandbox_app.core.comparing.arm_diff import CaseChange, verdict_document
from sandbox_app.core.comparing.arms import lane_title, version_label
from sandbox_app.core.comparing.evaluation_details import details
from sandbox_app.core.comparing.evaluations import diff_evaluations, version_names
from sandbox_app.core.comparing.report_lines import diff_lines
from sandbox_app.core.estimates.pass_rates import rate_by_case
from sandbox_app.core.history.history_arms import CaseSpread, baselines, case_spreads, set_baseline
from sandbox_app.core.history.history_db import EvaluationRow, HistoryStore
from sandbox_app.core.history.history_optimizations import optimized
from sandbox_app.core.history.history_rows import MAX_ID, VERDICTS
from sandbox_app.core.history.history_schema import HistoryError, default_path
from sandbox_app.core.results.eval_result import EvalResult


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="react-sandbox history",
        description="Past evaluations (each test-set run, in the window or by `eval`): "
        "list them, show one, compare two arm by arm, or mark a baseline.",
    )
    commands = p.add_subparsers(dest="command", required=True, metavar="list|show|diff|baseline")
    for name, text in (
        ("list", "every evaluation, newest first, with its pass rate"),
        ("show", "one evaluation: its lanes, failed runs, grades, optimization"),
        ("diff", "A → B arm by arm: each case's k/N, the difference with its 95 % interval"),
        ("baseline", "mark evaluation ID as its scenario's baseline (eval --baseline latest)"),
    ):
        sub = commands.add_parser(name, help=text)
        if name in ("show", "baseline"):
            sub.add_argument("id", type=_id, metavar="ID")
        if name == "diff":
            sub.add_argument("a", type=_id, metavar="A")
            sub.add_argument("b", type=_id, metavar="B")
        add_db_option(sub)
        sub.add_argument("--json", action="store_true", help="JSON on standard output")
    return p


def history_command(argv: list[str], out: TextIO | None = None) -> int:
    out = out or sys.stdout
    args = parser().parse_args(argv)
    path = Path(args.db) if args.db else default_path()
    if not path.exists():  # nothing stored there yet: a look makes no file
        say(f"react-sandbox history: no history yet ({path})")
        return 0 if args.command == "list" else 1
    history = history_at(args.db, "history")
    if history.store is None:  # said, in one line
        return 1
    try:
        document, lines = _answer(history.store, args)
    except HistoryError as err:
        say(f"react-sandbox history: {err}")
        return 1
    finally:
        for skipped in history.store.skipped():  # bad rows read past: each its line
            say(f"react-sandbox history: {skipped}")
        history.close()
    if args.json:
        out.write(json_visible(json.dumps(document, ensure_ascii=False, indent=1)) + "\n")
    else:
        out.write("".join(visible(line) + "\n" for line in lines))
    return 0


def _id(text: str) -> int:
    """An evaluation's number, as SQLite can hold it (argparse's one line otherwise)."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text[:40]!r}") from None
    if not 1 <= number <= MAX_ID:
        raise argparse.ArgumentTypeError(f"no evaluation has the number {text[:40]}")
    return number


def _answer(store: HistoryStore, args: argparse.Namespace) -> tuple[Any, list[str]]:
    if args.command == "list":
        rows, marked, optimizing = store.evaluations(), baselines(store), optimized(store)
        spreads = case_spreads(store)
        store.skip_bad("", (), VERDICTS)  # rows the spreads leave out, said
        lines = [
            _row(row, spreads)
            + (" · baseline" if row.id in marked else "")
            + (f" · optimization {optimizing[row.id]}" if row.id in optimizing else "")
            for row in rows
        ]
        listed = [
            {**row.to_dict(), "baseline": row.id in marked, "optimization": optimizing.get(row.id)}
            for row in rows
        ]
        return listed, lines
    if args.command == "show":
        row = store.evaluation(args.id)
        failed = [r for r in store.results(args.id) if not r.passed]
        extra, more = details(store, row)
        document = {**row.to_dict(), "failed": [r.to_dict() for r in failed], **extra}
        spreads = case_spreads(store, args.id)
        store.skip_bad("AND evaluation_id = ?", (args.id,), VERDICTS)
        return document, _show(row, failed, spreads) + more
    if args.command == "baseline":
        set_baseline(store, args.id)
        row = store.evaluation(args.id)
        return row.to_dict(), [f"#{row.id} is now the baseline of {row.scenario_title}"]
    diff = diff_evaluations(store, args.a, args.b)
    first, second = f"#{args.a}", f"#{args.b}"
    document = {
        "a": args.a,
        "b": args.b,
        "comparisons": [
            {**verdict_document(c, first, second), "cases": [_case(x) for x in c.changes]}
            for c in diff.comparisons
        ],
        "only_a": diff.only_first,
        "only_b": diff.only_second,
    }
    return document, diff_lines(diff, first, second)


Spreads = dict[tuple[int, str], CaseSpread]  # history_arms.case_spreads: intervals by case


def _row(row: EvaluationRow, spreads: Spreads) -> str:
    names = _names(row.scenario_path)
    versions = ", ".join(version_label(v, names) for v in row.versions) or "—"
    state = "" if row.finished else " · not finished"
    return (
        f"#{row.id}  {row.started[:16].replace('T', ' ')}  {row.scenario_title} · "
        f"{len(row.lanes)} lane{'s' * (len(row.lanes) != 1)} · prompt {versions} · "
        f"{rate_by_case(spreads.get((row.id, ''), {}))}{state}"
    )


@cache  # one read of each scenario file however many evaluations name it
def _names(scenario_path: str) -> dict[str, str]:
    return version_names(scenario_path)


def _show(row: EvaluationRow, failed: list[EvalResult], spreads: Spreads) -> list[str]:
    lines = [
        _row(row, spreads),
        f"scenario: {row.scenario_path or '(standard input or the window)'}",
    ]
    lines += [
        f"  {lane_title(lane)}: {rate_by_case(spreads.get((row.id, lane), {}))}"
        for lane in row.by_lane
    ]
    if failed:
        lines.append(f"failed runs ({len(failed)}):")
    for result in failed:
        lines.append(
            f"  case {result.case + 1} · {result.lane} · repeat {result.repeat + 1}: "
            f"{result.answer!r}"
        )
    return lines


def _case(change: CaseChange) -> dict[str, Any]:
    return {
        "case": change.case + 1,
        "question": change.b.question,
        "was": change.a.text(),
        "now": change.b.text(),
        "change_points": round(change.change * 100),
    }
