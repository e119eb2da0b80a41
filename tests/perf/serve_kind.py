"""Run one backend kind's test server in its own process, for the per-kind benchmark.

    python -m tests.perf.serve_kind KIND spec.json

KIND is a backend id: ``custom`` (the OpenAI-compatible server, thinking in vLLM's
``reasoning`` field), ``anthropic``, ``responses``, ``gemini`` or ``ollama-native``. The spec
gives each model the same reply in each kind's own shape::

    {"m": {"thinking": "…", "text": "…", "rate": 2000, "turns": 5}}

``thinking`` streams as the kind's thinking (a thinking block, a reasoning summary, thought
parts, Ollama's ``thinking``), then ``text`` as its text, one token-sized piece an event,
``rate`` pieces a second (null: as fast as the server writes); the same reply answers each of
the first ``turns`` requests of a run. Prints the base URL on one line, then serves until
standard input closes, like tests/perf/serve.py.
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
    """The kind's test server with ``spec``'s models, started; yields its base URL."""
    if kind == "custom":
        with ModelServer() as server:
            for name, m in spec.items():
                reply = f"<think>{m['thinking']}</think>{m['text']}"
                script = ModelScript(
                    replies=[reply], rate=m["rate"], cycle=True, reasoning_field="reasoning"
                )
                server.set_model(name, script)
            yield server.base_url
    elif kind == "anthropic":
        with ModelServer() as server:
            server.base_path = ""  # Anthropic's SDK adds /v1 itself
            for name, m in spec.items():
                reply = f"<think>{m['thinking']}</think>{m['text']}"
                server.set_model(name, ModelScript(replies=[reply], rate=m["rate"], cycle=True))
            yield server.base_url
    elif kind == "responses":
        with ModelServer() as server:
            for name, m in spec.items():
                # The thinking as the reasoning summary, its tokens the reasoning counted.
                reply = f"<think>{m['thinking']}</think>{m['text']}"
                server.set_model(name, ModelScript(replies=[reply], rate=m["rate"], cycle=True))
            yield server.base_url
    elif kind == "gemini":
        with ModelServer() as server:
            for name, m in spec.items():
                reply = f"<think>{m['thinking']}</think>{m['text']}"
                server.set_model(name, ModelScript(replies=[reply], rate=m["rate"], cycle=True))
            yield server.base_url
    elif kind == "ollama-native":
        with ModelServer("ollama") as server:
            for name, m in spec.items():
                reply = f"<think>{m['thinking']}</think>{m['text']}"
                script = ModelScript(replies=[reply], rate=m["rate"], cycle=True)
                server.add(LocalModel(name), script)
            yield server.root
    else:
        raise SystemExit(f"serve_kind: unknown kind {kind!r} (one of {', '.join(KINDS)})")


def main() -> None:
    kind, spec_path = sys.argv[1], sys.argv[2]
    with open(spec_path, encoding="utf-8") as file:
        spec = json.load(file)
    with serving(kind, spec) as base_url:
        print(base_url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
