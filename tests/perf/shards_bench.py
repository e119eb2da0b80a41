"""Benchmark: an evaluation in shards (docs/guide/shards.md), printed as one JSON object.

    uv run python -m tests.perf.shards_bench            # full sizes (a few minutes)
    uv run python -m tests.perf.shards_bench --quick    # smaller, for a smoke check

1. Runs/s of the shipped test set against the test server in its own process, each reply
   ``DELAY`` s late (a stand-in for a model's latency): one ``eval`` process, then two
   ``eval --shard I/2`` processes at once, then their ``--merge`` (each process started
   anew, with the same ``--concurrency``: a process's start is in its figure). The machine's
   load average is printed beside (it is shared).
2. ``eval --merge`` of 100,000 runs (two shard files of real result lines with their traces)
   into a results file and the history database, and the merge of the files alone, each
   started once what was written before it is on the disk (``os.sync``): 2.7 GB written just
   before would otherwise be waited for by the step measured.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.core.results.evaluation import iter_plan
from sandbox_app.core.results.shards import Merge
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir

EXAMPLE = scenarios_dir() / "test_set.json"
DELAY = 0.2  # seconds before each reply's first token
CONCURRENCY = "4"


def _server(folder: Path) -> tuple[subprocess.Popen[str], str]:
    cases = load_scenario(EXAMPLE).test_set
    spec = {"m": {"by_question": {c.question: list(c.replies) for c in cases}}}
    spec["m"]["delay_first"] = DELAY  # type: ignore[assignment]
    (folder / "spec.json").write_text(json.dumps(spec))
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.perf.serve", str(folder / "spec.json")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    return server, server.stdout.readline().strip()


def _eval(*args: str) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "sandbox_app", "eval", str(EXAMPLE), *args]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def runs_per_second(folder: Path, repeats: int) -> dict[str, Any]:
    server, url = _server(folder)
    flags = ["--lane", f"{url}:m", "--repeat", str(repeats), "--concurrency", CONCURRENCY]
    runs = 12 * repeats
    try:
        started = time.perf_counter()
        assert _eval(*flags, "--out", str(folder / "one.jsonl")).wait() == 0
        one = time.perf_counter() - started
        started = time.perf_counter()
        shards = [
            _eval(*flags, "--shard", f"{i}/2", "--out", str(folder / f"s{i}.jsonl")) for i in (1, 2)
        ]
        assert [shard.wait() for shard in shards] == [0, 0]
        two = time.perf_counter() - started
        files = [str(folder / f"s{i}.jsonl") for i in (1, 2)]
        started = time.perf_counter()
        merged = _eval(*flags, "--merge", *files, "--out", str(folder / "merged.jsonl"))
        assert merged.wait() == 0
        merging = time.perf_counter() - started
    finally:
        server.communicate("")
    return {
        "runs": runs,
        "per_request_delay_s": DELAY,
        "concurrency_per_process": int(CONCURRENCY),
        "one_process_runs_per_s": round(runs / one, 1),
        "two_shards_runs_per_s": round(runs / two, 1),
        "two_shards_and_merge_runs_per_s": round(runs / (two + merging), 1),
        "merge_process_s": round(merging, 1),
    }


def merge_time(folder: Path, runs: int) -> dict[str, Any]:
    """``eval --merge`` of ``runs`` runs: 1,000 cases × ``runs // 1000`` repeats, one lane,
    each line a real result of the shipped test set with its trace."""
    scenario = load_scenario(EXAMPLE)
    first = scenario.test_set[0]
    cases = tuple(
        first.__class__(**{**first.__dict__, "question": f"{first.question} #{i}"})
        for i in range(1000)
    )
    path = folder / "big.json"
    save_scenario(scenario.with_changes(test_set=cases), path)
    sample = folder / "sample.jsonl"
    argv = [str(EXAMPLE), "--lane", "scripted", "--out", str(sample)]
    assert eval_command(argv, io.StringIO(), io.StringIO()) == 0
    line = json.loads(sample.read_bytes().splitlines()[0])
    repeats = runs // 1000
    files = [folder / "a.jsonl", folder / "b.jsonl"]
    with files[0].open("w") as a, files[1].open("w") as b:
        for case in range(1000):
            for repeat in range(repeats):
                line.update(lane="scripted", case=case, repeat=repeat)
                (a if (case + repeat) % 2 else b).write(json.dumps(line) + "\n")
    size = sum(f.stat().st_size for f in files)
    os.sync()  # each figure from the same start: nothing written before it still to reach the disk
    started = time.perf_counter()
    with (folder / "plain.jsonl").open("wb") as out:  # the files alone: which line, copied
        merging = Merge(files, iter_plan(["scripted"], 1000, repeats))
        for _key, raw in merging.lines():
            out.write(raw + b"\n")
    plain = time.perf_counter() - started
    assert merging.missing == 0
    out = folder / "merged.jsonl"
    flags = ["--lane", "scripted", "--repeat", str(repeats), "--db", str(folder / "h.db")]
    (folder / "plain.jsonl").unlink()
    os.sync()
    started = time.perf_counter()
    argv = [str(path), *flags, "--merge", *map(str, files), "--out", str(out)]
    assert eval_command(argv, io.StringIO(), io.StringIO()) == 0
    whole = time.perf_counter() - started
    return {
        "runs": runs,
        "shard_files_mb": round(size / 1e6),
        "merge_files_s": round(plain, 1),
        "eval_merge_with_history_s": round(whole, 1),
        "history_runs_per_s": round(runs / whole),
    }


def _made(folder: Path) -> Path:
    folder.mkdir()
    return folder


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        figures = {
            "load_average_before": os.getloadavg(),
            "throughput": runs_per_second(_made(folder / "t"), 2 if args.quick else 30),
            "merge": merge_time(_made(folder / "m"), 10_000 if args.quick else 100_000),
            "load_average_after": os.getloadavg(),
        }
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
