"""Tools with every attribute present but something wrong: a type, the constructor, or what
run() does."""

from __future__ import annotations

import sys


class StringLimit:
    name = "string_limit"
    description = "Its limit is text, as if read from a config file."
    input_hint = "input"
    read_only = True
    max_input = "100"

    async def run(self, input: str) -> str:
        return input


class ExitsWhenBuilt(StringLimit):
    name = "exits_when_built"
    max_input = 100

    def __init__(self) -> None:
        sys.exit("no configuration file")


class ExitsWhenRun(StringLimit):
    name = "exits_when_run"
    max_input = 100

    async def run(self, input: str) -> str:
        sys.exit(3)


class ReturnsANumber(StringLimit):
    name = "returns_a_number"
    max_input = 100

    async def run(self, input: str) -> str:
        return 42  # type: ignore[return-value]
