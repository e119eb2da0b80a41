"""The events a live run of a trace's model calls would have emitted, step by step, with
their times (core/otel/otel_import.py says how each call is read). Calls are added as the
file is read (:meth:`Steps.add`); a step is built once the call after it is there (its
observation is what that call sent), so a long trace's steps come while the rest is read, and
a step's calls and tool spans are let go once it is built.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterator

from sandbox_app.core.otel.otel_messages import ModelCall
from sandbox_app.core.otel.otel_spans import Span
from sandbox_app.core.react_format.parser import parse_turn
from sandbox_app.core.running import events as ev
from sandbox_app.core.running.metrics import RunMetrics, StepMetrics, estimate_tokens
from sandbox_app.core.running.native_tools import NativeCall, call_input
from sandbox_app.core.running.recording import MAX_OFFSET_S, Timed


class Steps:
    """The events a live run of the calls added would have emitted, with their times."""

    def __init__(self, native: bool, t0: int) -> None:
        self.native, self.t0 = native, t0
        self.calls: deque[ModelCall] = deque()  # added, not yet built (and the one after)
        self.tools: list[Span] = []  # tool spans not yet matched to a call, by start
        self.notices: list[str] = []
        # tool → (input, result), while ``collecting``: the scenario's mock tools answer these.
        self.results: dict[str, list[tuple[str, str]]] = defaultdict(list)
        self.collecting = True
        self.answer: str | None = None  # the trace's answer, once a step gave one
        self._timed: list[Timed] = []
        self._steps: list[StepMetrics] = []
        self._actions = self._format_errors = 0
        self._tool_end = 0  # when the step's last tool span ended (ns)
        self._tool_s = 0.0  # the step's tools' time
        self._end = self._last = t0  # the latest end of any span; the last step's call's end
        self._since = 0.0  # the time of the last event made

    def _at(self, ns: int) -> float:
        return min(max((ns - self.t0) / 1e9, 0.0), float(MAX_OFFSET_S))

    def _add(self, ns: int, *events: ev.Event) -> None:
        at = self._since = max(self._at(ns), self._since)  # never before the event ahead of it
        self._timed += [(at, e) for e in events]

    def add(self, calls: list[ModelCall], tools: list[Span]) -> None:
        self.calls.extend(calls)
        self.tools = sorted(self.tools + tools, key=lambda s: s.start_ns)
        self._end = max([self._end] + [c.span.end_ns for c in calls] + [t.end_ns for t in tools])

    def built(self, final: bool = False) -> Iterator[Timed]:
        """The events of every step whose next call is known (``final``: of every step), and
        after the last step (``final``, or a step that answered) the run's end."""
        while self.answer is None and len(self.calls) > (0 if final else 1):
            call = self.calls[0]
            self.answer = self._step(len(self._steps) + 1, call)
            self._last = call.span.end_ns
            self.calls.popleft()
            yield from self._taken()
        if final or self.answer is not None:
            yield from self._finish()

    def _taken(self) -> list[Timed]:
        timed, self._timed = self._timed, []
        return timed

    def _finish(self) -> list[Timed]:
        metrics = RunMetrics(
            tuple(self._steps),
            max(0.0, (self._end - self.t0) / 1e9),
            self._actions,
            self._format_errors,
        )
        if self.answer is not None:
            self._add(self._last, ev.RunFinished("answered", "", self.answer, metrics))
        else:
            reason = f"The trace ends after step {len(self._steps)} without an answer."
            self._add(self._last, ev.RunFinished("stopped", reason, None, metrics))
        return self._taken()

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
        if self.collecting:
            self.results[tool].append((given, result))
        return result

    def _later(self, k: int) -> list[dict[str, object]]:
        """The call after step ``k``'s (the first call held is step ``k``'s own)."""
        return self.calls[1].messages if len(self.calls) > 1 else []

    def _after_reply(self, k: int, role: str) -> list[dict[str, object]]:
        """The next call's messages of ``role`` after this step's reply (its last assistant
        message): what answered it. Earlier ones answered earlier steps, whose call ids a
        provider or the app may have given again (Gemini's and Ollama's calls have none). A
        call that sends no assistant message sends only what is new since the reply (a
        sliding window, a Responses ``previous_response_id`` chain): all of it answered it."""
        later = self._later(k)
        last = max((i for i, m in enumerate(later) if m.get("role") == "assistant"), default=-1)
        return [m for m in later[last + 1 :] if m.get("role") == role]

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
        """The first tool span not matched yet that is this call's (by id, else by name);
        taken out of those held, so a long trace's search stays short."""
        for i, span in enumerate(self.tools):
            a = span.attributes
            named = str(a.get("gen_ai.tool.name", a.get("tool.name", ""))) or span.name
            same_id = call_id and a.get("gen_ai.tool.call.id") == call_id
            if same_id or ((not a.get("gen_ai.tool.call.id") or not call_id) and tool in named):
                del self.tools[i]
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
