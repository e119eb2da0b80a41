"""Two runs side by side, step by step, and the first step where they part.

:func:`diff_runs` lines two records up by step number and says which step first differs in
what the run *did*: the action (tool), the action's input, the observation (a tool's result,
or the correction a format error sent back) or the answer; a step only one run reached
differs too. What the model merely thought (its thinking, its Thought lines) and how fast it
streamed never count: two runs that acted alike are "the same" however they were worded or
timed. When every step agrees, how the runs ended (status, answer) is compared last.

Each step keeps its text as the trace shows it: core/results/trace_text.py's lines, each with
the role that styles it (the window colours them with its own table), so the diff view
draws no third rendering of a run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sandbox_app.core.results.presentation import Role
from sandbox_app.core.results.trace_text import lines
from sandbox_app.core.running.events import (
    ActionParsed,
    Edited,
    Event,
    FinalAnswer,
    FormatError,
    Observation,
    RunFinished,
)
from sandbox_app.core.running.records import RunRecord

Line = tuple[str, Role]
# What differs, in the order it is looked for within a step.
ACTION, INPUT, OBSERVATION, ANSWER, MISSING, OUTCOME = (
    "action",
    "action input",
    "observation",
    "answer",
    "step reached by one run only",
    "how the run ended",
)


@dataclass(frozen=True)
class StepView:
    """What one run did at one step, and the step's lines as the trace shows them."""

    step: int
    calls: tuple[tuple[str, str], ...]  # (tool, input), in order (native mode may call more)
    observations: tuple[str, ...]  # the labelled lines the model read back (after an edit)
    answer: str | None
    lines: tuple[Line, ...]


@dataclass(frozen=True)
class Difference:
    """Where two runs first part: ``step`` (0: every step agrees, the ending differs),
    ``what`` (:data:`ACTION`, …) and each side's value as one short line."""

    step: int
    what: str
    left: str
    right: str

    def describe(self) -> str:
        where = f"step {self.step}" if self.step else "the end"
        return f"First difference at {where}: {self.what} ({self.left} · {self.right})"


@dataclass(frozen=True)
class AlignedStep:
    """One step of both runs (None: that run never reached it); ``differs``: what differs."""

    step: int
    left: StepView | None
    right: StepView | None
    differs: str | None


@dataclass(frozen=True)
class TraceDiff:
    steps: tuple[AlignedStep, ...]
    left_end: tuple[Line, ...]  # how each run ended, as a text of the trace says it
    right_end: tuple[Line, ...]
    first: Difference | None  # None: the runs did the same

    @property
    def same(self) -> bool:
        return self.first is None


def step_views(events: Iterable[Event]) -> dict[int, StepView]:
    """Each step of a run's events, by number (a fork's copied steps included, as shown)."""
    by_step: dict[int, list[Event]] = {}
    for event in events:
        step = getattr(event, "step", None)
        if isinstance(step, int) and step > 0:
            by_step.setdefault(step, []).append(event)
    return {step: _view(step, events) for step, events in sorted(by_step.items())}


def _view(step: int, events: list[Event]) -> StepView:
    calls: list[tuple[str, str]] = []
    observations: list[str] = []
    answer: str | None = None
    for event in events:
        if isinstance(event, ActionParsed):
            calls.append((event.tool, event.input))
        elif isinstance(event, Observation):
            observations.append(event.message)
        elif isinstance(event, FormatError):
            observations.append(event.message)  # what the model read back instead of a result
        elif isinstance(event, Edited) and event.point == "observation" and observations:
            observations[-1] = event.text  # step-through: the model read the edit
        elif isinstance(event, FinalAnswer):
            answer = event.text
    shown = tuple(lines(events, marks=False))
    return StepView(step, tuple(calls), tuple(observations), answer, shown)


def step_difference(left: StepView | None, right: StepView | None) -> Difference | None:
    """What first differs between one step of each run (None: the same)."""
    if left is None or right is None:
        reached = left or right
        return Difference(reached.step if reached else 0, MISSING, _reached(left), _reached(right))
    step = left.step
    tools = [tool for tool, _ in left.calls], [tool for tool, _ in right.calls]
    if tools[0] != tools[1]:
        return Difference(step, ACTION, _joined(tools[0]), _joined(tools[1]))
    if left.calls != right.calls:
        inputs = [put for _, put in left.calls], [put for _, put in right.calls]
        return Difference(step, INPUT, _joined(inputs[0]), _joined(inputs[1]))
    if left.observations != right.observations:
        return Difference(
            step, OBSERVATION, _joined(left.observations), _joined(right.observations)
        )
    if left.answer != right.answer:
        return Difference(step, ANSWER, _or_none(left.answer), _or_none(right.answer))
    return None


def diff_runs(left: RunRecord, right: RunRecord) -> TraceDiff:
    """The two runs aligned by step, and where they first differ."""
    left_steps, right_steps = step_views(left.events), step_views(right.events)
    aligned: list[AlignedStep] = []
    first: Difference | None = None
    for step in sorted(left_steps.keys() | right_steps.keys()):
        a, b = left_steps.get(step), right_steps.get(step)
        found = step_difference(a, b)
        aligned.append(AlignedStep(step, a, b, found.what if found else None))
        first = first or found
    if first is None:
        first = _ending_difference(left.finished, right.finished)
    return TraceDiff(tuple(aligned), _end_lines(left), _end_lines(right), first)


def _ending_difference(left: RunFinished | None, right: RunFinished | None) -> Difference | None:
    ends = [(e.status, e.answer) if e else ("still running", None) for e in (left, right)]
    if ends[0] == ends[1]:
        return None
    shown = [status + (f": {answer}" if answer is not None else "") for status, answer in ends]
    return Difference(0, OUTCOME, _short(shown[0]), _short(shown[1]))


def _end_lines(record: RunRecord) -> tuple[Line, ...]:
    """The run's ending as a text of its trace says it: answer, status, figures."""
    done = record.finished
    if done is None:
        return (("(still running)", Role.NOTICE),)
    return tuple((text, role) for text, role in lines([done], marks=False) if text)


SHORT = 60  # a value in the one-line summary; the panes show it whole


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHORT else text[: SHORT - 1] + "…"


def _joined(values: Sequence[str]) -> str:
    return _short(" + ".join(values)) if values else "none"


def _or_none(value: str | None) -> str:
    return "no answer" if value is None else _short(value)


def _reached(view: StepView | None) -> str:
    return "not reached" if view is None else "reached"
