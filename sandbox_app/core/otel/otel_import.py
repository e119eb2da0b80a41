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
  trace shows them; each result is the next call's ``tool`` message for that call id, else
  the tool span's output; a reply without calls is the answer;
- each step's request (the messages it sent) is its ``Exchange``: what a fork starts from;
- each step's figures are its span's usage attributes (tokens in and out, reasoning, cache),
  its duration and its tools' spans'.

The scenario holds the system prompt, the question, the model's tool-calling mode and the
tools the trace names. A tool's implementation is never in a trace, so each becomes one of
the scenario's own tools: a mock that answers the inputs the trace recorded with the results
it recorded, or, when the trace recorded none, one that asks the user; a built-in's name
keeps the built-in. Each such gap is one notice line, shown above the trace.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sandbox_app.core.otel.otel_joining import chains
from sandbox_app.core.otel.otel_messages import ModelCall
from sandbox_app.core.otel.otel_spans import Span, TraceError, kind, read_spans
from sandbox_app.core.otel.otel_tools import scenario_tools
from sandbox_app.core.react_format.parser import parse_turn
from sandbox_app.core.react_format.prompts import unknown_placeholders
from sandbox_app.core.running import events as ev
from sandbox_app.core.running.metrics import RunMetrics, StepMetrics, estimate_tokens
from sandbox_app.core.running.native_tools import NativeCall, call_input
from sandbox_app.core.running.recording import MAX_OFFSET_S, RecordedLane, Recording
from sandbox_app.core.running.records import RunSettings
from sandbox_app.core.scenarios.lane_settings import LaneSettings
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.untrusted.file_reader import ReadError, display_name

MAX_STEPS = 50  # the scenario's own limit


@dataclass(frozen=True)
class ImportedTrace:
    recording: Recording
    notices: tuple[str, ...]  # one line per piece the trace lacks

    @property
    def lane(self) -> RecordedLane:
        return self.recording.lanes[0]


def open_trace(path: str | Path) -> ImportedTrace:
    """The trace in ``path`` as a recording; TraceError says in one line what is wrong."""
    name = display_name(path)
    spans = read_spans(path)
    try:
        return imported(spans, name)
    except TraceError:
        raise
    except ReadError as err:  # an attribute's JSON: too deep, not text…
        raise TraceError(f"{name}: {err}") from None


def imported(spans: Sequence[Span], name: str) -> ImportedTrace:
    notices: list[str] = []
    found = chains(spans)
    if not found:
        raise TraceError(
            f"{name}: no model calls (no span with gen_ai.operation.name chat or "
            "openinference.span.kind LLM)."
        )
    chosen, traces = found[0], len({s.trace_id for s in spans})
    first_trace = chosen.traces[0][:12]
    if 1 < len(chosen.traces) == traces:
        notices.append(f"The file holds {traces} traces, each a step of one run: joined.")
    elif len(chosen.traces) > 1:
        notices.append(
            f"The file holds {traces} traces: the {len(chosen.traces)} that are steps of the "
            f"conversation with the most model calls are joined (the first: trace {first_trace})."
        )
    elif traces > 1:
        notices.append(
            f"The file holds {traces} traces: this is the one with the most model calls "
            f"(trace {first_trace})."
        )
    trace, calls = chosen.spans, chosen.calls
    if len(calls) > MAX_STEPS:
        notices.append(f"The trace has {len(calls)} model calls: the first {MAX_STEPS} are shown.")
        calls = calls[:MAX_STEPS]
    tool_spans = sorted((s for s in trace if kind(s) == "tool"), key=lambda s: s.start_ns)
    native = any(c.calls or any(m.get("role") == "tool" for m in c.messages) for c in calls)
    builder = _Builder(calls, tool_spans, native, min(s.start_ns for s in trace))
    events = builder.events()
    first = calls[0].messages
    system = next((m["content"] for m in first if m.get("role") == "system"), "")
    question = next((m["content"] for m in first if m.get("role") == "user"), "")
    if not question:
        agent = next((s for s in trace if kind(s) == "agent"), None)
        question = str(agent.attributes.get("input.value", "")) if agent else ""
    custom, enabled, tool_notices = scenario_tools(calls, builder.results)
    notices += tool_notices + builder.notices
    if not system:
        notices.append("The trace holds no system prompt: a fork goes on without one.")
    if unknown_placeholders(system):
        notices.append(
            "The system prompt has {…} words this app reads as placeholders: a fork sends the "
            "recorded prompt, a new run refuses it until they are edited."
        )
    model = next((c.model for c in calls if c.model), "")
    scenario = Scenario(
        title=f"Trace: {name}",
        question=question,
        dialect="auto",
        system_prompt=system,
        enabled_tools=enabled,
        documents=(),
        custom_tools=custom,
        max_steps=min(MAX_STEPS, max(5, len(calls))),
        model=LaneSettings().replace(tool_calling="native" if native else "react"),
    )
    started = ev.RunStarted(system, question, scenario.max_steps, "trace", model)
    lead: list[tuple[float, ev.Event]] = [(0.0, started)]
    lead += [(0.0, ev.Notice(0, f"⚠ {line}")) for line in notices]
    settings = RunSettings(
        backend="custom",
        model=model,
        settings=scenario.model,
        dialect="auto",
        max_steps=scenario.max_steps,
        question=question,
    )
    lane = RecordedLane(settings, tuple(lead + events))
    return ImportedTrace(Recording(scenario, (lane,), "", "trace"), tuple(notices))


class _Builder:
    """The events a live run of these calls would have emitted, with their times."""

    def __init__(self, calls: list[ModelCall], tools: list[Span], native: bool, t0: int) -> None:
        self.calls, self.tools, self.native, self.t0 = calls, tools, native, t0
        self.notices: list[str] = []
        self.results: dict[str, list[tuple[str, str]]] = defaultdict(list)  # tool → (in, out)
        self._used: set[str] = set()
        self._timed: list[tuple[float, ev.Event]] = []
        self._steps: list[StepMetrics] = []
        self._actions = self._format_errors = 0
        self._tool_end = 0  # when the step's last tool span ended (ns)
        self._tool_s = 0.0  # the step's tools' time

    def _at(self, ns: int) -> float:
        return min(max((ns - self.t0) / 1e9, 0.0), float(MAX_OFFSET_S))

    def _add(self, ns: int, *events: ev.Event) -> None:
        at = self._at(ns)
        if self._timed:  # never before the event ahead of it
            at = max(at, self._timed[-1][0])
        self._timed += [(at, e) for e in events]

    def events(self) -> list[tuple[float, ev.Event]]:
        answer: str | None = None
        for k, call in enumerate(self.calls, 1):
            answer = self._step(k, call)
            if answer is not None:
                break
        ends = [c.span.end_ns for c in self.calls] + [s.end_ns for s in self.tools]
        metrics = RunMetrics(
            tuple(self._steps),
            max(0.0, (max(ends) - self.t0) / 1e9),
            self._actions,
            self._format_errors,
        )
        last = self.calls[len(self._steps) - 1].span.end_ns
        if answer is not None:
            self._add(last, ev.RunFinished("answered", "", answer, metrics))
        else:
            reason = f"The trace ends after step {len(self._steps)} without an answer."
            self._add(last, ev.RunFinished("stopped", reason, None, metrics))
        return self._timed

    def _step(self, k: int, call: ModelCall) -> str | None:
        span = call.span
        self._add(span.start_ns, ev.StepStarted(k))
        if call.reasoning:
            self._add(span.start_ns, ev.ReasoningDelta(k, call.reasoning))
        request: dict[str, object] = {"model": call.model, "messages": call.messages}
        if call.tools:
            request["tools"] = [
                {"type": "function", "function": {k_: v for k_, v in t.items() if v is not None}}
                for t in call.tools
            ]
        made = tuple(ev.CallMade(c.id, c.name, c.arguments) for c in call.calls)
        reply = call.text + ev.call_lines(made)
        exchange = ev.Exchange(
            k, request, reply, call.reasoning, call.finish_reason, call.usage, None, None, made
        )
        answer = self._native(k, call, exchange) if self.native else self._text(k, call, exchange)
        self._steps.append(self._metrics(k, call))
        self._add(max(span.end_ns, self._tool_end), ev.StepFinished(k, self._steps[-1]))
        return answer

    def _native(self, k: int, call: ModelCall, exchange: ev.Exchange) -> str | None:
        span, content = call.span, call.text.lstrip()
        shown = f"Thought: {content}" if content else ""
        for c in call.calls:
            head = "\n" if shown and not shown.endswith("\n") else ""
            shown += f"{head}Action: {c.name}({c.arguments})\n"
        self._add(span.start_ns, ev.TokenDelta(k, shown))
        self._add(span.end_ns, exchange)
        if not call.calls:
            self._add(span.end_ns, ev.FinalAnswer(k, content.strip(), was_thought=True))
            return content.strip()
        self._tool_end, self._tool_s = span.end_ns, 0.0
        for i, c in enumerate(call.calls):
            text, refused = call_input(None, NativeCall(c.id, c.name, c.arguments))
            given = text if refused is None else c.arguments
            self._actions += 1
            self._add(span.end_ns, ev.ActionParsed(k, c.name, given))
            result = self._result(k, c.name, given, (c.id, i))
            if result is not None:
                self._add(self._tool_end, _observation(k, c.name, result))
        return None

    def _text(self, k: int, call: ModelCall, exchange: ev.Exchange) -> str | None:
        span = call.span
        turn = parse_turn(call.text)  # the scenario's dialect is auto: any dialect
        self._add(span.start_ns, ev.TokenDelta(k, turn.kept or call.text))
        if turn.dropped:
            self._add(span.start_ns, ev.FabricationCut(k, turn.dropped))
        self._add(span.end_ns, exchange)
        self._tool_end, self._tool_s = span.end_ns, 0.0
        if turn.kind == "answer":
            self._add(span.end_ns, ev.FinalAnswer(k, turn.answer))
            return turn.answer
        if turn.kind == "action":
            self._actions += 1
            self._add(span.end_ns, ev.ActionParsed(k, turn.tool, turn.input))
            result = self._result(k, turn.tool, turn.input, None)
            if result is not None:
                self._add(self._tool_end, _observation(k, turn.tool, result))
            return None
        self._format_errors += 1
        correction = self._sent_after(k, "user") or "The reply had no action and no answer."
        self._add(span.end_ns, ev.FormatError(k, correction))
        return None

    def _result(self, k: int, tool: str, given: str, native: tuple[str, int] | None) -> str | None:
        """What the tool returned: as the next call was sent it, else its span said.
        ``native``: the call's id and its place in the reply (text ReAct: None)."""
        span = self._tool_span(tool, native[0] if native else "")
        if span is not None:
            self._tool_end = max(self._tool_end, span.end_ns)
            self._tool_s += max(0, span.end_ns - span.start_ns) / 1e9
        if native is not None:
            result = self._tool_message(k, *native)
        else:
            result = self._sent_after(k, "user")
            if result is not None:
                result = result.removeprefix("Observation:").strip()
        if result is None and span is not None:
            output = span.attributes.get(
                "output.value", span.attributes.get("gen_ai.tool.call.result")
            )
            result = None if output is None else str(output)
        if result is None:
            self.notices.append(f"Step {k}: the trace has no result of {tool}.")
            return None
        self.results[tool].append((given, result))
        return result

    def _later(self, k: int) -> list[dict[str, object]]:
        return self.calls[k].messages if k < len(self.calls) else []

    def _after_reply(self, k: int, role: str) -> list[dict[str, object]]:
        """The next call's messages of ``role`` after this step's reply (its last assistant
        message): what answered it. Earlier ones answered earlier steps, whose call ids a
        provider or the app may have given again (Gemini's and Ollama's calls have none)."""
        later = self._later(k)
        last = max((i for i, m in enumerate(later) if m.get("role") == "assistant"), default=None)
        return [] if last is None else [m for m in later[last + 1 :] if m.get("role") == role]

    def _sent_after(self, k: int, role: str) -> str | None:
        after = [str(m.get("content", "")) for m in self._after_reply(k, role)]
        return "\n".join(after) if after else None

    def _tool_message(self, k: int, call_id: str, place: int) -> str | None:
        """The result sent back for a call: the tool message with its id, else, where the
        trace gives the results no ids, the one in the call's place."""
        answers = self._after_reply(k, "tool")
        found = next((m for m in answers if call_id and m.get("tool_call_id") == call_id), None)
        if found is None and place < len(answers) and not answers[place].get("tool_call_id"):
            found = answers[place]
        return None if found is None else str(found.get("content", ""))

    def _tool_span(self, tool: str, call_id: str) -> Span | None:
        for span in self.tools:
            a = span.attributes
            if span.span_id in self._used:
                continue
            named = str(a.get("gen_ai.tool.name", a.get("tool.name", ""))) or span.name
            same_id = call_id and a.get("gen_ai.tool.call.id") == call_id
            if same_id or ((not a.get("gen_ai.tool.call.id") or not call_id) and tool in named):
                self._used.add(span.span_id)
                return span
        return None

    def _metrics(self, k: int, call: ModelCall) -> StepMetrics:
        usage, span = call.usage, call.span
        wall = max(0, max(span.end_ns, self._tool_end) - span.start_ns) / 1e9
        if usage is None:
            sent = sum(len(str(m.get("content", ""))) for m in call.messages)
            return StepMetrics(
                k, None, wall, (sent + 3) // 4, estimate_tokens(call.text), True, self._tool_s
            )
        return StepMetrics(
            k,
            None,
            wall,
            usage["prompt_tokens"],
            usage["completion_tokens"],
            False,
            self._tool_s,
            reasoning_tokens=usage["reasoning_tokens"] or 0,
            prompt_tokens=usage["prompt_tokens"],
            prompt_estimated=False,
            cache_read_tokens=usage["cache_read_tokens"],
            cache_write_tokens=usage["cache_write_tokens"],
        )


def _observation(k: int, tool: str, text: str) -> ev.Observation:
    return ev.Observation(k, tool, text, text.startswith("Error"), f"Observation: {text}")
