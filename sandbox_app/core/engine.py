"""The ReAct loop: stream a turn, cut fabricated observations, run the tool, repeat to an answer.

Seed 003's ``run_react`` is the shape: a system prompt and the question, then per step the
model's text as the assistant message and ``Observation: <result>`` as the next user message,
until a final answer or the step limit. On top of it: streaming with a client-side cut at the
Observation label, one corrective observation for a reply in no format, approval for tools
with side effects, budgets, and metrics.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field

from sandbox_app.core.backend import Backend, BackendError, Message, StreamParams, Usage
from sandbox_app.core.dialects import Dialect, spec
from sandbox_app.core.events import (
    ActionParsed,
    Event,
    FabricationCut,
    FinalAnswer,
    FormatError,
    Notice,
    Observation,
    RunFinished,
    RunStarted,
    Status,
    StepFinished,
    StepStarted,
    TokenDelta,
)
from sandbox_app.core.metrics import RunMetrics, StepMetrics, estimate_tokens
from sandbox_app.core.parser import Turn, TurnScanner, parse_kept
from sandbox_app.core.prompts import DEFAULT_TEMPLATE, PromptError, render_prompt
from sandbox_app.core.scenario import Scenario
from sandbox_app.core.tools import Approver, Tool, ToolRouter, builtin_tools
from sandbox_app.core.tools.router import INPUT_TOO_LONG

MAX_STEPS_MESSAGE = "Reached max steps without final answer"  # seed 003's wording
# Chunks that arrive together (a fast server, or a client catching up) are handled in one
# go; hand control back to the event loop this often so the window keeps drawing meanwhile.
YIELD_EVERY_S = 0.004
# A reply longer than this many characters per allowed token means the server ignored
# max_tokens (a token is about 4 characters); reading on would only fill memory and the trace.
CHARS_PER_TOKEN_LIMIT = 16
# Stop generating where the model would start writing its own observation. "\nObservation "
# also covers the numbered ("Observation 2:") and tool-tagged ("Observation (search):") forms.
STOP_SEQUENCES = ("\nObservation:", "\nObservation ")


@dataclass
class _Tally:
    """Mutable counters while a run is going; frozen into :class:`RunMetrics` when reported."""

    started: float = field(default_factory=time.perf_counter)
    steps: list[StepMetrics] = field(default_factory=list)
    tool_calls: int = 0
    format_errors: int = 0
    fabrications_cut: int = 0

    def snapshot(self) -> RunMetrics:
        return RunMetrics(
            tuple(self.steps),
            time.perf_counter() - self.started,
            self.tool_calls,
            self.format_errors,
            self.fabrications_cut,
        )


class ReactEngine:
    """One run of one scenario against one backend. Iterate :meth:`run` for its events.

    Cancelling the task that iterates :meth:`run` stops the run: the backend stream closes on
    the way out, and :meth:`stopped` gives the ``RunFinished`` event describing it.
    """

    def __init__(
        self,
        scenario: Scenario,
        backend: Backend,
        *,
        model: str = "",
        approve: Approver | None = None,
        token_budget: int | None = None,
        tools: list[Tool] | None = None,
    ) -> None:
        self.scenario = scenario
        self.backend = backend
        self.model = model
        self.token_budget = token_budget
        self.tools = (
            tools
            if tools is not None
            else builtin_tools(scenario.enabled_tools, scenario.documents)
        )
        self.router = ToolRouter(self.tools, approve=approve)
        self.messages: list[Message] = []
        self.answer: str | None = None
        self._tally = _Tally()
        self._dialect: Dialect = scenario.prompt_dialect

    def system_prompt(self) -> str:
        """The rendered system prompt; raises PromptError for an unknown placeholder."""
        template = self.scenario.system_prompt or DEFAULT_TEMPLATE
        return render_prompt(template, self.tools, self._dialect)

    def stopped(self) -> RunFinished:
        return RunFinished("stopped", "Stopped by the user.", None, self._tally.snapshot())

    async def run(self) -> AsyncIterator[Event]:
        s = self.scenario
        self._tally = _Tally()
        try:
            system = self.system_prompt()
        except PromptError as err:
            yield self._finish("failed", str(err))
            return
        self.messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": s.question},
        ]
        yield RunStarted(system, s.question, s.max_steps, self.backend.label, self.model)
        for step in range(1, s.max_steps + 1):
            yield StepStarted(step)
            step_started = time.perf_counter()
            outcome = _StepOutcome()
            try:
                async for event in self._stream_turn(step, outcome):
                    yield event
            except BackendError as err:
                yield self._record_step(step, step_started, outcome, 0.0)
                yield self._finish("failed", str(err))
                return
            turn = outcome.turn
            tool_s = 0.0
            if turn.kind == "answer":
                self.answer = turn.answer
                yield FinalAnswer(step, turn.answer)
                yield self._record_step(step, step_started, outcome, tool_s)
                yield self._finish("answered", "")
                return
            self.messages.append({"role": "assistant", "content": turn.kept.strip()})
            if turn.kind == "action":
                yield ActionParsed(step, turn.tool, turn.input)
                result = await self.router.run_tool(turn.tool, turn.input)
                self._tally.tool_calls += 1
                tool_s = result.seconds
                message = self._observation(step, turn.tool, result.text)
                self.messages.append({"role": "user", "content": message})
                yield Observation(step, turn.tool, result.text, result.error, message)
            else:
                self._tally.format_errors += 1
                message = self._observation(step, "", self._correction(turn))
                self.messages.append({"role": "user", "content": message})
                yield FormatError(step, message)
            yield self._record_step(step, step_started, outcome, tool_s)
            spent = sum(m.tokens_in + m.tokens_out for m in self._tally.steps)
            if self.token_budget is not None and spent >= self.token_budget:
                yield self._finish(
                    "failed", f"Token budget of {self.token_budget:,} used up after step {step}."
                )
                return
        yield self._finish("max_steps", MAX_STEPS_MESSAGE)

    async def _stream_turn(self, step: int, out: _StepOutcome) -> AsyncIterator[Event]:
        """Stream one reply into ``out``, yielding the model's own text as it is certain."""
        params = self._params()
        scanner = TurnScanner()
        sent_at = time.perf_counter()
        max_chars = params.max_tokens * CHARS_PER_TOKEN_LIMIT
        received_chars = 0
        last_yield = time.perf_counter()
        try:
            async with aclosing(self.backend.stream(self.messages, params)) as stream:
                async for delta in stream:
                    if delta.notice:
                        yield Notice(step, delta.notice)
                    if delta.usage is not None:
                        out.usage = delta.usage
                    if not delta.text:
                        continue
                    if out.ttft_s is None:
                        out.ttft_s = time.perf_counter() - sent_at
                    out.chunks += delta.chunks
                    text = delta.text[: max_chars - received_chars]
                    received_chars += len(text)
                    released = scanner.feed(text)
                    if released:
                        yield TokenDelta(step, released)
                    now = time.perf_counter()
                    if now - last_yield > YIELD_EVERY_S:
                        await asyncio.sleep(0)
                        last_yield = time.perf_counter()
                    if scanner.observation_started:
                        # Leaving the block closes the stream: stop paying for invented text.
                        out.tokens_saved = max(0, params.max_tokens - out.chunks)
                        break
                    if len(text) < len(delta.text):
                        raise BackendError(
                            f"The reply ran past {params.max_tokens:,} tokens: the server "
                            f"ignored max_tokens; stopped reading after {received_chars:,} "
                            "characters (the partial reply is kept)."
                        )
        finally:
            tail = scanner.finish()
            out.turn = parse_kept(scanner.kept, scanner.dropped, self.scenario.parse_dialect)
            out.received = scanner.kept + scanner.dropped
        if tail:
            yield TokenDelta(step, tail)
        if scanner.dropped:
            self._tally.fabrications_cut += 1
            yield FabricationCut(step, scanner.dropped)

    def _correction(self, turn: Turn) -> str:
        """What to tell a model whose reply had no action and no answer."""
        cut = turn.unclosed
        if cut is None:
            return spec(self._dialect).correction
        # An action whose bracket never closed: usually a reply cut by max_tokens mid-input.
        tool = next((t for t in self.tools if t.name.lower() == cut.tool), None)
        if tool is not None and cut.length > tool.max_input:
            return INPUT_TOO_LONG  # what the router would have said had it closed
        return (
            f'Error: the Action has no closing "{cut.closer}". '
            f"Write it as {cut.tool}{cut.opener}input{cut.closer}"
        )

    def _params(self) -> StreamParams:
        m = self.scenario.model
        return StreamParams(
            self.model, m.temperature, m.max_tokens, m.top_p, m.seed, STOP_SEQUENCES
        )

    def _observation(self, step: int, tool: str, text: str) -> str:
        """The user message carrying a tool's result (or, with no tool, a correction)."""
        dialect = spec(self._dialect)
        label = dialect.tool_observation_label if tool else dialect.observation_label
        return f"{label.format(step=step, tool=tool)} {text}"

    def _record_step(
        self, step: int, started: float, out: _StepOutcome, tool_s: float
    ) -> StepFinished:
        if out.usage is not None:
            tokens_in, tokens_out, estimated = (
                out.usage.prompt_tokens,
                out.usage.completion_tokens,
                False,
            )
        else:
            prompt = sum(estimate_tokens(m["content"]) for m in self.messages)
            tokens_in, tokens_out, estimated = prompt, estimate_tokens(out.received), True
        metrics = StepMetrics(
            step,
            out.ttft_s,
            time.perf_counter() - started,
            tokens_in,
            tokens_out,
            estimated,
            tool_s,
            out.tokens_saved,
        )
        self._tally.steps.append(metrics)
        return StepFinished(step, metrics)

    def _finish(self, status: Status, reason: str) -> RunFinished:
        return RunFinished(status, reason, self.answer, self._tally.snapshot())


@dataclass
class _StepOutcome:
    turn: Turn = field(default_factory=lambda: Turn("none"))
    usage: Usage | None = None
    ttft_s: float | None = None
    chunks: int = 0
    tokens_saved: int = 0
    received: str = ""


async def drive(engine: ReactEngine, emit: Callable[[Event], None]) -> RunFinished:
    """Run ``engine`` to the end, handing every event to ``emit``.

    A cancelled run still ends with a ``RunFinished("stopped")`` event, then the cancellation
    propagates so the caller's task ends as cancelled.
    """
    finished: RunFinished | None = None
    try:
        async for event in engine.run():
            emit(event)
            if isinstance(event, RunFinished):
                finished = event
    except asyncio.CancelledError:
        emit(engine.stopped())
        raise
    assert finished is not None  # run() always ends with RunFinished
    return finished
