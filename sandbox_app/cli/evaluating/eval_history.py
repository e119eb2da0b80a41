"""``eval --db PATH``: each result of an evaluation stored in the history database as it
ends (application/history.py), beside the results file, which stays for CI and resumes;
``run --db PATH``: the run stored as a single run, as the window's Run tab stores its own.

A resumed evaluation (``--resume``, ``--only-failed``) goes on with the newest evaluation
written beside the same results file, so history counts its runs once, whole.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sandbox_app.application.history import EvaluationLog, History
from sandbox_app.cli.cli_io import STDIN
from sandbox_app.cli.terminal import say
from sandbox_app.core.history.history_schema import DATA_ENV, FILE_NAME
from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.scenarios.scenario import Scenario

if TYPE_CHECKING:  # `run` takes --db from here too, without the test-set runner
    from sandbox_app.application.backend_choice import BackendChoice


def add_db_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        metavar="PATH",
        help=f"the history database (default: {FILE_NAME} in the app's data folder, or in "
        f"${DATA_ENV}); one that cannot be used is said in one line and the runs go on",
    )


def history_at(db: str | None, command: str) -> History:
    """The history ``--db`` names (or the default), its problem said as ``command``'s."""
    return History(Path(db) if db else None, lambda line: say(f"react-sandbox {command}: {line}"))


def scenario_place(args: argparse.Namespace) -> str:
    """The scenario file as the history names it ("" for one from standard input)."""
    return "" if args.scenario == STDIN else str(Path(args.scenario).resolve())


def eval_log(
    args: argparse.Namespace,
    scenario: Scenario,
    lanes: Sequence[BackendChoice],
    results_path: Path,
    done: Iterable[EvalResult],
) -> EvaluationLog:
    if getattr(args, "shard", None):  # its runs reach the history when merged (eval --merge)
        return EvaluationLog(History(keep=False), None, {})
    history = history_at(args.db, "eval")
    return history.begin(
        scenario.title,
        scenario_place(args),
        lanes,
        len(scenario.test_set),
        args.repeat,
        "eval",
        results_file=str(results_path.resolve()),
        resume=args.resume or args.only_failed,
        done=done,
    )
