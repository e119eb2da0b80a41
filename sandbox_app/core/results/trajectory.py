"""Trajectory checks: the path a finished run took, checked against a ``TrajectorySpec``
(core/scenarios/trajectory_spec.py) — which tools it called, in what order, with what inputs,
how many steps, format errors and fabricated observations, tokens, cost and time.

Each check is a ``CheckResult`` (core/results/checks.py) with a readable name ("tool used:
search", "steps ≤ 4") and a one-line detail ("search never called", "7 steps > 4"), computed
from the run's events (its ActionParsed, StepStarted, FormatError and FabricationCut) and its
RunMetrics; a run passes when its answer and every check passed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sandbox_app.core.results.checks import CheckResult
from sandbox_app.core.results.compare import Price
from sandbox_app.core.running.events import (
    ActionParsed,
    Event,
    FabricationCut,
    FormatError,
    StepStarted,
)
from sandbox_app.core.running.metrics import RunMetrics, plural
from sandbox_app.core.scenarios.trajectory_spec import InputCheck, TrajectorySpec
from sandbox_app.core.tools.object_inputs import keyword_object
from sandbox_app.core.untrusted import safe_regex
from sandbox_app.core.untrusted.file_reader import parse_json_text

SHOWN = 40  # characters of an input or a value named in a check


def tool_calls(events: Sequence[Event]) -> list[ActionParsed]:
    """The run's tool calls, in order (a declined or unknown tool's too: it was called)."""
    return [event for event in events if isinstance(event, ActionParsed)]


def trajectory_checks(
    spec: TrajectorySpec,
    events: Sequence[Event],
    metrics: RunMetrics,
    price: Price | None = None,
    model: str = "",
) -> list[CheckResult]:
    """The checks ``spec`` asks for, in its fields' order; ``price`` (the lane's model's, if
    the user gave one) is what a cost bound is checked with."""
    if spec.empty:  # most test sets: no pass over the events at all
        return []
    calls = tool_calls(events)
    names = [call.tool for call in calls]
    checks: list[CheckResult] = []
    for tool in spec.tools_called or ():
        used = tool in names
        detail = "" if used else f"{tool} never called"
        checks.append(CheckResult(f"tool used: {tool}", used, detail))
    if spec.tools_called and (spec.order or "any") != "any":
        checks.append(_order(spec.tools_called, names, exact=spec.order == "exact"))
    for tool in spec.never or ():
        at = [call.step for call in calls if call.tool == tool]
        detail = f"{tool} called at step {at[0]}" if at else ""
        checks.append(CheckResult(f"never: {tool}", not at, detail))
    for check in spec.inputs or ():
        checks.append(_input(check, calls))
    if spec.max_steps is not None:
        steps = max(len(metrics.steps), sum(isinstance(e, StepStarted) for e in events))
        checks.append(_at_most(f"steps ≤ {spec.max_steps}", steps, spec.max_steps, "step"))
    if spec.no_format_errors:
        count = max(metrics.format_errors, sum(isinstance(e, FormatError) for e in events))
        checks.append(CheckResult("no format errors", not count, _count(count, "format error")))
    if spec.no_fabrication:
        count = max(metrics.fabrications_cut, sum(isinstance(e, FabricationCut) for e in events))
        detail = _count(count, "fabricated observation") + " cut" * bool(count)
        checks.append(CheckResult("no fabricated observation", not count, detail))
    if spec.max_tokens is not None:
        tokens = metrics.tokens_in + metrics.tokens_out
        approx = "~" if metrics.estimated else ""
        passed = tokens <= spec.max_tokens
        detail = "" if passed else f"{approx}{tokens:,} tokens > {spec.max_tokens:,}"
        checks.append(CheckResult(f"tokens ≤ {spec.max_tokens:,}", passed, detail))
    if spec.max_cost is not None:
        checks.append(_cost(spec.max_cost, metrics, price, model))
    if spec.max_seconds is not None:
        # The run's working time: waiting for the server's turn (a 429's wait) is not its cost.
        working = metrics.wall_s - metrics.queued_s
        passed = working <= spec.max_seconds
        detail = "" if passed else f"{working:.1f} s > {spec.max_seconds:g} s"
        checks.append(CheckResult(f"time ≤ {spec.max_seconds:g} s", passed, detail))
    return checks


def _order(wanted: Sequence[str], names: Sequence[str], exact: bool) -> CheckResult:
    arrow = " → ".join(wanted)
    if exact:
        passed = list(wanted) == list(names)
        detail = "" if passed else f"called {', '.join(names) or 'no tool'}"
        return CheckResult(f"tool sequence: {arrow}", passed, detail)
    name = f"tool order: {arrow}"
    at = 0  # where in the calls the next wanted tool is looked for
    for index, tool in enumerate(wanted):
        found = next((i for i in range(at, len(names)) if names[i] == tool), None)
        if found is None:
            if tool not in names:
                return CheckResult(name, False, f"{tool} never called")
            return CheckResult(name, False, f"called {tool} before {wanted[index - 1]}")
        at = found + 1
    return CheckResult(name, True)


def _input(check: InputCheck, calls: Sequence[ActionParsed]) -> CheckResult:
    wording = {"exact": "is", "contains": "contains", "regex": "matches", "json": "holds"}
    shown = check.value[:SHOWN] if check.match == "json" else _short(check.value)
    name = f"input of {check.tool} {wording[check.match]} {shown}"
    inputs = [call.input for call in calls if call.tool == check.tool]
    if not inputs:
        return CheckResult(name, False, f"{check.tool} never called")
    try:
        if any(_matches(check, text) for text in inputs):
            return CheckResult(name, True)
    except safe_regex.MatchTooSlow as err:
        return CheckResult(name, None, str(err))  # not decided: never a pass
    return CheckResult(name, False, f"{check.tool} called with {_short(inputs[-1])}")


def _matches(check: InputCheck, text: str) -> bool:
    if check.match == "exact":
        return text.strip().casefold() == check.value.strip().casefold()
    if check.match == "contains":
        return check.value.casefold() in text.casefold()
    if check.match == "regex":
        return safe_regex.search(check.value, text, ignore_case=True)
    return _holds(_object(text), json.loads(check.value))


def _object(text: str) -> Any:
    """A call's input as an object: JSON, or keywords (``city="Paris"``); else the text."""
    try:  # a model's text, by the file reader's rules (no RecursionError on deep nesting)
        return parse_json_text(text, "the input")
    except ValueError:
        return keyword_object(text.strip()) or text


def _holds(value: Any, wanted: Any) -> bool:
    """Whether ``value`` holds ``wanted``: every field of an object (recursively), else equal."""
    if isinstance(wanted, dict):
        return isinstance(value, dict) and all(
            key in value and _holds(value[key], item) for key, item in wanted.items()
        )
    if isinstance(value, str) and not isinstance(wanted, str):  # keywords are text: 3 is "3"
        return value == json.dumps(wanted)
    return bool(value == wanted)


def _at_most(name: str, count: int, limit: int, noun: str) -> CheckResult:
    passed = count <= limit
    return CheckResult(name, passed, "" if passed else f"{plural(count, noun)} > {limit}")


def _cost(limit: float, metrics: RunMetrics, price: Price | None, model: str) -> CheckResult:
    name = f"cost ≤ ${limit:g}"
    if price is None:  # no guess: a bound with nothing to check it by is not a pass
        return CheckResult(
            name, None, f"no price for {model or 'this model'} (Prices…, or eval --prices)"
        )
    cost = price.cost(metrics.tokens_in, metrics.tokens_out)
    passed = cost <= limit
    return CheckResult(name, passed, "" if passed else f"${cost:.4f} > ${limit:g}")


def _count(count: int, noun: str) -> str:
    return plural(count, noun) if count else ""


def _short(text: str) -> str:
    """A value named in a check: quoted, cut to one short line."""
    one_line = " ".join(text.split())
    return json.dumps(one_line[:SHOWN] + ("…" if len(one_line) > SHOWN else ""), ensure_ascii=False)
