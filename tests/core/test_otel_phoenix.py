"""End to end with a real collector: a local Arize Phoenix server (from PyPI) receives a run
sent by ``react-sandbox run --otlp``, and Phoenix's own REST API returns its spans with the
right names, kinds and token counts.

Opt-in: Phoenix is a ~600 MB install of its own, kept out of the project's environment. It
runs when ``CI_INTEGRATION=1`` (``.ci/run`` then installs ``arize-phoenix`` in a separate
virtual environment and names its ``phoenix`` command in ``PHOENIX_BIN``); skipped otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.cli.main import main

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        os.environ.get("CI_INTEGRATION") != "1",
        reason="needs a local Arize Phoenix server: set CI_INTEGRATION=1 (and PHOENIX_BIN)",
    ),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _until(condition: Any, seconds: float, what: str) -> Any:
    """Poll ``condition`` until it gives something true, within a deadline."""
    deadline, pause = time.monotonic() + seconds, threading.Event()
    while time.monotonic() < deadline:
        if found := condition():
            return found
        pause.wait(0.25)
    raise AssertionError(f"{what}: not within {seconds:g} s")


@pytest.fixture
def phoenix(tmp_path: Path) -> Iterator[str]:
    command = os.environ.get("PHOENIX_BIN") or shutil.which("phoenix")
    if not command:
        pytest.fail("CI_INTEGRATION=1 but no phoenix command: install arize-phoenix, PHOENIX_BIN")
    port = _free_port()
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(_free_port()),
        "PHOENIX_WORKING_DIR": str(tmp_path),
    }
    log = (tmp_path / "phoenix.log").open("w")
    server = subprocess.Popen([command, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        _until(lambda: _get(f"{base}/healthz") is not None, 120, "Phoenix starting")
        yield base
    finally:
        server.terminate()
        server.wait(30)
        log.close()


def _get(url: str) -> Any:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            body = answer.read()
    except OSError:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return body


def test_phoenix_receives_a_run_and_returns_its_spans(
    phoenix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--otlp", phoenix]) == 0
    assert "6 spans sent" in capsys.readouterr().err

    def spans() -> list[dict[str, Any]]:
        found = _get(f"{phoenix}/v1/projects/default/spans?limit=100")
        data = found.get("data", []) if isinstance(found, dict) else []
        return data if len(data) >= 6 else []

    got = _until(spans, 60, "the run's spans in Phoenix's API")
    by_name: dict[str, list[dict[str, Any]]] = {}
    for span in got:
        by_name.setdefault(span["name"], []).append(span)
    assert sorted(by_name) == [
        "chat scripted",
        "execute_tool calculator",
        "execute_tool search",
        "invoke_agent Brightgrid: yearly cost for a team",
    ]
    chats = sorted(by_name["chat scripted"], key=lambda s: s["start_time"])
    prompts = [s["attributes"]["llm.token_count.prompt"] for s in chats]
    completions = [s["attributes"]["llm.token_count.completion"] for s in chats]
    assert prompts == [164, 197, 233]
    assert completions == [22, 33, 15]
    assert [s["span_kind"] for s in chats] == ["LLM"] * 3
    agent = by_name["invoke_agent Brightgrid: yearly cost for a team"][0]
    assert agent["span_kind"] == "AGENT"
    assert agent["attributes"]["llm.token_count.total"] == 594 + 70
