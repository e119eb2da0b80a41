"""One line of a JSON-lines trace (one OTLP request, as the collector's file exporter writes
it) walked to its spans, each span parsed as it is reached (core/untrusted/json_walk.py).

A line of 100 steps is ~1.5 MB of JSON: parsed whole it held the interpreter's lock for
~12 ms (the json module's C code never hands it back), the window's thread waiting for it on
the reading thread's every line. A span at a time, the lock is held for microseconds.

Only the path to the spans is walked (``resourceSpans`` → ``resource`` and ``scopeSpans`` →
``spans``, in either spelling); everything else is parsed whole and, like a value of another
type on that path, passed over as core/otel/otel_spans.py's whole-request reading passes it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sandbox_app.core.untrusted.json_walk import JsonWalk

RESOURCE_SPANS = ("resourceSpans", "resource_spans")
SCOPE_SPANS = ("scopeSpans", "scope_spans")


class RequestWalk:
    """:meth:`spans` gives each span's JSON with its resource's attributes' JSON (one object
    for all the spans of a resource); ``lists``: how many ``resourceSpans`` lists it met
    (none: not an OTLP request)."""

    def __init__(self, walk: JsonWalk) -> None:
        self.walk = walk
        self.lists = 0

    def spans(self) -> Iterator[tuple[Any, Any]]:
        walk = self.walk
        if walk.peek() != "{":
            walk.value()
            walk.end()
            return
        for key in walk.members():
            if key in RESOURCE_SPANS and walk.peek() == "[":
                self.lists += 1
                for _ in walk.items():
                    yield from self._resource()
            else:
                walk.value()
        walk.end()

    def _resource(self) -> Iterator[tuple[Any, Any]]:
        walk = self.walk
        if walk.peek() != "{":
            walk.value()
            return
        attributes: Any = None
        held: list[Any] = []  # spans met before their resource (keys in another order)
        known = False
        for key in walk.members():
            if key == "resource":
                resource = walk.value()
                attributes = resource.get("attributes") if isinstance(resource, dict) else None
                known = True
            elif key in SCOPE_SPANS and walk.peek() == "[":
                for span in self._scopes():
                    if known:
                        yield span, attributes
                    else:
                        held.append(span)
            else:
                walk.value()
        yield from ((span, attributes) for span in held)

    def _scopes(self) -> Iterator[Any]:
        walk = self.walk
        for _ in walk.items():
            if walk.peek() != "{":
                walk.value()
                continue
            for key in walk.members():
                if key == "spans" and walk.peek() == "[":
                    yield from (walk.value() for _ in walk.items())
                else:
                    walk.value()
