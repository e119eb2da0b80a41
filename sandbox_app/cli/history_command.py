"""``react-sandbox history list|show ID|diff A B``: the history database on a terminal.

Every evaluation (the window's test sets and ``eval``'s) is stored as it runs
(application/history.py); ``list`` shows them newest first with each one's pass rate and its
95 % Wilson interval, ``show`` one evaluation's lanes and failed runs, ``diff`` the runs that
flipped from A to B. Scenario titles, lanes, questions and answers came from files and
models: printed through ``terminal.visible``. Exit codes: 0 done, 1 an error (no database,
no such evaluation, a file that is not a history), 2 a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from sandbox_app.cli.eval_history import add_db_option, history_at
from sandbox_app.cli.terminal import json_visible, say, visible
from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.results.history_db import EvaluationRow, HistoryStore
from sandbox_app.core.results.history_diff import Flip, HistoryDiff, diff_evaluations, rate
from sandbox_app.core.results.history_schema import HistoryError, default_path
from sandbox_app.core.scenarios.prompt_versions import SHORT_ID


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="react-sandbox history",
        description="Past evaluations (each test-set run, in the window or by `eval`): "
        "list them, show one, or the runs that flipped between two.",
    )
    commands = p.add_subparsers(dest="command", required=True, metavar="list|show|diff")
    for name, text in (
        ("list", "every evaluation, newest first, with its pass rate"),
        ("show", "one evaluation: its lanes and its failed runs"),
        ("diff", "the runs that flipped from pass to fail, and from fail to pass, A → B"),
    ):
        sub = commands.add_parser(name, help=text)
        if name == "show":
            sub.add_argument("id", type=int, metavar="ID")
        if name == "diff":
            sub.add_argument("a", type=int, metavar="A")
            sub.add_argument("b", type=int, metavar="B")
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
        history.close()
    if args.json:
        out.write(json_visible(json.dumps(document, ensure_ascii=False, indent=1)) + "\n")
    else:
        out.write("".join(visible(line) + "\n" for line in lines))
    return 0


def _answer(store: HistoryStore, args: argparse.Namespace) -> tuple[Any, list[str]]:
    if args.command == "list":
        rows = store.evaluations()
        return [row.to_dict() for row in rows], [_row(row) for row in rows]
    if args.command == "show":
        row = store.evaluation(args.id)
        failed = [r for r in store.results(args.id) if not r.passed]
        document = {**row.to_dict(), "failed": [r.to_dict() for r in failed]}
        return document, _show(row, failed)
    diff = diff_evaluations(store, args.a, args.b)
    questions = _questions(store, diff)
    document = {
        "a": args.a,
        "b": args.b,
        "compared": diff.compared,
        "only_a": diff.only_first,
        "only_b": diff.only_second,
        "flips": [_flip_dict(f, questions) for f in (*diff.broke, *diff.fixed)],
    }
    return document, _diff(diff, questions)


def _row(row: EvaluationRow) -> str:
    versions = ", ".join(v[:SHORT_ID] for v in row.versions) or "—"
    state = "" if row.finished else " · not finished"
    return (
        f"#{row.id}  {row.started[:16].replace('T', ' ')}  {row.scenario_title} · "
        f"{len(row.lanes)} lane{'s' * (len(row.lanes) != 1)} · prompt {versions} · "
        f"{rate(row.passed, row.runs)}{state}"
    )


def _show(row: EvaluationRow, failed: list[EvalResult]) -> list[str]:
    lines = [_row(row), f"scenario: {row.scenario_path or '(standard input or the window)'}"]
    lines += [f"  {lane}: {rate(t.passed, t.runs)}" for lane, t in row.by_lane.items()]
    if failed:
        lines.append(f"failed runs ({len(failed)}):")
    for result in failed:
        lines.append(
            f"  case {result.case + 1} · {result.lane} · repeat {result.repeat + 1}: "
            f"{result.answer!r}"
        )
    return lines


def _questions(store: HistoryStore, diff: HistoryDiff) -> dict[tuple[int, int], str]:
    """The flipped runs' questions (read for those rows only, not the whole evaluation)."""
    keys = [(f.lane, f.case, f.repeat) for f in diff.flips]
    return {(r.case, r.repeat): r.question or "" for r in store.results(diff.first, keys)}


def _flip_dict(flip: Flip, questions: dict[tuple[int, int], str]) -> dict[str, Any]:
    return {
        "case": flip.case + 1,
        "repeat": flip.repeat + 1,
        "lane": flip.lane,
        "other_lane": flip.other_lane,
        "was": "pass" if flip.was else "fail",
        "now": "pass" if flip.now else "fail",
        "question": questions.get((flip.case, flip.repeat), ""),
    }


def _diff(diff: HistoryDiff, questions: dict[tuple[int, int], str]) -> list[str]:
    lines = [
        f"#{diff.first} → #{diff.second}: {diff.compared} runs compared, "
        f"{len(diff.broke)} pass → fail, {len(diff.fixed)} fail → pass"
        + (f" ({diff.only_first} only in #{diff.first})" if diff.only_first else "")
        + (f" ({diff.only_second} only in #{diff.second})" if diff.only_second else "")
    ]
    for title, flips in (("pass → fail", diff.broke), ("fail → pass", diff.fixed)):
        if flips:
            lines.append(f"{title}:")
        for flip in flips:
            lane = flip.lane if flip.lane == flip.other_lane else f"{flip.lane} / {flip.other_lane}"
            lines.append(
                f"  case {flip.case + 1} · {lane} · repeat {flip.repeat + 1}: "
                f"{questions.get((flip.case, flip.repeat), '')}"
            )
    return lines
