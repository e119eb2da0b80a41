"""``react-sandbox optimize SCENARIO``: improve the prompt of one arm on the scenario's test
set, driven by its failing cases (application/optimizer.py; the pure part in
core/optimizing/).

The progress goes to stderr as it happens (runs, cost, the best so far), the outcome to
stdout (``--json``: as JSON): each candidate, the winner's prompt diff and its held-out
verdict. Every accepted candidate is added to the scenario file's prompt history, unstarred,
its origin in its note; the scenario's prompt and its starred versions are never changed:
the winner is applied by the user (the window's Versions tab). The state lives in the
history database (``--db``): ``--resume`` after a stop or a kill goes on with the unfinished
optimization of the same settings and ends as an uninterrupted one would.
Exit codes: 0 done, 1 an error, 2 usage, 3 stopped (Ctrl+C).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from sandbox_app.application.optimize_setup import OptimizeSetup
from sandbox_app.application.optimizer import OptimizeError, Optimizer
from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.backends.registry import key_notice
from sandbox_app.cli.cli_io import EXIT_STOPPED
from sandbox_app.cli.lane_spec import eval_lanes, lane_from_spec
from sandbox_app.cli.prompts_command import diff_lines
from sandbox_app.cli.terminal import say, visible
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.history.history_schema import (
    DATA_ENV,
    FILE_NAME,
    HistoryError,
    default_path,
)
from sandbox_app.core.optimizing.budget import (
    DEFAULT_CANDIDATES,
    DEFAULT_PATIENCE,
    Budget,
    Progress,
)
from sandbox_app.core.optimizing.outcome import Candidate, Outcome
from sandbox_app.core.optimizing.split import DEFAULT_HELD_OUT
from sandbox_app.core.results.compare import read_prices
from sandbox_app.core.running.backend import BackendError
from sandbox_app.core.scenarios.lane_settings import SettingError, parse_option
from sandbox_app.core.scenarios.prompt_versions import PromptEntry, PromptVersion, added
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.scenario_file import SaveRefused, load_scenario, save_scenario
from sandbox_app.core.scenarios.test_set import undefined_in_cases
from sandbox_app.core.tools.policy import allow
from sandbox_app.core.untrusted.file_reader import ReadError

NAME = "react-sandbox optimize"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=NAME,
        description="Improve one arm's prompt on the scenario's test set: a reflection model "
        "reads the failing cases and proposes whole new templates; each candidate runs on a "
        "training split, the best is checked against the current version on held-out cases. "
        "Candidates go to the file's prompt history (unstarred); the prompt is never changed.",
        epilog="exit codes: 0 done (whatever was found), 1 an error, 2 usage, 3 stopped "
        "(Ctrl+C; --resume goes on)",
    )
    p.add_argument("scenario", help="a scenario file with a test set")
    p.add_argument(
        "--lane",
        help="the arm to improve, as eval --lane writes it (default: the "
        "scenario's lane when it has one, else the offline model)",
    )
    p.add_argument(
        "--prompt",
        metavar="VERSION",
        help="improve this prompt version (id prefix "
        "or name) rather than the scenario's current prompt",
    )
    p.add_argument(
        "--reflect",
        metavar="LANE",
        help="the reflection model, as eval --lane "
        "writes it; scripted plays the file's script.reflections (default: --lane's)",
    )
    p.add_argument(
        "--candidates",
        metavar="N",
        default=str(DEFAULT_CANDIDATES),
        help=f"candidates to propose at most (default {DEFAULT_CANDIDATES})",
    )
    p.add_argument(
        "--runs", metavar="N", help="runs of the arm at most, the held-out check included"
    )
    p.add_argument(
        "--dollars", metavar="X", help="dollars at most, runs and reflections (needs --prices)"
    )
    p.add_argument(
        "--patience",
        metavar="N",
        default=str(DEFAULT_PATIENCE),
        help="stop after this many "
        f"candidates in a row that are no better (default {DEFAULT_PATIENCE})",
    )
    p.add_argument(
        "--seed", metavar="N", default="0", help="the split's and the parents' seed (default 0)"
    )
    p.add_argument(
        "--held-out",
        metavar="SHARE",
        default=str(DEFAULT_HELD_OUT),
        help=f"the share of cases kept back to judge the winner on (default {DEFAULT_HELD_OUT})",
    )
    p.add_argument(
        "--repeat", metavar="N", default="1", help="runs per case and candidate (default 1)"
    )
    p.add_argument(
        "--concurrency", metavar="N", default="4", help="requests at once per server, 1-64"
    )
    p.add_argument(
        "--timeout",
        metavar="SECONDS",
        default="60",
        help="seconds to wait for a server (default 60)",
    )
    p.add_argument(
        "--prices",
        metavar="FILE",
        help="a JSON price table, model -> [input, output] dollars per million tokens",
    )
    p.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="TOOL",
        help="run this tool without asking (repeatable), as for eval",
    )
    p.add_argument(
        "--trust-file-lanes",
        action="store_true",
        help="send keys to the server the scenario's lane names, as eval does",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="go on with the unfinished optimization of this scenario with these settings",
    )
    p.add_argument("--json", action="store_true", help="print the outcome as JSON")
    p.add_argument(
        "--db",
        metavar="PATH",
        help=f"the history database that keeps the optimization's state (default: {FILE_NAME} "
        f"in the app's data folder, or in ${DATA_ENV}); optimize cannot run without one",
    )
    return p


def optimize_command(argv: list[str], out: TextIO | None = None) -> int:
    out = out or sys.stdout
    args = parser().parse_args(argv)
    try:
        setup = _setup(args)
    except (ScenarioError, ReadError, ValueError, KeyError) as err:
        say(f"{NAME}: {err}")
        return 1
    try:  # not application/history.py's History, which goes on without a database
        store = HistoryStore(Path(args.db) if args.db else default_path())
    except HistoryError as err:
        say(f"{NAME}: {err}; optimize keeps its state in the history database")
        return 1
    for lane in {setup.arm.label: setup.arm, setup.reflect.label: setup.reflect}.values():
        if notice := key_notice(lane.config, setup.keys):
            say(f"{NAME}: {lane.label}: {notice}")
    path = Path(args.scenario)
    optimizer = Optimizer(
        setup, store, _progress, lambda c, parent: _keep(path, c, parent, optimizer.id)
    )
    try:
        outcome = asyncio.run(optimizer.run(resume=args.resume))
    except KeyboardInterrupt:
        say(f"{NAME}: stopped; what it did is in the history, --resume goes on")
        return EXIT_STOPPED
    except BackendError as err:  # the reflection model: everything before it is stored
        say(f"{NAME}: {err}; what it did is in the history, --resume goes on")
        return 1
    except (OptimizeError, HistoryError, SettingError) as err:
        say(f"{NAME}: {err}")
        return 1
    finally:
        store.close()
    _report(outcome, args.json, out)
    return 0


def _setup(args: argparse.Namespace) -> OptimizeSetup:
    timeout = parse_option("timeout", args.timeout, "--timeout")
    scenario = load_scenario(args.scenario)
    if not scenario.test_set:
        raise ValueError(f"{Path(args.scenario).name} has no test set")
    if undefined := undefined_in_cases(scenario):
        raise ValueError(undefined)
    unknown = [name for name in args.allow if name not in scenario.enabled_tools]
    if unknown:
        raise ValueError(f"--allow {unknown[0]}: no such tool is enabled in this scenario")
    allowance = allow(scenario.policies, args.allow)
    scenario = scenario.with_changes(policies=allowance.policies)
    lanes_args = argparse.Namespace(
        lane=[args.lane] if args.lane else [],
        prompt=[args.prompt] if args.prompt else [],
        timeout=timeout,
        trust_file_lanes=args.trust_file_lanes,
    )
    lanes = eval_lanes(lanes_args, scenario)
    if len(lanes) != 1:
        raise ValueError(f"the scenario has {len(lanes)} lanes: choose the arm with --lane")
    arm = lanes[0]
    reflect = lane_from_spec(args.reflect, timeout, scenario.model) if args.reflect else arm
    dollars = _number(args.dollars, "--dollars", float, least=0) if args.dollars else None
    prices = read_prices(args.prices) if args.prices else {}
    if dollars is not None:
        for lane in (arm, reflect):
            model = lane.config.model or lane.config.kind.id
            if lane.config.kind.server and model not in prices:
                raise ValueError(f"--dollars needs the price of {model} (--prices FILE)")
    budget = Budget(
        candidates=int(_number(args.candidates, "--candidates", int)),
        runs=int(_number(args.runs, "--runs", int)) if args.runs else None,
        dollars=dollars,
        patience=int(_number(args.patience, "--patience", int)),
    )
    held_out = _number(args.held_out, "--held-out", float, least=0)
    if not 0 < held_out < 1:
        raise ValueError(f"--held-out must be between 0 and 1 (got {args.held_out})")
    if len(scenario.test_set) < 2:
        raise ValueError("optimize needs two cases at least: one to learn from, one to check")
    return OptimizeSetup(
        scenario,
        str(Path(args.scenario).resolve()),
        arm,
        reflect,
        budget,
        seed=int(_number(args.seed, "--seed", int, least=0)),
        held_out=held_out,
        repeats=parse_option("repeat", args.repeat, "--repeat"),
        concurrency=parse_option("concurrency", args.concurrency, "--concurrency"),
        prices=prices,
        keys=KeyStore(),
        trusted=allowance.trusted,
    )


def _number(text: str, option: str, kind: type[int] | type[float], least: float = 1) -> int | float:
    """``text`` as a whole number (``int``) or a number, at least ``least``; one line if not."""
    try:
        value = kind(text)
    except ValueError:
        raise ValueError(f"{option} must be a number (got {text!r})") from None
    if not (math.isfinite(value) and value >= least):
        raise ValueError(f"{option} must be at least {least:g} (got {text})")
    return value


def _progress(p: Progress) -> None:
    """A line a step; on a terminal, the run count kept live in between."""
    cost = f" · ${p.dollars:.4f}" if p.dollars is not None else ""
    best = f"best: candidate {p.best} {p.best_rate:.0%}"
    figures = f"[{p.runs} runs{cost} · {p.candidates} candidates · {best}]"
    live = sys.stderr.isatty()
    if p.line:
        sys.stderr.write(("\r\033[K" if live else "") + visible(f"{figures} {p.line}") + "\n")
    elif live:
        sys.stderr.write(f"\r{figures}\033[K")
    sys.stderr.flush()


def _keep(path: Path, candidate: Candidate, parent: PromptVersion, optimization: int) -> None:
    """An accepted candidate into the file's prompt history (read again now: the file may
    have changed since), unstarred, named ``opt3.2``, its origin its note."""
    assert candidate.version is not None
    try:
        scenario = load_scenario(path)
        history = added(
            scenario.prompt_history,
            candidate.version,
            datetime.now(UTC),
            name=f"opt{optimization}.{candidate.number}",
            note=candidate.origin(parent.id),
        )
        if history != scenario.prompt_history:
            save_scenario(scenario.with_changes(prompt_history=history), path)
    except (ScenarioError, SaveRefused, OSError) as err:
        say(f"{NAME}: {candidate.name} not added to {path.name}'s prompt history: {err}")


def _report(outcome: Outcome, as_json: bool, out: TextIO) -> None:
    winner = outcome.version(outcome.winner) if outcome.winner is not None else None
    base = outcome.version(0)
    diff: list[str] = []
    if winner is not None and base is not None:
        now = datetime.now(UTC)
        diff = diff_lines(PromptEntry(base, now, now), PromptEntry(winner, now, now))
    if as_json:
        document = {**outcome.document(), "diff": diff}
        out.write(json.dumps(document, ensure_ascii=False, indent=2) + "\n")
        return
    lines = [visible(line) for line in outcome.lines()]  # the diagnosis is a model's words
    if diff:  # made visible by diff_lines
        lines += ["prompt diff (current → winner):", *diff]
    out.write("".join(line + "\n" for line in lines))
