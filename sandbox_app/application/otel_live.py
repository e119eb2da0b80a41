"""Live mode: a run's spans sent while it goes, not after it.

The agent span starts with the run; each finished step's chat and tool spans are made then
(from the same plan a finished run's export uses, ``core/otel/otel_attributes.py``) and
queued to a BatchSpanProcessor, whose own thread does the network. What the caller's thread
does per frame is append events and, once a step, make a few spans: never a request, so the
trace pane is not slowed by a slow or absent collector. An unreachable one is reported once,
by ``on_problem`` (called on the exporter's thread: the window takes it to its own).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from sandbox_app.application.otel_export import (
    OtlpTarget,
    WatchedExporter,
    batch_processor,
    make_spans,
    tracer_provider,
)
from sandbox_app.core.otel.otel_attributes import SpanPlan, Tags, run_spans
from sandbox_app.core.running.events import Event, RunFinished, StepFinished
from sandbox_app.core.running.records import RunRecord, RunSettings

if TYPE_CHECKING:
    from opentelemetry.trace import Span


class LiveExport:
    """One endpoint's live export, for any number of runs (the window's lanes share it)."""

    def __init__(self, target: OtlpTarget, on_problem: Callable[[str], None] | None = None):
        self.target = target
        # on_problem is called on the exporter's thread, once: the first failure.
        self._watched = WatchedExporter(target, on_problem)
        self.tracer_provider = tracer_provider(batch_processor(self._watched))

    @property
    def sent(self) -> int:
        return self._watched.sent

    def run(self, settings: RunSettings, tags: Tags) -> LiveRun:
        return LiveRun(self, settings, tags)

    def close(self, wait: bool = True) -> None:
        """Send what is queued and stop; ``wait=False`` does it on a thread of its own."""
        if wait:
            self.tracer_provider.shutdown()
        else:
            threading.Thread(target=self.tracer_provider.shutdown, daemon=True).start()


class LiveRun:
    """One run's spans as its events come (feed them in order, from one thread)."""

    def __init__(self, live: LiveExport, settings: RunSettings, tags: Tags) -> None:
        self.live, self.tags = live, tags
        self.record = RunRecord(settings)
        self.start_ns = time.time_ns()
        self._agent: Span | None = None
        self._made = 0  # the plan's children already sent

    def feed(self, events: Iterable[Event]) -> None:
        from opentelemetry.trace import Status, StatusCode, set_span_in_context

        events = list(events)
        self.record.add(events)
        if self._agent is None and self.record.events:
            self._start()
        if not any(isinstance(e, StepFinished | RunFinished) for e in events):
            return
        plan = run_spans(self.record, self.tags, content=self.live.target.with_content)
        assert self._agent is not None
        inside = set_span_in_context(self._agent)
        make_spans(self.live.tracer_provider, plan.children[self._made :], self.start_ns, inside)
        self._made = len(plan.children)
        if self.record.finished is not None:
            self._agent.set_attributes(plan.attributes)
            if plan.error:
                self._agent.set_status(Status(StatusCode.ERROR, plan.error))
            self._agent.end(end_time=self.start_ns + round(plan.end_s * 1e9))

    def _start(self) -> None:
        plan: SpanPlan = run_spans(RunRecord(self.record.settings), self.tags, content=False)
        tracer = self.live.tracer_provider.get_tracer("react_sandbox")
        from opentelemetry.context import Context

        self._agent = tracer.start_span(
            plan.name, context=Context(), attributes=plan.attributes, start_time=self.start_ns
        )
