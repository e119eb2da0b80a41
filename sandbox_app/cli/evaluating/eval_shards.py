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
import io
import os
import tempfile
from collections.abc import Callable, Collection, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from sandbox_app.application.one_behind import OneBehind
from sandbox_app.cli.cli_io import STDIN
from sandbox_app.cli.terminal import say
from sandbox_app.core.results.eval_result import RunKey
from sandbox_app.core.results.evaluation import LaneTally
from sandbox_app.core.results.result_stream import LineParts, Scan, split_line
from sandbox_app.core.results.shards import Merge, Shard
from sandbox_app.core.running.metrics import plural
from sandbox_app.core.scenarios.scenario_file import MAX_FILE_BYTES
from sandbox_app.core.untrusted.file_reader import ReadError, display_name, one_line, read_bytes


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


WRITTEN_LINES = 500  # lines of the merged file written at once (~7 MB)


class Merging:
    """``--merge``'s shard files (or ``--ray``'s) as the one results file ``results``:
    checked first (a planned run in none of them: a ValueError of one line, nothing
    written), then written by :meth:`written`."""

    def __init__(self, results: Path, files: Sequence[Path], planned: Collection[RunKey]):
        for path in files:
            if not path.is_file():
                raise ValueError(f"--merge {path}: no such file")
        self.results, self.merge = results, Merge(files, planned)
        if self.merge.missing:
            raise ValueError(
                f"{plural(self.merge.missing, 'run')} of this evaluation are in none of the "
                f"{plural(len(files), 'file')}: a shard is missing or was cut short (run it "
                "again with --shard I/N --resume), or the flags differ from the shards'"
            )
        if self.merge.replaced:
            say(
                f"react-sandbox eval: {plural(self.merge.replaced, 'run')} found in two "
                "files: the later file's result kept (a rerun shard replaces)"
            )

    def written(self, tallies: dict[str, LaneTally], found: Scan) -> Iterator[LineParts]:
        """Each run's line written to the results file (through a temporary file, put in
        place once whole), counted in its lane's tally and in ``found`` (what the file
        holds, as a scan of it would say), and given on with its trace unparsed (for the
        history database): each line read once, its trace never parsed."""
        name = display_name(self.results)
        handle, temporary = tempfile.mkstemp(prefix=".merging-", dir=self.results.parent)
        try:
            # The lines written a few MB at a time on a thread of their own (one_behind.py),
            # while the next are read: a disk taking 1 GB is then not waited for line by line.
            with os.fdopen(handle, "wb") as out, OneBehind("merged-file") as writer:
                number, lines = 0, list[bytes]()
                for key, raw in self.merge.lines():
                    try:
                        parts = split_line(raw, f"{name} line {number + 1}")
                    except ReadError:
                        found.damaged += 1  # said as a resume says it, not counted
                        continue
                    number += 1
                    lines += (raw, b"\n")
                    if len(lines) == WRITTEN_LINES * 2:
                        writer.hand(partial(_write_joined, out, lines))
                        lines = []
                    found.latest[key], found.lines[key] = parts.result.passed, number
                    tallies.setdefault(key.lane, LaneTally()).add(parts.result)
                    yield parts
                writer.hand(partial(_write_joined, out, lines))
            os.replace(temporary, self.results)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)


def _write_joined(out: BinaryIO, lines: list[bytes]) -> None:
    """Lines written in one call (on the writing thread: the copy is not the reader's)."""
    out.write(b"".join(lines))


# ---- eval --ray: the shards as Ray tasks ----------------------------------------------------
#
# Tasks, not a Ray job: a task's return value comes back to this process (the shard's results
# file as bytes), so the cluster needs no file system shared with it, and ``max_retries``
# makes a task whose worker died run again elsewhere — the retried shard starts its file
# afresh, so it replaces, never doubles. A job (``ray job submit``) would be one driver on
# the cluster doing what this process does, its results left on the cluster's disk.
#
# Keys never travel in a task's arguments (the flags sent are the lanes, prompts, repeats,
# limits: no key; the scenario file holds none): each worker's eval takes them from its own
# environment or keyring by the one key rule (backends/catalogue/keys.py), as `eval` does
# here. A node gets them from the environment `ray start` ran in (its workers inherit it).
# Ray's ``runtime_env={"env_vars": …}`` would carry them, but is written into the cluster's
# job table and dashboard: a key would travel and be kept, so it is not used.

MAX_RETRIES = 3  # a shard whose worker died is run again up to this many times
# The flags a shard is given as they were given here: they make the plan and the runs.
SENT_FLAGS = ("lane", "prompt", "allow")


def shard_argv(args: argparse.Namespace) -> list[str]:
    argv = [f"--{name}={value}" for name in SENT_FLAGS for value in getattr(args, name)]
    argv += [f"--repeat={args.repeat}", f"--concurrency={args.concurrency}"]
    argv += [f"--timeout={args.timeout}"] + ["--trust-file-lanes"] * args.trust_file_lanes
    # The cache a worker keeps is on its own node, at the path this machine would use: made
    # absolute here, as a worker runs its shard in a folder of its own.
    argv += [f"--cache={Path(args.cache).absolute()}"] if args.cache else []
    return argv


def run_shard(
    command: Callable[[list[str], TextIO, TextIO], int],
    scenario: tuple[str, bytes],
    prices: bytes | None,
    argv: list[str],
    shard: str,
) -> tuple[int, bytes, str]:
    """On a worker: ``command`` (eval's) on one shard in a folder of its own; its exit code,
    its results file and its last line. ``command`` comes by reference (its module imported
    on the worker), so this module never imports eval's."""
    with tempfile.TemporaryDirectory(prefix="react-sandbox-shard-") as folder:
        place = Path(folder) / scenario[0]
        place.write_bytes(scenario[1])
        out = Path(folder) / "results.jsonl"
        extra = [f"--prices={_written(Path(folder) / 'prices.json', prices)}"] if prices else []
        said = io.StringIO()
        code = command([str(place), *argv, *extra, f"--shard={shard}", f"--out={out}"], said, said)
        lines = said.getvalue().strip().splitlines()
        # Its last line, and a cache it could not use: said where the shard's end is said.
        last = [line for line in lines[:-1] if "--cache" in line] + lines[-1:]
        return code, out.read_bytes() if out.exists() else b"", " · ".join(last)


def _written(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def run_on_ray(
    args: argparse.Namespace,
    results: Path,
    command: Callable[[list[str], TextIO, TextIO], int],
    progress: TextIO,
) -> list[Path]:
    """Each shard a Ray task on the cluster ``args.ray`` names; each shard's file written
    beside ``results`` as it comes back, said on ``progress``; the files, for the merge."""
    try:
        import ray
    except ImportError:
        raise ValueError(
            "--ray needs Ray: pip install 'react-sandbox[ray]' (uv run --extra ray …)"
        ) from None
    if args.scenario == STDIN:
        raise ValueError("--ray needs a scenario file, not standard input")
    scenario = (Path(args.scenario).name, read_bytes(args.scenario, MAX_FILE_BYTES, "a scenario"))
    prices = read_bytes(args.prices, MAX_FILE_BYTES, "a price table") if args.prices else None
    try:  # a cluster that cannot be reached, a shard that died past its retries: one line
        return _shards_on_ray(ray, args, (scenario, prices), results, command, progress)
    except (ray.exceptions.RayError, ConnectionError, RuntimeError) as err:
        raise ValueError(f"--ray: {one_line(str(err))}") from None
    finally:
        ray.shutdown()


def _shards_on_ray(
    ray: Any,
    args: argparse.Namespace,
    files: tuple[tuple[str, bytes], bytes | None],
    results: Path,
    command: Callable[[list[str], TextIO, TextIO], int],
    progress: TextIO,
) -> list[Path]:
    scenario, prices = files
    # Under `uv run`, Ray would ship this folder to the workers as a uv project of their own
    # (its uv hook); a worker runs the react-sandbox its node has installed instead.
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    ray.init(address=None if args.ray == "auto" else args.ray, logging_level="ERROR")
    count = shard_count(args, int(ray.cluster_resources().get("CPU", 1)))
    task = ray.remote(max_retries=MAX_RETRIES, num_cpus=1)(run_shard)
    argv = shard_argv(args)
    shards = {
        task.remote(command, scenario, prices, argv, str(Shard(i, count))): Shard(i, count)
        for i in range(count)
    }
    written, pending = [], list(shards)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        shard = shards[done[0]]
        code, data, last = ray.get(done[0])
        if code != 0:
            raise ValueError(f"shard {shard} on Ray: {last or f'exit code {code}'}")
        written.append(_written(shard_file(results, shard), data))
        progress.write(f"shard {shard} done ({count - len(pending)} of {count}): {last}\n")
        progress.flush()
    return written
