"""Run the test server in its own process, as a real model server would be.

    python -m tests.perf.serve spec.json   # {"fast": {"replies": ["..."], "rate": null}}

Prints the base URL on one line, then serves until standard input closes. Benchmarks use a
separate process so the server's work never competes with the app for the GIL.
"""

from __future__ import annotations

import json
import sys

from tests.model_server import ModelScript, ModelServer


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as file:
        spec = json.load(file)
    with ModelServer() as server:
        for name, options in spec.items():
            server.set_model(name, ModelScript(**options))
        print(server.base_url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
