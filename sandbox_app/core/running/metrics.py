"""Per-step and per-run measurements: latency, tokens, tool time, tokens saved by early cuts."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


def estimate_tokens(text: str) -> int:
    """About four characters a token: used only when the server reports no usage."""
    return (len(text) + 3) // 4


@dataclass(frozen=True, slots=True)
class StepMetrics:
    step: int
    ttft_s: float | None  # time to first token; None when no token arrived
    wall_s: float
    tokens_in: int
    tokens_out: int
    estimated: bool  # True when the server sent no usage and the counts are estimates
    tool_s: float = 0.0
    tokens_saved: int = 0  # at most this many tokens not paid for, thanks to an early cut
    # Thinking: tokens (part of tokens_out; estimated from the text when the server does not
    # say), and the time from the first reasoning token to the first content token (or to the
    # reply's end when no content followed).
    reasoning_tokens: int = 0
    reasoning_estimated: bool = False
    thinking_s: float | None = None
    cut_by_limit: bool = False  # the server stopped the reply at max tokens
    # The context meter (core/running/context_meter.py): the prompt of the step's last
    # request (the server's count, else estimated), the window it had to fit, and whether the
    # server cut it without saying so.
    prompt_tokens: int = 0
    prompt_estimated: bool = True
    context_window: int | None = None
    truncated: bool = False
    # Prompt tokens read from / written to the provider's prompt cache (part of tokens_in),
    # as the server reported them; None when it did not say (never a made-up 0).
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    # Part of wall_s its requests waited before they were sent: for a place among their
    # server's requests, or a 429's wait (backends/transport/throttle.py).
    queued_s: float = 0.0


@dataclass(frozen=True)
class RunMetrics:
    steps: tuple[StepMetrics, ...] = ()
    wall_s: float = 0.0
    tool_calls: int = 0
    format_errors: int = 0
    fabrications_cut: int = 0
    # The model repeating itself: an action noticed as a loop (core/running/loops.py), or a
    # reply cut for saying the same line over and over.
    loops: int = 0

    @property
    def tokens_in(self) -> int:
        return sum(s.tokens_in for s in self.steps)

    @property
    def tokens_out(self) -> int:
        return sum(s.tokens_out for s in self.steps)

    @property
    def estimated(self) -> bool:
        return any(s.estimated for s in self.steps)

    @property
    def ttft_s(self) -> float | None:
        return self.steps[0].ttft_s if self.steps else None

    @property
    def tool_s(self) -> float:
        return sum(s.tool_s for s in self.steps)

    @property
    def queued_s(self) -> float:
        """Part of :attr:`wall_s` spent waiting for the server's turn, not working."""
        return sum(s.queued_s for s in self.steps)

    @property
    def tokens_saved(self) -> int:
        return sum(s.tokens_saved for s in self.steps)

    @property
    def reasoning_tokens(self) -> int:
        return sum(s.reasoning_tokens for s in self.steps)

    @property
    def reasoning_estimated(self) -> bool:
        return any(s.reasoning_estimated for s in self.steps if s.reasoning_tokens)

    @property
    def thinking_s(self) -> float | None:
        times = [s.thinking_s for s in self.steps if s.thinking_s is not None]
        return sum(times) if times else None

    @property
    def cuts_by_limit(self) -> int:
        return sum(s.cut_by_limit for s in self.steps)

    @property
    def cache_read_tokens(self) -> int | None:
        """Prompt tokens read from the provider's cache; None when no step's server said."""
        counts = [s.cache_read_tokens for s in self.steps if s.cache_read_tokens is not None]
        return sum(counts) if counts else None

    @property
    def cache_write_tokens(self) -> int | None:
        """Prompt tokens written to the provider's cache; None when no step's server said."""
        counts = [s.cache_write_tokens for s in self.steps if s.cache_write_tokens is not None]
        return sum(counts) if counts else None

    @property
    def peak_prompt_tokens(self) -> int | None:
        return max((s.prompt_tokens for s in self.steps if s.prompt_tokens), default=None)

    @property
    def peak_context_share(self) -> float | None:
        """The fullest step's prompt as a share of its context window; None: no window."""
        shares = [s.prompt_tokens / s.context_window for s in self.steps if s.context_window]
        return max(shares, default=None)

    @property
    def truncations(self) -> int | None:
        """Steps whose prompt the server cut; None when no step's server counted the prompt
        (without its count a cut cannot be seen: never a made-up 0)."""
        if all(s.prompt_estimated for s in self.steps):
            return None
        return sum(s.truncated for s in self.steps)

    def peak_context(self) -> str:
        """``83% of 4,096``, ``3,412 tokens`` with no window known, ``~`` when estimated."""
        peak = max(self.steps, key=_fullness, default=None)
        if peak is None or not peak.prompt_tokens:
            return ""
        approx = "~" if peak.prompt_estimated else ""
        if peak.context_window:
            share = peak.prompt_tokens / peak.context_window
            return f"{approx}{share:.0%} of {peak.context_window:,}"
        return f"{approx}{peak.prompt_tokens:,} tokens"

    def thinking_summary(self) -> str:
        """``thinking ~410 tokens in 3.2 s``, or "" for a run that did not think."""
        if not self.reasoning_tokens and self.thinking_s is None:
            return ""
        approx = "~" if self.reasoning_estimated else ""
        took = f" in {self.thinking_s:.1f} s" if self.thinking_s is not None else ""
        return f"thinking {approx}{self.reasoning_tokens:,} tokens{took}"

    def summary(self) -> str:
        """One line for a status bar or the CLI."""
        approx = "~" if self.estimated else ""
        ttft = f"{self.ttft_s * 1000:.0f} ms" if self.ttft_s is not None else "—"
        thinking = self.thinking_summary()
        return (
            f"{plural(len(self.steps), 'step')} · {plural(self.tool_calls, 'tool call')} · "
            f"tokens {approx}{self.tokens_in} in / {approx}{self.tokens_out} out · "
            + (f"{thinking} · " if thinking else "")
            + (f"{plural(self.loops, 'loop')} · " if self.loops else "")
            + f"first token {ttft} · {self.wall_s:.2f} s"
        )


def _fullness(step: StepMetrics) -> tuple[float, int]:
    """How full a step's context was: by share of its window, else by size."""
    share = step.prompt_tokens / step.context_window if step.context_window else 0.0
    return share, step.prompt_tokens


def plural(count: int, noun: str) -> str:
    """``1 step``, ``3 steps``."""
    return f"{count} {noun}{'s' * (count != 1)}"


def how_far(status: str, steps_started: int) -> str:
    """How far a run got, worded alike in the window and every lane.

    A run that answered or used up its steps finished them; one stopped or failed did not
    finish the step it was in, so it is named, not counted ("Stopped in 0 steps" beside
    "step 1 of 5" was the old contradiction).
    """
    if status in ("answered", "max_steps"):
        return f"in {plural(steps_started, 'step')}"
    return f"at step {steps_started}" if steps_started else "before the first step"


@dataclass
class RunTally:
    """Mutable counters while a run is going; frozen into :class:`RunMetrics` when reported."""

    started: float = field(default_factory=time.perf_counter)
    steps: list[StepMetrics] = field(default_factory=list)
    tool_calls: int = 0
    format_errors: int = 0
    fabrications_cut: int = 0
    loops: int = 0

    def snapshot(self) -> RunMetrics:
        return RunMetrics(
            tuple(self.steps),
            time.perf_counter() - self.started,
            self.tool_calls,
            self.format_errors,
            self.fabrications_cut,
            self.loops,
        )
