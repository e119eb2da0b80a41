"""A trace's recorded observations, answered again: what a fork of an imported trace's tools
say to the inputs the trace holds a result for.

An imported trace (OTLP, core/otel) records each call's result but not the tool that made it:
its ``search`` is someone else's index, not the built-in one. A fork of it answers an input the
trace recorded with the trace's own observation (the tool is not run: nothing happens twice),
and says so beside it; an input the trace never saw runs the tool the fork has (the built-in,
a mock, a plugin), as a live run would.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sandbox_app.core.tools.action_objects import name_key
from sandbox_app.core.untrusted.file_reader import parse_json_text


@dataclass(frozen=True)
class Recorded:
    """One observation the trace recorded: its tool, the input it was given, its text."""

    tool: str
    input: str
    text: str
    error: bool
    step: int

    def notice(self) -> str:
        """What the trace says beside the observation answered again."""
        return (
            f"{self.tool}: the trace's recorded observation (its step {self.step}) for this "
            "input; the tool was not run."
        )


class RecordedAnswers:
    """The recorded observations by tool and input (the first one an input got)."""

    def __init__(self, recorded: Iterable[Recorded]) -> None:
        self._by: dict[tuple[str, Any], Recorded] = {}
        for one in recorded:
            self._by.setdefault((name_key(one.tool), _input_key(one.input)), one)

    def __len__(self) -> int:
        return len(self._by)

    def find(self, tool: str, input: str) -> Recorded | None:
        return self._by.get((name_key(tool), _input_key(input)))


def _input_key(text: str) -> Any:
    """An input as compared: a JSON object by its content (the key order and spacing a model
    wrote change nothing), any other input as written, outer spaces aside."""
    text = text.strip()
    if text.startswith("{"):
        try:
            # The one reader's depth and size limits: a trace's input is text from outside.
            return json.dumps(parse_json_text(text, "an input"), sort_keys=True)
        except ValueError:  # not JSON after all: compared as written
            pass
    return text
