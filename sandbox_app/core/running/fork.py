"""Forking a kept run at step k, and what the inspector shows of a step.

A fork starts from the conversation the run had after step k (exactly what step k+1's request
sent: the system prompt, the question, and each step's reply and observation, edits and all)
and shows steps 1..k as they were; from there it goes on live with the window's settings
now, through the same engine (``ReactEngine(fork=…)``). Rerunning step k is a fork from step
k−1. The inspector reads each request's :class:`Exchange`.

The conversation is the engine's own messages as step k+1 sent them (``Exchange.messages``, else
the request's, which are them), each reply's provider items with it (core/running/carried.py).
A fork of an imported trace (the one whose run says it was read from a ``trace``) also answers
the inputs the trace recorded with its recorded observations (core/tools/recorded.py).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace

from sandbox_app.core.running.backend import Message
from sandbox_app.core.running.carried import kept_for
from sandbox_app.core.running.events import (
    ActionParsed,
    Event,
    Exchange,
    Notice,
    Observation,
    RunFinished,
    RunStarted,
    TokenDelta,
)
from sandbox_app.core.tools.recorded import Recorded, RecordedAnswers

# RunStarted.backend of a run read from a trace file (core/otel/otel_import.py writes it).
IMPORTED = "trace"


@dataclass(frozen=True)
class ForkPoint:
    step: int
    history: list[Message]  # the messages step + 1's request sent
    prefix: list[Event]  # what showed steps 1..step
    # Rerun: the one step asked again; the run ends once its turn is read (its action is
    # not run). None: a fork, which goes on to the end.
    only_step: int | None = None
    # A fork of an imported trace: the observations it recorded, answered again.
    recorded: RecordedAnswers | None = None

    def going_on_with(self, source: str) -> ForkPoint:
        """This fork as ``source``'s run (core/running/carried.py): the reasoning items another
        kind, server or model wrote dropped from its conversation, and said at step 0."""
        history, dropped = kept_for(self.history, source)
        prefix = [Notice(0, dropped), *self.prefix] if dropped else self.prefix
        return replace(self, history=history, prefix=prefix)


@dataclass(frozen=True)
class ForkOrigin:
    """Where a kept run came from: run ``run`` (its name, "Run 1") forked after step ``step``,
    or (``rerun``) its step ``step`` asked again, whose turn was ``original``."""

    run: str
    step: int
    rerun: bool = False
    original: str = ""

    def label(self) -> str:
        """What the run picker says after the run's own name."""
        if self.rerun:
            return f"rerun of step {self.step} of {self.run}"
        return f"fork of {self.run} at step {self.step}"

    @property
    def first_new_step(self) -> int:
        """The first step this run asked for itself: the separator goes above it."""
        return self.step if self.rerun else self.step + 1

    def separator(self) -> str:
        if self.rerun:
            return f"── rerun of step {self.step} of {self.run} ──"
        return f"── forked from {self.run} at step {self.step} ──"


def turn_text(events: Sequence[Event], step: int) -> str:
    """The model's own text of step ``step`` (its thinking apart), as it came."""
    return "".join(e.text for e in events if isinstance(e, TokenDelta) and e.step == step).strip()


def origin_of(run: str, point: ForkPoint, events: Sequence[Event]) -> ForkOrigin:
    """Where ``point``, taken from run ``run`` (its ``events``), comes from."""
    if point.only_step is None:
        return ForkOrigin(run, point.step)
    return ForkOrigin(run, point.only_step, True, turn_text(events, point.only_step))


def fork_point(events: Sequence[Event], step: int) -> ForkPoint | None:
    """Where a fork from ``step`` starts, or None when the run never asked for step + 1
    (it ended at ``step``, or was stopped before the next request came back)."""
    later = next((e for e in events if isinstance(e, Exchange) and e.step == step + 1), None)
    messages = (later.messages or later.request.get("messages")) if later is not None else None
    if not isinstance(messages, list | tuple) or len(messages) < 2:
        return None
    prefix: list[Event] = [
        e
        for e in events
        if not isinstance(e, RunStarted | RunFinished) and getattr(e, "step", 0) <= step
    ]
    started = next((e for e in events if isinstance(e, RunStarted)), None)
    imported = started is not None and started.backend == IMPORTED
    recorded = RecordedAnswers(recorded_observations(events)) if imported else None
    return ForkPoint(step, [dict(m) for m in messages], prefix, recorded=recorded)


def recorded_observations(events: Sequence[Event]) -> list[Recorded]:
    """Each action's input with the observation it got, as the run recorded them."""
    found: list[Recorded] = []
    action: ActionParsed | None = None
    for event in events:
        if isinstance(event, ActionParsed):
            action = event
        elif isinstance(event, Observation) and action is not None:
            if (action.step, action.tool) == (event.step, event.tool):
                seen = Recorded(event.tool, action.input, event.text, event.error, event.step)
                found.append(seen)
            action = None
    return found


def exchanges_of(events: Sequence[Event], step: int) -> list[Exchange]:
    """Step ``step``'s requests, first to last (a step asked again has several)."""
    return [e for e in events if isinstance(e, Exchange) and e.step == step]


def as_json(exchange: Exchange) -> str:
    reply = {
        "text": exchange.reply,
        "reasoning": exchange.reasoning,
        "finish_reason": exchange.finish_reason,
        "usage": exchange.usage,
        "first_token_s": exchange.first_token_s,
        "last_token_s": exchange.last_token_s,
    }
    return json.dumps({"request": exchange.request, "reply": reply}, ensure_ascii=False, indent=2)


def as_curl(exchange: Exchange, url: str, headers: Sequence[str]) -> str:
    """The request as a curl command to ``url`` with ``headers`` (the backend registry's
    ``curl_request``: the kind's endpoint; a key as ``$VARIABLE``, never its value)."""
    body = json.dumps(exchange.request, ensure_ascii=False)
    lines = [f"curl {shlex.quote(url)}"]
    for header in (*headers, "Content-Type: application/json"):
        # Double quotes where the shell must expand the key's variable (its name is the
        # app's own: no other character the shell reads), single quotes elsewhere.
        lines.append(f'-H "{header}"' if "$" in header else f"-H {shlex.quote(header)}")
    lines.append(f"-d {shlex.quote(body)}")
    return " \\\n  ".join(lines)
