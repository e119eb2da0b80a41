"""A step's figures from its requests: tokens as the server counted them (else estimated,
and marked so), thinking tokens, and the timing of the request the step kept."""

from __future__ import annotations

from collections.abc import Sequence

from sandbox_app.core.running.backend import Message
from sandbox_app.core.running.context_meter import prompt_estimate
from sandbox_app.core.running.metrics import StepMetrics, estimate_tokens
from sandbox_app.core.running.turn_reader import TurnOutcome


def step_metrics(
    step: int,
    wall_s: float,
    tool_s: float,
    requests: Sequence[TurnOutcome],
    messages: Sequence[Message],
) -> StepMetrics:
    """``requests``: each request of the step, the one it kept last (a request asked again
    was paid for too); ``messages``: the conversation, for an estimate of what was sent."""
    last = requests[-1]
    tokens_in = tokens_out = reasoning_tokens = 0
    estimated = reasoning_estimated = False
    for request in requests:
        reasoning = request.reasoning_text
        if request.usage is not None:
            tokens_in += request.usage.prompt_tokens
            tokens_out += request.usage.completion_tokens
            estimated = estimated or request.usage.doubtful  # clamped: shown with ~
        else:
            tokens_in += prompt_estimate(messages)
            tokens_out += estimate_tokens(request.received) + estimate_tokens(reasoning)
            estimated = True
        reported = request.usage.reasoning_tokens if request.usage is not None else None
        if reported is not None:
            reasoning_tokens += reported
        elif reasoning:
            reasoning_tokens += estimate_tokens(reasoning)
            reasoning_estimated = True
    return StepMetrics(
        step,
        last.ttft_s,
        wall_s,
        tokens_in,
        tokens_out,
        estimated,
        tool_s,
        last.tokens_saved,
        reasoning_tokens=reasoning_tokens,
        reasoning_estimated=reasoning_estimated,
        thinking_s=last.thinking_s,
        cut_by_limit=last.cut_by_limit,
        cache_read_tokens=_cache(requests, "cache_read_tokens"),
        cache_write_tokens=_cache(requests, "cache_write_tokens"),
        queued_s=sum(request.queued_s for request in requests),
    )


def _cache(requests: Sequence[TurnOutcome], which: str) -> int | None:
    """The step's prompt tokens read from (or written to) the provider's cache; None when no
    request said."""
    said = [getattr(r.usage, which) for r in requests if r.usage is not None]
    counts = [count for count in said if count is not None]
    return sum(counts) if counts else None
