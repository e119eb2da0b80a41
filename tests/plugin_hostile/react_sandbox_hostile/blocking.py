"""A tool whose ``run`` is an ordinary (synchronous) function that blocks for as many seconds
as its input says, as a plugin doing file or network work without asyncio does; and one
whose ``parameters`` are no JSON schema."""

from __future__ import annotations

import time
from typing import ClassVar


class Sleeps:
    name = "sleeps"
    description = "Waits this many seconds, then answers."
    input_hint = "seconds"
    read_only = True
    max_input = 100

    def run(self, input: str) -> str:
        time.sleep(float(input))
        return f"slept {input} s"


class NotASchema(Sleeps):
    name = "not_a_schema"
    parameters: ClassVar[dict[str, object]] = {"type": "object", "properties": "oops"}
