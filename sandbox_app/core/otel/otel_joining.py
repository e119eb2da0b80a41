"""The conversations in a trace file: each trace's model calls, and traces that are steps of
one conversation joined (core/otel/otel_import.py opens the one with the most calls).

An instrumentation with nothing around the agent's loop (OpenInference's OpenAI
instrumentation over a plain ``while`` loop, OpenTelemetry's own) makes each model call a
trace of its own, a root span with no parent; each call's input holds the conversation so
far. So a trace whose first call sends another trace's last call's input and its reply, and
then more (the tool's result), is that conversation's next step, when both come from the
same process (the same resource: service, instance, SDK). Messages are compared by role,
text (without surrounding white space: a loop may strip what it sends back) and the calls'
names and arguments; call ids are left out, as some instrumentations write them on one side
only. A call another one extends is continued once, by the earliest; a call that extends
several continues the one that started last before it.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sandbox_app.core.otel.otel_messages import Message, ModelCall, model_call
from sandbox_app.core.otel.otel_spans import Span, innermost, kind, unique

Key = tuple[str, str, tuple[tuple[str, str], ...]]


@dataclass
class Chain:
    """One conversation: its traces in order, their spans, their model calls by start."""

    traces: list[str]
    spans: list[Span]
    calls: list[ModelCall]
    _resource: str = ""
    _next: Chain | None = field(default=None, repr=False)
    _previous: Chain | None = field(default=None, repr=False)
    _root: Chain | None = field(default=None, repr=False)  # towards its chain's first


def chains(spans: Sequence[Span], call_of: Callable[[Span], ModelCall] = model_call) -> list[Chain]:
    """Every conversation in ``spans``, the one with the most model calls first (the first
    in the file among equals); traces without a model call are left out. ``call_of``: a
    model span's call (a long trace's were made as it was read: otel_reading)."""
    by_trace: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        by_trace[span.trace_id].append(span)
    found: list[Chain] = []
    for trace_id, members in by_trace.items():
        trace = unique(members)
        llms = [s for s in trace if kind(s) == "llm"]
        if llms:
            calls = [call_of(s) for s in innermost(trace, llms)]
            found.append(Chain([trace_id], trace, calls, _resource_key(trace[0].resource)))
    _link(found)
    joined = [_follow(c) for c in found if c._previous is None]
    return sorted(joined, key=lambda c: -len(c.calls))


def _resource_key(resource: dict[str, Any]) -> str:
    return json.dumps(resource, sort_keys=True, default=str)


def _key(message: Message) -> Key:
    calls = message.get("tool_calls") or []
    return (
        str(message.get("role", "")),
        str(message.get("content") or "").strip(),
        tuple(
            (str(c["function"].get("name", "")), str(c["function"].get("arguments", "")).strip())
            for c in calls
            if isinstance(c, dict) and isinstance(c.get("function"), dict)
        ),
    )


def _said(call: ModelCall) -> list[Key]:
    """What a call sent and got back: the conversation its next step would send on."""
    reply: Message = {"role": "assistant", "content": call.text}
    reply["tool_calls"] = [
        {"function": {"name": c.name, "arguments": c.arguments}} for c in call.calls
    ]
    return [_key(m) for m in call.messages] + [_key(reply)]


def _prefix_hashes(keys: list[Key]) -> list[int]:
    """The hash of each prefix of ``keys``, the empty one first, in one pass over them."""
    hashes = [hash(())]
    for key in keys:
        hashes.append(hash((hashes[-1], key)))
    return hashes


def _link(found: list[Chain]) -> None:
    """Each chain's continuation: the chains whose last call's input and reply (by length
    and hash) a chain's first call sends, latest first, checked message by message."""
    ends: dict[tuple[str, int, int], list[tuple[int, Chain, list[Key]]]] = defaultdict(list)
    for chain in found:
        said = _said(chain.calls[-1])
        key = (chain._resource, len(said), _prefix_hashes(said)[-1])
        ends[key].append((chain.calls[-1].span.start_ns, chain, said))
    for bucket in ends.values():
        bucket.sort(key=lambda end: end[0])
    for later in sorted(found, key=lambda c: c.calls[0].span.start_ns):
        first = later.calls[0]
        sent = [_key(m) for m in first.messages]
        hashes = _prefix_hashes(sent)
        for size in range(len(sent), 0, -1):  # the longest conversation it extends
            bucket = ends.get((later._resource, size, hashes[size]), [])
            before = bisect_right(bucket, first.span.start_ns, key=lambda end: end[0])
            at = next(
                (
                    i
                    for i in range(before - 1, -1, -1)
                    if bucket[i][2] == sent[:size] and _root(bucket[i][1]) is not later
                ),
                None,
            )
            if at is not None:
                earlier = bucket.pop(at)[1]  # continued once
                earlier._next, later._previous, later._root = later, earlier, _root(earlier)
                break


def _root(chain: Chain) -> Chain:
    """The first of the chains linked to ``chain`` (union-find, paths shortened as found):
    linking a chain's end to its own start would close a loop, which only a file whose times
    are all the same allows."""
    root = chain
    while root._root is not None:
        root = root._root
    while chain._root is not None and chain._root is not root:
        chain._root, chain = root, chain._root
    return root


def _follow(start: Chain) -> Chain:
    """``start`` and the chains that continue it, as one."""
    traces, spans, calls = list(start.traces), list(start.spans), list(start.calls)
    at = start._next
    while at is not None:
        traces += at.traces
        spans += at.spans
        calls += at.calls
        at = at._next
    return Chain(traces, spans, calls, start._resource)
