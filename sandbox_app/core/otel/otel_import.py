"""A trace from elsewhere (an OTLP file of GenAI or OpenInference spans) as a recording:
File → Open trace… and ``react-sandbox open-trace`` replay it, and Fork from step k goes on
from it live.

Each model call (a ``chat`` span, an OpenInference ``LLM`` span; an outer one that wraps
another, as LangChain's wraps the OpenAI SDK's, gives way to the inner) is a step, in the
order they started; traces that are steps of one conversation (a trace per call, as an
instrumentation with nothing around the loop writes them) are joined as one run
(core/otel/otel_joining.py), and the conversation with the most calls is the one opened.
What a run of this app would have emitted is rebuilt from it, so the trace, the metrics, the
exports and the fork are a live run's:

- text ReAct (no call in the trace has a tool call): the reply is the step's model text,
  parsed with the scenario's parser (dialect ``auto``) into an action, an answer or a format
  error; the observation is what the next call sent after that reply (the ``Observation:``
  message), else the tool span's output;
- native tool calls: the reply is the Thought and each call an Action line, as the native
  trace shows them; each result is the next call's ``tool`` message, after the reply it
  answers, for that call id (else, where the trace gives none, in the call's place), else the
  tool span's output; a reply without calls is the answer;
- each step's request (the messages it sent) is its ``Exchange``: what a fork starts from;
- each step's figures are its span's usage attributes (tokens in and out, reasoning, cache),
  its duration and its tools' spans'.

The scenario holds the system prompt, the question, the model's tool-calling mode and the
tools the trace names. A tool's implementation is never in a trace, so each becomes one of
the scenario's own tools: a mock that answers the inputs the trace recorded with the results
it recorded, or, when the trace recorded none, one that asks the user; a built-in's name
keeps the built-in. Each such gap is one notice line, shown above the trace.

A long trace is read as it is shown (:class:`TraceStream`): the file's spans come a request
at a time (the collector's file exporter writes one a line), the trace, the scenario and its
tools are chosen from the first :data:`FIRST_SPANS` spans (a file that short is read exactly
as a whole file would be), and the steps of each later :data:`MORE_SPANS` spans are built as
they come, so the first steps are on screen while the rest is read. A model call is a step
unless another model call within its read wraps it; the tools' mock answers are those of the
first read's steps. Joining needs every trace a conversation's steps may be in, and a file
of per-call traces may hold them in any order: when the first read's chosen conversation is
joined from several traces, the rest of the file is read before anything is shown and the
conversations are found again in the whole (such a file is a call a trace, each holding the
conversation so far: its steps are few for its size).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from sandbox_app.core.otel.otel_joining import Chain, chains
from sandbox_app.core.otel.otel_messages import ModelCall
from sandbox_app.core.otel.otel_reading import Read, read_ahead
from sandbox_app.core.otel.otel_spans import (
    Span,
    TraceError,
    innermost,
    iter_spans,
    kind,
    unique,
)
from sandbox_app.core.otel.otel_steps import Steps
from sandbox_app.core.otel.otel_tools import scenario_tools
from sandbox_app.core.react_format.prompts import unknown_placeholders
from sandbox_app.core.running import events as ev
from sandbox_app.core.running.recording import RecordedLane, Recording, Timed
from sandbox_app.core.running.records import RunSettings
from sandbox_app.core.scenarios.lane_settings import MAX_STEPS_RANGE, LaneSettings
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.untrusted.file_reader import ReadError, display_name

FIRST_SPANS = 2_000  # read before anything is shown: the trace and its scenario come from it
MORE_SPANS = 16  # each later read: ~8 steps, about a millisecond, so the window stays live
T = TypeVar("T")


@dataclass(frozen=True)
class ImportedTrace:
    recording: Recording
    notices: tuple[str, ...]  # one line per piece the trace lacks

    @property
    def lane(self) -> RecordedLane:
        return self.recording.lanes[0]


def open_trace(path: str | Path) -> ImportedTrace:
    """The whole trace in ``path`` as a recording, its notices first; TraceError says in one
    line what is wrong."""
    return whole(TraceStream(path))


def whole(stream: TraceStream) -> ImportedTrace:
    """The rest of ``stream`` read: the trace as a recording, its notices first."""
    events = list(stream.steps())
    lead: list[ev.Event] = [stream.started]
    lead += [ev.Notice(0, f"⚠ {line}") for line in stream.notices]
    lane = RecordedLane(stream.settings, (*((0.0, e) for e in lead), *events))
    return ImportedTrace(Recording(stream.scenario, (lane,), "", "trace"), tuple(stream.notices))


class TraceStream:
    """A trace read as it is shown: made with the file's first spans read (the scenario,
    its settings, the notices so far); :meth:`timed` then yields the run's events as the
    rest is read. ``done``: the whole file is read."""

    def __init__(self, path: str | Path) -> None:
        self.name = display_name(path)
        self._spans = read_ahead(iter_spans(path))
        self.done = False
        reads = self._guarded(lambda: self._read(FIRST_SPANS))
        chosen = self._chosen(reads)
        if len(chosen.traces) > 1 and not self.done:  # per-call pieces: join them all
            reads += self._guarded(lambda: list(self._spans))
            self.done = True
            chosen = self._chosen(reads)
        self.notices = _joined(chosen, len({s.trace_id for s, _ in reads}))
        self._traces = set(chosen.traces)
        calls, trace = chosen.calls, chosen.spans
        tools = [s for s in trace if kind(s) == "tool"]
        native = any(c.calls or any(m.get("role") == "tool" for m in c.messages) for c in calls)
        self._builder = Steps(native, min(s.start_ns for s in trace))
        self._builder.add(calls, tools)
        self._first = self._guarded(lambda: list(self._builder.built(final=self.done)))
        self.scenario = self._scenario(calls, trace, native)
        self._builder.collecting = False  # the mock tools answer the first read's inputs
        model = next((c.model for c in calls if c.model), "")
        scenario = self.scenario
        self.started = ev.RunStarted(
            scenario.system_prompt or "", scenario.question, scenario.max_steps or 0, "trace", model
        )
        self.settings = RunSettings(
            backend="custom",
            model=model,
            settings=self.scenario.model,
            dialect="auto",
            max_steps=self.scenario.max_steps,
            question=self.scenario.question,
        )
        self._told = len(self.notices)

    def _read(self, count: int) -> list[Read]:
        reads = list(itertools.islice(self._spans, count))
        self.done = len(reads) < count
        return reads

    def _chosen(self, reads: list[Read]) -> Chain:
        """The conversation with the most model calls in ``reads``, its calls those the
        reading thread made."""
        made = {id(s): c for s, c in reads if c is not None}  # the spans' own objects
        found = chains([s for s, _ in reads], lambda s: made[id(s)])
        if not found:
            raise TraceError(
                f"{self.name}: no model calls (no span with gen_ai.operation.name chat or "
                "openinference.span.kind LLM)."
            )
        return found[0]

    def _calls(self, reads: list[Read]) -> tuple[list[ModelCall], list[Span]]:
        calls = {s.span_id: c for s, c in reads if c is not None}
        spans = unique([s for s, _ in reads])
        inner = innermost(spans, [s for s in spans if s.span_id in calls])
        return [calls[s.span_id] for s in inner], [s for s in spans if kind(s) == "tool"]

    def _guarded(self, build: Callable[[], list[T]]) -> list[T]:
        try:
            return build()
        except TraceError:
            raise
        except ReadError as err:  # an attribute's JSON: too deep, not text…
            raise TraceError(f"{self.name}: {err}") from None

    def timed(self) -> Iterator[Timed]:
        """The run's events as a recording holds them: its start and the notices so far,
        then the steps as they are read; a notice met later comes before the run's end."""
        yield 0.0, self.started
        yield from ((0.0, ev.Notice(0, f"⚠ {line}")) for line in self.notices)
        for at, event in self.steps():
            if isinstance(event, ev.RunFinished):
                late = self.notices[self._told :]
                yield from ((at, ev.Notice(0, f"⚠ {line}")) for line in late)
            yield at, event

    def steps(self) -> Iterator[Timed]:
        """The steps' events, read as they are asked for; the run's end last."""
        yield from self._first
        self._first = []
        builder = self._builder
        while not self.done and builder.answer is None:
            reads = self._guarded(lambda: self._read(MORE_SPANS))
            builder.add(*self._calls([r for r in reads if r[0].trace_id in self._traces]))
            yield from self._guarded(lambda: list(builder.built(final=self.done)))
        self.notices += builder.notices
        builder.notices = []

    def _scenario(self, calls: list[ModelCall], trace: list[Span], native: bool) -> Scenario:
        first = calls[0].messages
        system = next((m["content"] for m in first if m.get("role") == "system"), "")
        question = next((m["content"] for m in first if m.get("role") == "user"), "")
        if not question:
            agent = next((s for s in trace if kind(s) == "agent"), None)
            question = str(agent.attributes.get("input.value", "")) if agent else ""
        custom, enabled, tool_notices = scenario_tools(calls, self._builder.results)
        self.notices += tool_notices + self._builder.notices
        self._builder.notices = []
        if not system:
            self.notices.append("The trace holds no system prompt: a fork goes on without one.")
        if unknown_placeholders(system):
            self.notices.append(
                "The system prompt has {…} words this app reads as placeholders: a fork sends "
                "the recorded prompt, a new run refuses it until they are edited."
            )
        return Scenario(
            title=f"Trace: {self.name}",
            question=question,
            dialect="auto",
            system_prompt=system,
            enabled_tools=enabled,
            documents=(),
            custom_tools=custom,
            max_steps=min(MAX_STEPS_RANGE[1], max(5, len(calls) + 1)),
            model=LaneSettings().replace(tool_calling="native" if native else "react"),
        )


def _joined(chosen: Chain, traces: int) -> list[str]:
    """The notice of which of the file's ``traces`` are shown, when it holds more than one."""
    first = chosen.traces[0][:12]
    if 1 < len(chosen.traces) == traces:
        return [f"The file holds {traces} traces, each a step of one run: joined."]
    if len(chosen.traces) > 1:
        return [
            f"The file holds {traces} traces: the {len(chosen.traces)} that are steps of the "
            f"conversation with the most model calls are joined (the first: trace {first})."
        ]
    if traces > 1:
        return [
            f"The file holds {traces} traces: this is the one with the most model calls "
            f"(trace {first})."
        ]
    return []
