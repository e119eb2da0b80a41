"""Run one backend kind's test server in its own process, for the per-kind benchmark.

    python -m tests.perf.serve_kind KIND spec.json

KIND is a backend id: ``custom`` (the OpenAI-compatible server, thinking in vLLM's
``reasoning`` field), ``anthropic``, ``responses``, ``gemini`` or ``ollama-native``. The spec
gives each model the same reply in each kind's own shape::

    {"m": {"thinking": "…", "text": "…", "rate": 2000, "turns": 5}}

``thinking`` streams as the kind's thinking (a thinking block, a reasoning summary, thought
parts, Ollama's ``thinking``), then ``text`` as its text, one token-sized piece an event,
``rate`` pieces a second (null: as fast as the server writes); the same reply answers every
request of a run (``turns`` is the benchmark's own). Prints the base URL on one line, then
serves until standard input closes, like tests/perf/serve.py.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.model_server import LocalModel, ModelScript, ModelServer

KINDS = ("custom", "anthropic", "responses", "gemini", "ollama-native")


@contextmanager
def serving(kind: str, spec: dict[str, dict[str, Any]]) -> Iterator[str]:
    """The test server with ``spec``'s models, started; yields the base URL ``kind`` takes.
    One script for every kind: each encodes the same raw reply in its own shape."""
    if kind not in KINDS:
        raise SystemExit(f"serve_kind: unknown kind {kind!r} (one of {', '.join(KINDS)})")
    # The OpenAI-compatible lane reads its thinking from vLLM's ``reasoning`` field.
    field = "reasoning" if kind == "custom" else None
    with ModelServer("ollama" if kind == "ollama-native" else None) as server:
        for name, m in spec.items():
            reply = f"<think>{m['thinking']}</think>{m['text']}"
            script = ModelScript([reply], rate=m["rate"], cycle=True, reasoning_field=field)
            server.add(LocalModel(name), script)
        # Anthropic's and Ollama's SDKs add their own paths to the root.
        yield server.root if kind in ("anthropic", "ollama-native") else server.base_url


def main() -> None:
    kind, spec_path = sys.argv[1], sys.argv[2]
    with open(spec_path, encoding="utf-8") as file:
        spec = json.load(file)
    with serving(kind, spec) as base_url:
        print(base_url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
