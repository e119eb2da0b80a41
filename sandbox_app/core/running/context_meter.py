"""The context meter: each step's prompt against the context window, a request that will not
fit, and a prompt the server cut without saying so.

A local server whose context window is smaller than the prompt drops the start of the
conversation and says nothing (Ollama's OpenAI-compatible endpoint ignores ``num_ctx``); the
model then "forgets" the format or the question. The meter tells it from the server's own
count of the prompt (``Usage.prompt_tokens``, Ollama's ``prompt_eval_count``):

- a count **equal to the window** is what Ollama reports when it cut the prompt to fit;
- a count **under** ``1 - ESTIMATE_MARGIN`` of the app's estimate (four characters a
  token, :func:`~sandbox_app.core.running.metrics.estimate_tokens`) is more than the
  estimate's error can explain. On the built-in scenarios' conversations the estimate counts
  16–25% more tokens than the test server's word-piece tokenizer (``tests/model_server/``
  ``tokenize``) and never fewer; a real tokenizer's template tokens only add to its count. A
  count 40% under the estimate is taken as a cut, so an honest count is never called one.
  A step whose server read part of the prompt from its cache is not judged by size (a
  provider may count the cached part apart); the window rule still holds.

The window is the lane's Context setting, else the one the server was found to serve (the
engine's :class:`ServedContext`); with neither, the meter shows the prompt's size alone. Only
a backend that can cut silently is judged by size (``cuts_silently``: local servers; a
provider's own API answers an error instead, and its count may be another tokenizer's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from sandbox_app.core.running.backend import Message, StreamParams, Usage
from sandbox_app.core.running.events import (
    ContextMeasured,
    ContextWontFit,
    Event,
    PromptTruncated,
)
from sandbox_app.core.running.metrics import StepMetrics, estimate_tokens
from sandbox_app.core.running.native_tools import message_text

ESTIMATE_MARGIN = 0.4  # see the module's docstring: the estimate's error, with room to spare


def prompt_estimate(messages: Sequence[Message]) -> int:
    """The conversation's tokens as the app estimates them (no server count yet)."""
    return sum(estimate_tokens(message_text(m)) for m in messages)


def header(step: int, prompt_tokens: int, window: int | None, estimated: bool) -> str:
    """``Step 3 · prompt 3,412 / 4,096 tokens (83%)``; ``~`` when estimated."""
    size = f"{'~' if estimated else ''}{prompt_tokens:,}"
    if not window:
        return f"Step {step} · prompt {size} tokens"
    return f"Step {step} · prompt {size} / {window:,} tokens ({prompt_tokens / window:.0%})"


@dataclass(frozen=True)
class ServedContext:
    """What the run builder knows of the server's context: the window it was found to serve
    (a health check; None: not known) and whether it may cut a long prompt silently (its
    backend kind's word: a local server may, a provider's own API answers an error)."""

    window: int | None = None
    cuts_silently: bool = True

    def meter(self, own_window: int | None) -> ContextMeter:
        """A run's meter: the lane's own Context if it sets one, else this window."""
        return ContextMeter(own_window or self.window, self.cuts_silently)


class ContextMeter:
    """One run's meter: the engine asks it before each step's request and after its reply."""

    def __init__(self, window: int | None, cuts_silently: bool = True) -> None:
        self.window = window
        self.cuts_silently = cuts_silently
        self._steps: dict[int, tuple[int, bool, bool]] = {}  # step → tokens, estimated, cut
        self._said_reply_room = False  # that Max tokens may not fit: said once a run

    def before(self, step: int, messages: Sequence[Message], params: StreamParams) -> list[Event]:
        """A notice when the prompt and the reply's Max tokens will not fit in the window."""
        window, max_tokens = self.window, params.max_tokens
        prompt = prompt_estimate(messages)
        if not window or prompt + max_tokens <= window:
            return []
        said = f"step {step}'s prompt is about {prompt:,} tokens"
        if prompt > window:
            text = f"{said}; the context window is {window:,}: the server will cut it or refuse"
        elif self._said_reply_room:  # the same every step after: said once
            return []
        else:
            self._said_reply_room = True
            text = (
                f"{said} and its reply may take {max_tokens:,} more; the context window is "
                f"{window:,}: the server may cut the prompt or the reply"
            )
        return [ContextWontFit(step, prompt, max_tokens, window, text)]

    def after(
        self, step: int, messages: Sequence[Message], usage: Usage | None
    ) -> list[ContextMeasured | PromptTruncated]:
        """The step's reading (its header) and, when the server cut the prompt, what it cut."""
        sent = prompt_estimate(messages)
        counted = usage is not None and not usage.doubtful
        tokens = usage.prompt_tokens if usage is not None and counted else sent
        cut = counted and self._cut(sent, tokens, usage)
        self._steps[step] = (tokens, not counted, cut)
        measured = ContextMeasured(
            step, tokens, self.window, not counted, header(step, tokens, self.window, not counted)
        )
        if not cut:
            return [measured]
        unseen = unseen_part(messages, tokens)
        text = (
            f"the server cut the prompt to {tokens:,} tokens: the model did not see {unseen} "
            f"(about {sent:,} were sent; raise the context window)"
        )
        return [measured, PromptTruncated(step, sent, tokens, unseen, text)]

    def _cut(self, sent: int, counted: int, usage: Usage | None) -> bool:
        if self.window and counted == self.window:  # Ollama: prompt_eval_count == num_ctx
            return True
        cached = usage is not None and bool(usage.cache_read_tokens)
        return self.cuts_silently and not cached and counted < sent * (1 - ESTIMATE_MARGIN)

    def fill(self, metrics: StepMetrics) -> StepMetrics:
        """The step's figures with its reading: the run's metrics carry the meter."""
        reading = self._steps.get(metrics.step)
        if reading is None:  # a step that never reached its reply
            return replace(metrics, context_window=self.window)
        tokens, estimated, cut = reading
        return replace(
            metrics,
            prompt_tokens=tokens,
            prompt_estimated=estimated,
            context_window=self.window,
            truncated=cut,
        )


def unseen_part(messages: Sequence[Message], kept: int) -> str:
    """What fell off the start when only about the last ``kept`` tokens were kept:
    "the system prompt, the question and steps 1–2"."""
    budget, first_seen = kept, len(messages)
    for index in range(len(messages) - 1, -1, -1):
        cost = estimate_tokens(message_text(messages[index]))
        if cost > budget:
            break
        budget -= cost
        first_seen = index
    first_seen = max(first_seen, 1)  # a cut drops the start: the first message at least
    if first_seen >= len(messages):
        return "the start of the latest message and everything before it"
    names: list[str] = []
    steps: list[int] = []
    step = 0
    for index, message in enumerate(messages[:first_seen]):
        role = message.get("role")
        if role == "system" and index == 0:
            names.append("the system prompt")
        elif role == "user" and step == 0 and "the question" not in names:
            names.append("the question")
        else:
            step += role == "assistant"
            if step and step not in steps:
                steps.append(step)
    if steps:
        names.append(f"step {steps[0]}" if len(steps) == 1 else f"steps {steps[0]}–{steps[-1]}")
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1]
