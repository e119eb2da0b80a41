"""Compare ReAct runs across models: per-lane summaries, repeat statistics, cost, exports.

One table row per lane, the same rows for the window's table, Markdown, CSV and JSON, so every
export says exactly what the window shows. Prices are what the user entered per model, per
million tokens; a model without a price shows "—", never a guess.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from itertools import groupby
from statistics import mean
from typing import Any

from sandbox_app.core.events import Event, RunFinished, TokenDelta, event_to_dict, metrics_to_dict
from sandbox_app.core.scenario import Expected
from sandbox_app.core.verdict import matches

COLUMNS = (
    "Lane",
    "Model",
    "Status",
    "Final answer",
    "Correct",
    "Pass rate",
    "Steps",
    "Tool calls",
    "Format errors",
    "Cuts",
    "Tokens in",
    "Tokens out",
    "First token",
    "Time",
    "Tokens/s",
    "Cost",
)


@dataclass(frozen=True)
class Price:
    input_per_million: float
    output_per_million: float

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.input_per_million + tokens_out * self.output_per_million) / 1e6


@dataclass
class LaneRecord:
    """Everything one lane did: each repeat's final event and full event trace."""

    lane: str
    model: str
    runs: list[RunFinished] = field(default_factory=list)
    traces: list[list[Event]] = field(default_factory=list)
    running: bool = False

    def summary(self, expected: Expected | None, price: Price | None) -> dict[str, str]:
        """The table row: the latest run, plus pass rate and ranges over all repeats."""
        row = dict.fromkeys(COLUMNS, "—")
        row["Lane"], row["Model"] = self.lane, self.model
        if not self.runs:
            row["Status"] = "running" if self.running else "—"
            return row
        last = self.runs[-1]
        m = last.metrics
        approx = "~" if m.estimated else ""
        row["Status"] = last.status + (" …" if self.running else "")
        row["Final answer"] = last.answer or "—"
        verdict = matches(last.answer, expected)
        row["Correct"] = "—" if verdict is None else ("yes" if verdict else "no")
        row["Pass rate"] = self._pass_rate(expected)
        row["Steps"] = self._spread([len(r.metrics.steps) for r in self.runs], "{:.0f}")
        row["Tool calls"] = str(m.tool_calls)
        row["Format errors"] = str(m.format_errors)
        row["Cuts"] = str(m.fabrications_cut)
        row["Tokens in"] = f"{approx}{m.tokens_in:,}"
        row["Tokens out"] = f"{approx}{m.tokens_out:,}"
        row["First token"] = f"{m.ttft_s * 1000:.0f} ms" if m.ttft_s is not None else "—"
        row["Time"] = self._spread([r.metrics.wall_s for r in self.runs], "{:.2f} s")
        generating = m.wall_s - m.tool_s
        row["Tokens/s"] = f"{m.tokens_out / generating:.0f}" if generating > 0 else "—"
        if price is not None:
            row["Cost"] = f"{approx}${price.cost(m.tokens_in, m.tokens_out):.4f}"
        return row

    def pass_rate(self, expected: Expected | None) -> float | None:
        if expected is None or not self.runs:
            return None
        return sum(bool(matches(r.answer, expected)) for r in self.runs) / len(self.runs)

    def _pass_rate(self, expected: Expected | None) -> str:
        rate = self.pass_rate(expected)
        if rate is None:
            return "—"
        passed = round(rate * len(self.runs))
        return f"{rate:.0%} ({passed}/{len(self.runs)})"

    def _spread(self, values: list[float], fmt: str) -> str:
        """One value, or "mean (min–max)" over repeats."""
        if len(values) == 1:
            return fmt.format(values[0])
        return f"{fmt.format(mean(values))} ({fmt.format(min(values))}–{fmt.format(max(values))})"


def coalesce_tokens(events: list[Event]) -> list[Event]:
    """Join a frame's consecutive TokenDeltas of one step: the recorded trace (kept for every
    repeat, for exports) then holds a few events per frame instead of one per token."""
    out: list[Event] = []
    for step, group in groupby(events, key=lambda e: e.step if isinstance(e, TokenDelta) else None):
        if step is None:
            out.extend(group)
        else:
            out.append(TokenDelta(step, "".join(e.text for e in group)))  # type: ignore[union-attr]
    return out


def to_markdown(rows: list[dict[str, str]]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(cell(row[c]) for c in COLUMNS) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def to_csv(rows: list[dict[str, str]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def to_json(
    title: str, question: str, records: list[LaneRecord], rows: list[dict[str, str]]
) -> str:
    """Every lane's summary and the full event trace of every repeat."""
    lanes: list[dict[str, Any]] = []
    for record, row in zip(records, rows, strict=True):
        lanes.append(
            {
                "lane": record.lane,
                "model": record.model,
                "summary": row,
                "runs": [
                    {
                        "status": run.status,
                        "reason": run.reason,
                        "answer": run.answer,
                        "metrics": metrics_to_dict(run.metrics),
                        "events": [event_to_dict(e) for e in trace],
                    }
                    for run, trace in zip(record.runs, record.traces, strict=False)
                ],
            }
        )
    document = {"title": title, "question": question, "lanes": lanes}
    return json.dumps(document, ensure_ascii=False, indent=1)
