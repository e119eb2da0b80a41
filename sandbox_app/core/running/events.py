"""The immutable events a run emits; the window and the CLI draw the same stream."""

from __future__ import annotations

import copy
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, Literal

from sandbox_app.core.running.metrics import RunMetrics, StepMetrics

# "loop": the model repeated itself and the lane said Stop on loops (core/running/loops.py).
Status = Literal["answered", "max_steps", "stopped", "failed", "loop"]


@dataclass(frozen=True, slots=True)
class RunStarted:
    system_prompt: str
    question: str
    max_steps: int
    backend: str
    model: str


@dataclass(frozen=True, slots=True)
class StepStarted:
    step: int


@dataclass(frozen=True, slots=True)
class TokenDelta:
    """Text the model itself wrote (a fabricated observation never arrives as a TokenDelta)."""

    step: int
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """The model's thinking (a reasoning field or a ``<think>`` block), streamed.

    Shown, counted and exported; never parsed for actions or answers, never cut, never sent
    back to the model.
    """

    step: int
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingReclassified:
    """The model text streamed so far in this step was thinking after all: the reply closed a
    ``</think>`` it never opened (a template that opens the block itself). ``text`` is that
    text; from here on it counts as reasoning, as if it had come as ReasoningDelta."""

    step: int
    text: str


@dataclass(frozen=True, slots=True)
class FabricationCut:
    """Text the model wrote from its own ``Observation`` label onward; cut, never used."""

    step: int
    text: str


@dataclass(frozen=True, slots=True)
class RepetitionCut:
    """The reply said the same line ``times`` times in a row (degenerate generation): cut
    there, the stream closed; ``text`` is what it wrote after (never used)."""

    step: int
    line: str
    times: int
    text: str


@dataclass(frozen=True, slots=True)
class ActionParsed:
    step: int
    tool: str
    input: str


@dataclass(frozen=True, slots=True)
class Observation:
    """A tool's result: data, never parsed as model output. ``message`` is the labelled line
    the model reads (native tool calling sends ``text`` in a tool message; the trace shows
    ``message`` either way)."""

    step: int
    tool: str
    text: str
    error: bool
    message: str


@dataclass(frozen=True, slots=True)
class FormatError:
    """The reply had no action and no answer; ``message`` is the correction sent to the model."""

    step: int
    message: str


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the user should see in the trace that is not model text (e.g. a retry)."""

    step: int
    text: str


@dataclass(frozen=True, slots=True)
class LoopNoticed:
    """The model repeated an action (core/running/loops.py): ``action`` (``search[x]``) for
    the ``times``-th time, or, with ``other``, in turn with that one (A, B, A, B). ``text`` is
    the trace's line."""

    step: int
    text: str
    action: str
    times: int
    other: str = ""


@dataclass(frozen=True, slots=True)
class ContextMeasured:
    """The context meter (core/running/context_meter.py): the step's prompt as the server
    counted it (``estimated``: as the app estimated it, the server said nothing) against the
    context window (None: not known). ``text`` is the step's header as it now reads."""

    step: int
    prompt_tokens: int
    window: int | None
    estimated: bool
    text: str


@dataclass(frozen=True, slots=True)
class ContextWontFit:
    """Before the request: the estimated prompt and the reply's Max tokens exceed the window."""

    step: int
    prompt_tokens: int
    max_tokens: int
    window: int
    text: str


@dataclass(frozen=True, slots=True)
class PromptTruncated:
    """The server counted fewer prompt tokens than were sent (or exactly its window, as
    Ollama does when it cut): it dropped the start of the conversation. ``unseen`` names
    what the model did not see ("the system prompt and the question")."""

    step: int
    sent_tokens: int  # estimated
    kept_tokens: int  # as the server counted
    unseen: str
    text: str


@dataclass(frozen=True, slots=True)
class Edited:
    """Step-through: the user rewrote the step's turn (``point`` "turn") or its observation
    ("observation") before it was used; ``text`` is what ran instead, as the trace shows it
    (the turn's text, or the observation's labelled line). The original stays in the events
    before this one."""

    step: int
    point: str
    text: str


@dataclass(frozen=True, slots=True)
class FinalAnswer:
    step: int
    text: str
    # Native tool calling: the reply streamed as the step's Thought and ended with no tool
    # call, so it was the answer; the trace relabels that line.
    was_thought: bool = False


@dataclass(frozen=True, slots=True)
class CallMade:
    """A native tool call as the model made it: its id, the tool's name, its JSON arguments."""

    id: str
    name: str
    arguments: str


def call_lines(calls: tuple[CallMade, ...]) -> str:
    """The calls as the request inspector shows them under the reply's text."""
    return "".join(f"\n[tool call {c.id}] {c.name} {c.arguments}" for c in calls)


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request of a step and its reply, for the request inspector (never drawn): the body
    as sent (no key), the reply as it streamed before any parsing or cut, and its timing in
    seconds from the request's send (None when it never came)."""

    step: int
    request: dict[str, Any]
    reply: str
    reasoning: str
    finish_reason: str | None
    usage: dict[str, Any] | None
    first_token_s: float | None
    last_token_s: float | None
    # Native tool calling: the reply's calls (``reply`` shows them too, after its text).
    calls: tuple[CallMade, ...] = ()
    # The engine's messages this request sent, provider items and all (core/running/
    # carried.py), when ``request["messages"]`` is not them (another kind's shape, reasoning
    # passed back); empty when it is: what a fork starts from (core/running/fork.py).
    messages: tuple[dict[str, Any], ...] = ()

    @property
    def content(self) -> str:
        """The reply's own text, without the calls' lines."""
        lines = call_lines(self.calls)
        return self.reply[: len(self.reply) - len(lines)] if lines else self.reply


@dataclass(frozen=True, slots=True)
class StepFinished:
    step: int
    metrics: StepMetrics


@dataclass(frozen=True, slots=True)
class RunFinished:
    status: Status
    reason: str
    answer: str | None
    metrics: RunMetrics


Event = (
    RunStarted
    | StepStarted
    | TokenDelta
    | ReasoningDelta
    | ThinkingReclassified
    | FabricationCut
    | RepetitionCut
    | ActionParsed
    | Observation
    | FormatError
    | Notice
    | LoopNoticed
    | ContextMeasured
    | ContextWontFit
    | PromptTruncated
    | Edited
    | FinalAnswer
    | Exchange
    | StepFinished
    | RunFinished
)


def event_to_dict(event: Event) -> dict[str, Any]:
    """A JSON-ready dict with the event's type name, for ``--json`` and exports."""
    if isinstance(event, RunFinished | StepFinished):  # its metrics converted once, not twice
        data = {
            name: _plain(getattr(event, name)) for name in _names(type(event)) if name != "metrics"
        }
        data["metrics"] = metrics_to_dict(event.metrics)
    else:
        data = _plain(event)
    return {"type": type(event).__name__, **data}


_RUN_TOTALS = (
    "tokens_in",
    "tokens_out",
    "estimated",
    "ttft_s",
    "tool_s",
    "tokens_saved",
    "reasoning_tokens",
    "reasoning_estimated",
    "thinking_s",
    "cuts_by_limit",
    "cache_read_tokens",
    "cache_write_tokens",
    "peak_prompt_tokens",
    "peak_context_share",
    "truncations",
    "queued_s",
)


def metrics_to_dict(metrics: RunMetrics | StepMetrics) -> dict[str, Any]:
    data: dict[str, Any] = _plain(metrics)
    if isinstance(metrics, RunMetrics):
        for name in _RUN_TOTALS:
            data[name] = getattr(metrics, name)
    return data


_ATOMS = (str, int, float, bool, type(None))


def _plain(value: Any) -> Any:
    """``dataclasses.asdict``'s result, made faster: the field names of each class looked up
    once, and str/int/float/None returned as they are rather than deep-copied (they cannot
    change). An evaluation turns every event of 100,000 runs into dicts: asdict was a third of
    its time (measured)."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if is_dataclass(value) and not isinstance(value, type):
        return {name: _plain(getattr(value, name)) for name in _names(kind)}
    if kind is list or kind is tuple:
        return kind(_plain(item) for item in value)
    if kind is dict:
        return {_plain(k): _plain(v) for k, v in value.items()}
    return copy.deepcopy(value)  # anything else as asdict has it (a namedtuple, a set…)


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _names(kind: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(f.name for f in fields(kind))
    return names
