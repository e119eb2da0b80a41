"""``eval --shard I/N``, ``eval --merge FILE…`` and ``eval --ray [ADDRESS]``: one evaluation
made in pieces, on one machine or many, and folded back into one.

A shard is the runs of the plan whose identity hashes to it (core/results/shards.py); it
writes its own results file (``SCENARIO.results.shard-I-of-N.jsonl``), replaced when the
shard is run again (a rerun replaces, never doubles; ``--resume`` goes on with it instead),
and nothing to the history: its runs reach the history when merged.

Why the merge is ``eval --merge`` and not a ``history`` command: merging is the last step of
the same evaluation, and the evaluation is what eval's flags say (the scenario, its lanes,
prompts and repeats: the plan the shards must cover); given the same flags, ``--merge``
writes the one results file an unsharded run would have written and then ends exactly as
that run ends — the history's evaluation, the summary, ``--junit``, ``--report``,
``--baseline``, ``--min-pass-rate`` — by the same code, so a merged evaluation cannot end
differently from an unsharded one.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Collection, Sequence
from pathlib import Path

from sandbox_app.cli.terminal import say
from sandbox_app.core.results.eval_result import RunKey
from sandbox_app.core.results.shards import Shard, merge
from sandbox_app.core.running.metrics import plural


def add_shard_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--shard",
        metavar="I/N",
        help="run only the I-th of N slices of the runs (by each run's case, lane and "
        "repeat, whatever the cases' order) into its own results file, kept out of the "
        "history until merged",
    )
    p.add_argument(
        "--merge",
        nargs="+",
        metavar="FILE",
        help="fold these shard results files into one evaluation (the same flags as the "
        "shards): its results file, its history, summary and --junit as one run would make",
    )
    p.add_argument(
        "--ray",
        nargs="?",
        const="auto",
        metavar="ADDRESS",
        help="run the shards as Ray tasks on this cluster (default: the one `ray start` "
        "made here, or a local one), then merge; needs react-sandbox[ray]",
    )
    p.add_argument(
        "--shards",
        default="",
        metavar="N",
        help="with --ray: how many shards (default: the cluster's CPUs)",
    )


def check_shard_options(args: argparse.Namespace) -> Shard | None:
    """The shard asked for (None: the whole plan); a ValueError of one line for flags that
    do not go together."""
    chosen = [f"--{name}" for name in ("shard", "merge", "ray") if getattr(args, name)]
    if len(chosen) > 1:
        raise ValueError(f"{' and '.join(chosen)} do not go together: choose one")
    if (args.merge or args.ray) and (args.resume or args.only_failed):
        raise ValueError(f"{chosen[0]} makes a new evaluation: --resume goes with --shard")
    if args.shards and not args.ray:
        raise ValueError("--shards goes with --ray (--shard I/N runs one shard)")
    return Shard.parse(args.shard) if args.shard else None


def shard_count(args: argparse.Namespace, cpus: int) -> int:
    if not args.shards:
        return max(1, cpus)
    return Shard.parse(f"1/{args.shards}").count


def default_results(scenario: str, shard: Shard | None) -> Path:
    """``SCENARIO.results.jsonl``, a shard's ``SCENARIO.results.shard-2-of-4.jsonl``."""
    suffix = shard.file_suffix() if shard is not None else ""
    return Path(Path(scenario).with_suffix(f".results{suffix}.jsonl").name)


def shard_file(results: Path, shard: Shard) -> Path:
    """Where ``--ray`` keeps a shard's results, beside the merged file."""
    return results.with_name(f"{results.name.removesuffix('.jsonl')}{shard.file_suffix()}.jsonl")


def merge_into(results: Path, files: Sequence[Path], planned: Collection[RunKey]) -> None:
    """Write the shards' runs to ``results`` (through a temporary file: a merge that fails
    leaves nothing behind); a ValueError of one line when a planned run is in none."""
    for path in files:
        if not path.is_file():
            raise ValueError(f"--merge {path}: no such file")
    handle, temporary = tempfile.mkstemp(prefix=".merging-", dir=results.parent or ".")
    try:
        with os.fdopen(handle, "wb") as out:
            merged = merge(files, planned, out)
        if merged.missing:
            raise ValueError(
                f"{plural(merged.missing, 'run')} of this evaluation are in none of the "
                f"{plural(len(files), 'file')}: a shard is missing or was cut short (run it "
                "again with --shard I/N --resume), or the flags differ from the shards'"
            )
        os.replace(temporary, results)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    if merged.replaced:
        say(
            f"react-sandbox eval: {plural(merged.replaced, 'run')} found in two files: "
            "the later file's result kept (a rerun shard replaces)"
        )
