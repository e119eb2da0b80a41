"""End to end on a real Ray cluster: a local head on 127.0.0.1 with two worker processes runs
``react-sandbox eval --ray`` of the shipped test set against the test server (each reply a
little late, as a model's is); one worker is killed while its shard runs, Ray runs that shard
again, and the merged evaluation is the same as the test set run whole on one machine.

Opt-in: Ray is the ``react-sandbox[ray]`` extra, never part of the default install. It runs
when ``CI_INTEGRATION=1`` (``.ci/run`` then runs the suite with ``--extra ray``); skipped
otherwise, saying why.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.core.results.evaluation import read_results
from sandbox_app.core.scenarios.scenario_file import load_scenario, scenarios_dir
from tests.core.test_eval_shards import junit_cases, same
from tests.core.test_otel_phoenix import _free_port, _until
from tests.model_server import ModelScript, ModelServer

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        os.environ.get("CI_INTEGRATION") != "1",
        reason="needs a local Ray cluster: set CI_INTEGRATION=1 (and install react-sandbox[ray])",
    ),
]

EXAMPLE = scenarios_dir() / "test_set.json"
TASK = "ray::run_shard"  # the title Ray gives a worker process while it runs a shard


# Ray's token authentication (on by default for `ray start` since 2.5x), with a token of the
# test's own: the head and the evaluation given the same, nothing left in ~/.ray.
TOKEN = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}


@pytest.fixture
def ray_head(tmp_path: Path) -> Iterator[str]:
    if importlib.util.find_spec("ray") is None:
        pytest.fail("CI_INTEGRATION=1 but Ray is not installed: uv run --extra ray pytest …")
    port = _free_port()
    short = tempfile.mkdtemp(prefix="rs-ray-")
    command = [
        str(Path(sys.executable).parent / "ray"),
        "start",
        "--head",
        "--block",
        "--node-ip-address=127.0.0.1",
        f"--port={port}",
        "--num-cpus=2",  # two worker processes run shards at once
        "--include-dashboard=false",
        "--disable-usage-stats",
        f"--temp-dir={short}",  # its sockets' paths must fit in 107 bytes
    ]
    log = (tmp_path / "ray.log").open("w")
    # A session of its own: the head, its raylet and its workers end together, by its id.
    env = {**os.environ, **TOKEN}
    head = subprocess.Popen(
        command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env
    )
    try:
        _until(lambda: _listening(port) or head.poll() is not None, 120, "the Ray head starting")
        assert head.poll() is None, (tmp_path / "ray.log").read_text()[-2000:]
        yield f"127.0.0.1:{port}"
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            head.wait(30)
        with contextlib.suppress(ProcessLookupError):  # its raylet, GCS and workers too
            os.killpg(head.pid, signal.SIGKILL)
        head.wait(10)
        log.close()
        shutil.rmtree(short, ignore_errors=True)


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _running_shards() -> list[int]:
    """The worker processes running a shard now, by Ray's title for them."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                title = (entry / "cmdline").read_bytes().split(b"\0")[0].decode()
            except OSError:
                continue
            if title.startswith(TASK):
                found.append(int(entry.name))
    return found


def test_a_sharded_evaluation_on_ray_survives_a_dead_worker(
    tmp_path: Path, fake_server: ModelServer, ray_head: str
) -> None:
    cases = load_scenario(EXAMPLE).test_set
    by_question = {c.question: list(c.replies) for c in cases}
    fake_server.set_model("m", ModelScript(by_question=by_question, delay_first=0.15))
    flags = ["--lane", f"{fake_server.base_url}:m", "--repeat", "2", "--concurrency", "2"]
    whole, junit = tmp_path / "whole.jsonl", tmp_path / "whole.xml"
    argv = [str(EXAMPLE), *flags, "--out", str(whole), "--junit", str(junit)]
    assert eval_command(argv, io.StringIO(), io.StringIO()) == 0
    one_machine = len(fake_server.requests)  # what the evaluation asks, made once

    merged, merged_junit = tmp_path / "merged.jsonl", tmp_path / "merged.xml"
    command = [sys.executable, "-m", "sandbox_app", "eval", str(EXAMPLE), *flags]
    command += ["--ray", ray_head, "--shards", "4", "--out", str(merged)]
    command += ["--junit", str(merged_junit), "--db", str(tmp_path / "history.db")]
    progress = (tmp_path / "progress.txt").open("w")
    env = {**os.environ, **TOKEN}
    evaluation = subprocess.Popen(command, stdout=progress, stderr=subprocess.STDOUT, env=env)
    try:
        # A worker killed mid-shard: once the shards have sent some requests.
        _until(lambda: len(fake_server.requests) >= one_machine + 6, 180, "the shards starting")
        victim = _until(_running_shards, 60, "a worker running a shard")[0]
        os.kill(victim, signal.SIGKILL)
        assert evaluation.wait(600) == 0, (tmp_path / "progress.txt").read_text()
    finally:
        if evaluation.poll() is None:
            evaluation.kill()
        progress.close()
    # The killed worker's shard was made again (its runs asked twice), and merged once.
    assert len(fake_server.requests) - one_machine > one_machine
    said = (tmp_path / "progress.txt").read_text()
    assert said.count(" done (") == 4  # a progress line as each shard came back
    ours, theirs = read_results(whole), read_results(merged)
    assert len(theirs) == len(ours) == 2 * len(cases)
    assert {r.key: same(r.to_dict()) for r in theirs} == {r.key: same(r.to_dict()) for r in ours}
    assert junit_cases(merged_junit) == junit_cases(junit)
