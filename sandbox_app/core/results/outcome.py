"""How a run ended, said in one line, and whether its answer was right: the words the window's
answer header, ``react-sandbox run`` and Copy trace print, and what ``run --json`` carries.

One function so the two front ends never word it apart: "✔ Correct · answered in 3 steps",
"✘ Wrong (expected $1,680) · answered in 3 steps". Each front end colours the line by
``correct`` through core/results/presentation.py's ``VERDICT_ROLES`` (the answer's colour
for right, the error's for wrong), and draws a wrong answer itself in the error colour, never
in the right answer's.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from sandbox_app.core.results.verdict import COULD_NOT_CHECK, matches, verdict
from sandbox_app.core.running.events import RunFinished
from sandbox_app.core.running.metrics import how_far
from sandbox_app.core.scenarios.scenario import Expected
from sandbox_app.core.scenarios.scenario_fields import expected_to_dict

OUTCOMES = {
    "answered": "✔ Answered",
    "max_steps": "■ Max steps reached",
    "stopped": "■ Stopped",
    "failed": "✖ Failed",
    "loop": "■ Stopped on a loop",
}
NOT_CHECKED = "? Not checked: the expected answer's pattern took too long"


class Outcome(NamedTuple):
    line: str
    correct: bool | None  # ✔ True, ✘ False; None: nothing said of right or wrong


def outcome(event: RunFinished, steps: int, expected: Expected | None) -> Outcome:
    """The line under the answer (``steps``: how many the run started)."""
    if event.status != "answered":
        reason = f": {event.reason}" if event.reason else ""
        return Outcome(f"{OUTCOMES[event.status]} {how_far(event.status, steps)}{reason}", None)
    found = verdict(event.answer, expected)
    if found is None or expected is None:
        return Outcome(f"{OUTCOMES['answered']} {how_far('answered', steps)}", None)
    answered = f"answered {how_far('answered', steps)}"
    if found == COULD_NOT_CHECK:
        return Outcome(f"{NOT_CHECKED} · {answered}", None)
    if found:
        return Outcome(f"✔ Correct · {answered}", True)
    wanted = f"a match for {expected.answer}" if expected.match == "regex" else expected.answer
    return Outcome(f"✘ Wrong (expected {wanted}) · {answered}", False)


def verdict_fields(answer: str | None, expected: Expected | None) -> dict[str, Any]:
    """What a run document (``run --json``) says of its answer: ``correct`` true or false by
    the rule a test set passes a run by (no answer, or a pattern that ran out of time, is
    false), null with no expected answer; ``expected`` as the scenario file writes it."""
    return {"correct": matches(answer, expected), "expected": expected_to_dict(expected)}
