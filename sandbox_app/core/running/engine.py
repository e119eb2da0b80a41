"""The ReAct loop: stream a turn, cut fabricated observations, run the tool, repeat to an answer.

A plain hand-written ReAct loop (per step the model's text, then ``Observation: <result>``, to
an answer or the step limit) with the Observation cut, one format correction, approval for side
effects, budgets, metrics and native tool calls in the API's own messages (native_tools.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from dataclasses import replace
from typing import Protocol

from sandbox_app.core.react_format.dialects import Dialect, spec
from sandbox_app.core.react_format.parser import correction_for, parse_kept
from sandbox_app.core.react_format.prompts import DEFAULT_TEMPLATE, PromptError, render_prompt
from sandbox_app.core.running.backend import Backend, BackendError, Message, StreamParams
from sandbox_app.core.running.backend import stream_params as request_with
from sandbox_app.core.running.carried import stamped
from sandbox_app.core.running.context_meter import ServedContext
from sandbox_app.core.running.events import (
    ActionParsed,
    Edited,
    Event,
    FinalAnswer,
    FormatError,
    Notice,
    Observation,
    RunFinished,
    RunStarted,
    Status,
    StepFinished,
    StepStarted,
)
from sandbox_app.core.running.fork import ForkPoint
from sandbox_app.core.running.loops import LoopWatch
from sandbox_app.core.running.metrics import RunTally
from sandbox_app.core.running.model_traits import traits_for
from sandbox_app.core.running.native_tools import (
    NATIVE_CORRECTION,
    NativeCall,
    assistant_message,
    call_input,
    finish_answer,
    tool_message,
    tool_schema,
    unparsed_call,
)
from sandbox_app.core.running.step_metrics import step_metrics
from sandbox_app.core.running.stepping import Pause, PauseFn
from sandbox_app.core.running.turn_reader import TurnOutcome, TurnReader, ask_again
from sandbox_app.core.scenarios.run_input import RunInput
from sandbox_app.core.tools import Approver, Tool, ToolResult, ToolRouter
from sandbox_app.core.tools.recorded import Recorded

MAX_STEPS_MESSAGE = "Reached max steps without final answer"  # as plain ReAct loops word it
# Stop generating where the model would start writing its own observation. "\nObservation "
# also covers the numbered ("Observation 2:") and tool-tagged ("Observation (search):") forms.
STOP_SEQUENCES = ("\nObservation:", "\nObservation ")


class ReactEngine:
    """One run of one scenario against one backend. Iterate :meth:`run` for its events.

    Cancelling the task that iterates :meth:`run` stops the run: the backend stream closes on
    the way out, and :meth:`stopped` gives the ``RunFinished`` event describing it.
    """

    def __init__(
        self,
        scenario: RunInput,
        backend: Backend,
        *,
        model: str = "",
        approve: Approver | None = None,
        token_budget: int | None = None,
        tools: list[Tool] | None = None,
        trusted: Collection[str] = (),
        fork: ForkPoint | None = None,
        pause: PauseFn | None = None,
        served: ServedContext = ServedContext(),  # noqa: B008 (frozen: one shared value)
        notes: Sequence[str] = (),
        source: str = "",
    ) -> None:
        """``fork`` (fork.py): the conversation so far and the events of the steps it holds,
        shown as they were; the run goes on from the step after them. ``served``: the server's
        context. ``notes``: what the trace says before step 1 (BackendKind.notes). ``source``:
        who the model is (kind, server, model), whom its reasoning items go back to (carried.py)."""
        self.notes, self.source = tuple(notes), source or f"{backend.label} {model}"
        # A fork goes on with its reasoning items only on the model that wrote them.
        self.fork = fork.going_on_with(self.source) if fork else ForkPoint(0, [], [])
        self.pause = pause  # step-through (core/running/stepping.py)
        self.scenario, self.backend, self.model = scenario, backend, model
        self.token_budget = token_budget
        self.tools = tools if tools is not None else scenario.tools()
        # Trusted: side-effecting tools let run unasked; recorded: an imported trace's answers.
        self.router = ToolRouter(
            self.tools, approve=approve, policies=scenario.policies, trusted=trusted,
            recorded=self.fork.recorded,
        )  # fmt: skip
        self.messages: list[Message] = []
        self.answer: str | None = None
        self._tally = RunTally()
        self._loops = LoopWatch()  # the actions so far (core/running/loops.py)
        self._tool_seconds = 0.0  # this step's tool time
        self._dialect: Dialect = scenario.prompt_dialect
        self.native = scenario.model.tool_calling == "native"
        self._traits = traits_for(backend.label, model)
        self._meter = served.meter(scenario.model.context_window)

    def system_prompt(self) -> str:
        """The rendered system prompt; raises PromptError for an unknown placeholder or an
        undefined {{variable}}: the run is refused before anything is sent."""
        s = self.scenario
        if undefined := s.undefined_variables():  # in the template or the question
            raise PromptError(undefined)
        template = s.system_prompt or DEFAULT_TEMPLATE
        return render_prompt(
            template, self.tools, self._dialect, native=self.native, variables=s.variables
        )

    def stopped(self) -> RunFinished:
        return RunFinished("stopped", "Stopped by the user.", None, self._tally.snapshot())

    async def run(self) -> AsyncIterator[Event]:
        s = self.scenario
        self._tally = RunTally()
        self._loops = LoopWatch(stop=s.model.stop_on_loops)
        try:
            system = self.fork.history[0]["content"] if self.fork.history else self.system_prompt()
        except PromptError as err:
            yield self._finish("failed", str(err))
            return
        self.messages = list(self.fork.history) or [
            {"role": "system", "content": system},
            {"role": "user", "content": s.asked_question},
        ]
        yield RunStarted(system, s.asked_question, s.max_steps, self.backend.label, self.model)
        for note in () if self.fork.prefix else self.notes:  # a fork's prefix has them already
            yield Notice(0, note)
        for event in self.fork.prefix:  # a fork's steps so far, as they were
            if isinstance(event, StepFinished):
                self._tally.steps.append(event.metrics)
            yield event
        for step in range(len(self._tally.steps) + 1, s.max_steps + 1):
            step_started = time.perf_counter()
            self._tool_seconds = 0.0
            params = self._params()
            for event in (StepStarted(step), *self._meter.before(step, self.messages, params)):
                yield event
            earlier: list[TurnOutcome] = []  # requests of this step asked again
            while True:
                reader = TurnReader(step, self._traits, s.parse_dialect, native=self.native)
                try:
                    async for event in reader.read(self.backend, self.messages, params):
                        yield event
                except BackendError as err:
                    yield reader.exchange()
                    yield self._record_step(step, step_started, reader.out, earlier)
                    yield self._finish("failed", str(err))
                    return
                yield reader.exchange()
                auto = self.scenario.model.max_tokens is None
                again = ask_again(params, reader.out, len(earlier), self._traits, auto)
                if again is None:
                    break
                params, notice = again
                earlier.append(reader.out)
                yield Notice(step, notice)
            outcome = reader.out
            for event in self._meter.after(step, self.messages, outcome.usage):
                yield event
            if outcome.repeated is not None:  # a degenerate reply cut: the model looping too
                self._tally.loops += 1
            elif outcome.turn.dropped:
                self._tally.fabrications_cut += 1
            turn = outcome.turn
            # Never acted on, never a format error: a reply cut short may stop inside an
            # action's input, an answer, or thinking that never said it was thinking.
            failure = _cut_by_limit(params.max_tokens, outcome) if outcome.cut_by_limit else None
            if self.native and not outcome.tool_calls:
                failure = failure or unparsed_call(outcome.content)
            if failure is not None:
                yield self._record_step(step, step_started, outcome, earlier)
                yield self._finish("failed", failure)
                return
            finish = finish_answer(outcome.tool_calls, self.router.resolve)
            if finish is not None:  # native: a call to the finish tool
                turn = replace(turn, kind="answer", answer=finish)
            if step == self.fork.only_step and turn.kind != "answer":  # a rerun ends here
                yield self._record_step(step, step_started, outcome, earlier)
                yield self._finish("stopped", f"Reran step {step}: its action was not run.")
                return
            if self.pause is not None and turn.kind == "action" and not self.native:
                edited = await self.pause(Pause("turn", step, turn.kept.strip()))
                if edited.strip() != turn.kept.strip():  # parsed again, as if written so
                    turn = parse_kept(edited.strip(), "", s.parse_dialect)
                    yield Edited(step, "turn", edited.strip())
            if turn.kind == "answer":
                self.answer = turn.answer
                yield FinalAnswer(step, turn.answer, was_thought=self.native and finish is None)
                yield self._record_step(step, step_started, outcome, earlier)
                yield self._finish("answered", "")
                return
            if outcome.tool_calls:
                carry = stamped(outcome.carry, self.source)  # who may get it back
                self.messages.append(assistant_message(outcome.content, outcome.tool_calls, carry))
                for call in outcome.tool_calls:
                    tool_input, refused = call_input(self.router.resolve(call.name), call)
                    async for event in self._act(step, call.name, tool_input, refused, call):
                        yield event
            elif turn.kind == "action":
                # Only the content goes back: the thinking is the model's scratch pad (README).
                self.messages.append({"role": "assistant", "content": turn.kept.strip()})
                async for event in self._act(step, turn.tool, turn.input, None, None):
                    yield event
            else:
                self.messages.append({"role": "assistant", "content": turn.kept.strip()})
                self._tally.format_errors += 1
                correction = (
                    NATIVE_CORRECTION
                    if self.native
                    else correction_for(turn, self._dialect, self.router.resolve)
                )
                message = self._observation(step, "", correction)
                self.messages.append({"role": "user", "content": message})
                yield FormatError(step, message)
                if (stuck := self._loops.see_reply(step, turn.kept)) is not None:
                    self._tally.loops += 1
                    yield stuck
            yield self._record_step(step, step_started, outcome, earlier)
            if (loop := self._loops.stopped_on) is not None:  # its action was not run
                what = loop.text.removeprefix("loop: ")
                yield self._finish("loop", f"{what} (Stop on loops: not run again).")
                return
            spent = sum(m.tokens_in + m.tokens_out for m in self._tally.steps)
            if self.token_budget is not None and spent >= self.token_budget:
                used = f"Token budget of {self.token_budget:,} used up after step {step}."
                yield self._finish("failed", used)
                return
        yield self._finish("max_steps", MAX_STEPS_MESSAGE + self._loops.stuck_note())

    async def _paused_after(self, observation: Observation) -> AsyncIterator[Event]:
        """Step-through: the observation may be edited before the model reads it."""
        if self.pause is None:
            return
        pause = Pause("observation", observation.step, observation.text)
        edited = await self.pause(pause)
        if edited != observation.text:
            last = self.messages[-1]
            shown = self._observation(pause.step, observation.tool, edited)  # as it was shown
            last["content"] = edited if last["role"] == "tool" else shown
            yield Edited(pause.step, "observation", shown)

    async def _act(
        self, step: int, name: str, tool_input: str, refused: str | None, call: NativeCall | None
    ) -> AsyncIterator[Event]:
        """One action: shown, watched for a loop, run (unless the run stops on the loop), its
        observation sent back. ``refused``: the error for a native call that could not be read
        (arguments that are not JSON)."""
        if self._loops.ended():  # a later call of a native reply that looped
            return
        # "Web Search" for web_search: shown and labelled by its registered name.
        known = self.router.resolve(name)
        yield (action := ActionParsed(step, known.name if known else name, tool_input))
        loop = self._loops.see(action)
        if loop is not None:
            self._tally.loops += 1
            yield loop
            if self._loops.ended():  # Stop on loops
                return
        observation, recorded = await self._observe(action, refused)
        yield observation
        if recorded is not None:  # a fork of an imported trace: its answer, said so
            yield Notice(step, recorded.notice())
        if call is not None:
            self.messages.append(tool_message(call, observation.text))
        else:
            self.messages.append({"role": "user", "content": observation.message})
        async for event in self._paused_after(observation):
            yield event

    async def _observe(
        self, action: ActionParsed, refused: str | None
    ) -> tuple[Observation, Recorded | None]:
        """Run the call through the router (approval, limits; a trace's recorded answer)."""
        tool = action.tool
        if refused is not None:
            result = ToolResult(refused, True)
        else:
            result = await self.router.run_tool(tool, action.input)
        self._tally.tool_calls += 1
        self._tool_seconds += result.seconds
        message = self._observation(action.step, tool, result.text)
        return Observation(action.step, tool, result.text, result.error, message), result.recorded

    def _params(self) -> StreamParams:
        m = self.scenario.model
        traits = self._traits
        return request_with(
            m,
            self.model,
            m.max_tokens or traits.auto_max_tokens(),
            # A model that thinks gets no server-side stop: servers may apply it to the raw
            # text, thinking included. The client-side cut still guards its content.
            # Native tool calling has no Observation label to stop at.
            stop=() if traits.thinks or self.native else STOP_SEQUENCES,
            tools=tuple(tool_schema(t) for t in self.tools) if self.native else (),
        )

    def _observation(self, step: int, tool: str, text: str) -> str:
        """The user message carrying a tool's result (or, with no tool, a correction)."""
        dialect = spec(self._dialect)
        label = dialect.tool_observation_label if tool else dialect.observation_label
        return f"{label.format(step=step, tool=tool)} {text}"

    def _record_step(
        self, step: int, started: float, out: TurnOutcome, earlier: list[TurnOutcome]
    ) -> StepFinished:
        wall_s = time.perf_counter() - started
        metrics = step_metrics(step, wall_s, self._tool_seconds, (*earlier, out), self.messages)
        self._tally.steps.append(metrics := self._meter.fill(metrics))  # with its context
        return StepFinished(step, metrics)

    def _finish(self, status: Status, reason: str) -> RunFinished:
        return RunFinished(status, reason, self.answer, self._tally.snapshot())


def _cut_by_limit(max_tokens: int, outcome: TurnOutcome) -> str:
    where = " inside the thinking (it used the whole budget)" if outcome.ended_in_thinking else ""
    return f"Cut at Max tokens ({max_tokens:,}){where}: raise Max tokens."


class Runnable(Protocol):
    """What :func:`drive` runs: the engine, or a recording played back
    (core/running/recording.py)."""

    def run(self) -> AsyncIterator[Event]: ...

    def stopped(self) -> RunFinished: ...


async def drive(engine: Runnable, emit: Callable[[Event], None]) -> RunFinished:
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
