"""Compare ReAct runs across models: per-lane summaries, repeat statistics and cost.

One table row per lane: the window's table and every export (exports.py) use the same rows,
so an export says exactly what the window shows. Prices are what the user entered per model,
per million tokens; a model without a price shows "—", never a guess, and so does a figure a
backend kind does not report (cache reads, a prompt count): a dash, never a made-up 0.
Thinking tokens are output tokens (servers count them in completion_tokens), so the cost
includes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sandbox_app.core.results.prices import Price as Price  # where callers import it
from sandbox_app.core.results.prices import read_prices as read_prices
from sandbox_app.core.results.prices import stored_prices as stored_prices
from sandbox_app.core.results.verdict import COULD_NOT_CHECK, matches, verdict
from sandbox_app.core.running.events import RunFinished
from sandbox_app.core.running.records import RunHistory
from sandbox_app.core.scenarios.prompt_versions import names_of, version_label
from sandbox_app.core.scenarios.scenario import MAX_LANES as MAX_LANES
from sandbox_app.core.scenarios.scenario import MIN_LANES as MIN_LANES
from sandbox_app.core.scenarios.scenario import Expected

COLUMNS = (
    "Lane",
    "Model",
    "Prompt",  # the prompt version the lane's latest run was told (its name, then short id)
    "Status",
    "Final answer",
    "Correct",  # the run's verdict; with repeats, how many of them were right (k/N)
    "Pass rate",
    "Steps",
    "Tool calls",
    "Format errors",
    "Cuts",
    "Loops",
    "Tokens in",
    "Tokens out",
    "Cache read",  # prompt tokens read from the provider's cache, when it says
    "Peak context",  # the fullest step's prompt against the context window (context_meter)
    "Prompt cut",  # steps whose prompt the server cut silently
    "Thinking tokens",
    "Thinking time",
    "First token",
    "Time",
    "Tokens/s",
    "Cost",
)


@dataclass
class LaneRecord:
    """Everything one lane did: the record of each repeat (bounded, see records.py)."""

    lane: str
    model: str
    history: RunHistory = field(default_factory=RunHistory)
    running: bool = False

    @property
    def runs(self) -> list[RunFinished]:
        """Each finished repeat's final event, oldest first."""
        return self.history.finished

    def summary(self, expected: Expected | None, price: Price | None) -> dict[str, str]:
        """The table row: the latest run, plus pass rate and ranges over all repeats."""
        row = dict.fromkeys(COLUMNS, "—")
        row["Lane"], row["Model"] = self.lane, self.model
        latest = self.history.latest
        if latest is not None and latest.settings.prompt_version:
            history = latest.scenario.prompt_history if latest.scenario else ()
            row["Prompt"] = version_label(latest.settings.prompt_version, names_of(history))
        if not self.runs:
            row["Status"] = "running" if self.running else "—"
            return row
        last = self.runs[-1]
        m = last.metrics
        approx = "~" if m.estimated else ""
        row["Status"] = last.status + (" …" if self.running else "")
        if m.cuts_by_limit:
            row["Status"] += " · cut at Max tokens"
        row["Final answer"] = last.answer or "—"
        row["Correct"] = self._correct(expected)
        row["Pass rate"] = self._pass_rate(expected)
        row["Steps"] = self._spread([len(r.metrics.steps) for r in self.runs], "{:.0f}")
        row["Tool calls"] = str(m.tool_calls)
        row["Format errors"] = str(m.format_errors)
        row["Cuts"] = str(m.fabrications_cut)
        row["Loops"] = str(m.loops)  # repeated actions noticed, degenerate replies cut
        row["Tokens in"] = f"{approx}{m.tokens_in:,}"
        row["Tokens out"] = f"{approx}{m.tokens_out:,}"  # thinking included, as servers count
        if m.cache_read_tokens is not None:
            row["Cache read"] = f"{m.cache_read_tokens:,}"
        row["Peak context"] = m.peak_context() or "—"
        if m.truncations is not None:  # a server that never counted the prompt: a dash
            row["Prompt cut"] = str(m.truncations)
        if m.reasoning_tokens:
            row["Thinking tokens"] = f"{'~' if m.reasoning_estimated else ''}{m.reasoning_tokens:,}"
        if m.thinking_s is not None:
            row["Thinking time"] = f"{m.thinking_s:.1f} s"
        row["First token"] = f"{m.ttft_s * 1000:.0f} ms" if m.ttft_s is not None else "—"
        row["Time"] = self._spread([r.metrics.wall_s for r in self.runs], "{:.2f} s")
        generating = m.wall_s - m.tool_s
        row["Tokens/s"] = f"{m.tokens_out / generating:.0f}" if generating > 0 else "—"
        if price is not None:
            row["Cost"] = f"{approx}${price.cost(m.tokens_in, m.tokens_out):.4f}"
        return row

    def passed(self, expected: Expected | None) -> int | None:
        """How many repeats were right (None: nothing to check against, or no run)."""
        if expected is None or not self.runs:
            return None
        return sum(bool(matches(r.answer, expected)) for r in self.runs)

    def pass_rate(self, expected: Expected | None) -> float | None:
        passed = self.passed(expected)
        return None if passed is None else passed / len(self.runs)

    def _pass_rate(self, expected: Expected | None) -> str:
        passed = self.passed(expected)
        if passed is None:
            return "—"
        return f"{passed / len(self.runs):.0%} ({passed}/{len(self.runs)})"

    def _correct(self, expected: Expected | None) -> str:
        """One run: yes, no or could not check. Repeats: k/N, as the pass rate counts them,
        never the latest run's "yes" beside a pass rate of 1/5."""
        passed = self.passed(expected)
        if passed is not None and len(self.runs) > 1:
            return f"{passed}/{len(self.runs)}"
        shown: dict[object, str] = {None: "—", True: "yes", False: "no"}
        return shown.get(verdict(self.runs[-1].answer, expected), COULD_NOT_CHECK)

    def _spread(self, values: list[float], fmt: str) -> str:
        """One value, or "mean (min–max)" over repeats."""
        if len(values) == 1:
            return fmt.format(values[0])
        from statistics import mean  # with fractions and decimal: not before the first frame

        return f"{fmt.format(mean(values))} ({fmt.format(min(values))}–{fmt.format(max(values))})"
