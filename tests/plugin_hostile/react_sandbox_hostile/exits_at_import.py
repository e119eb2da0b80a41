"""A script turned plugin: it parses the command line when imported, and argparse exits
(SystemExit 2) because the app's command line has no --city."""

from __future__ import annotations

import argparse

parser = argparse.ArgumentParser(prog="weather-script")
parser.add_argument("--city", required=True)
ARGS = parser.parse_args()


class Tool:
    name = "never_loaded"
    description = "Never reached."
    input_hint = "city"
    read_only = True
    max_input = 100

    async def run(self, input: str) -> str:
        return ARGS.city
