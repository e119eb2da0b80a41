"""What the window exports as OpenTelemetry besides one run: a comparison (every lane's kept
runs) and a test set's results (every cell's run), each as ONE trace under one parent span,
its runs told apart by the attributes they share (``react_sandbox.lane``, ``.case``,
``.repeat``, ``.prompt_version``, ``.scenario``: core/otel/otel_attributes.py's Tags).

A lane's runs followed one another, and lanes ran side by side: so they are laid out, each
lane from the parent's start. Records keep durations, not dates; the times are relative.
"""

from __future__ import annotations

from sandbox_app.core.otel.otel_attributes import SpanPlan, Tags, group_span, run_spans
from sandbox_app.core.results.exports import Comparison, EvalResults
from sandbox_app.core.running.records import RunRecord


def single_run(record: RunRecord, scenario: str, *, content: bool) -> list[SpanPlan]:
    return [run_spans(record, Tags(scenario, record.settings.prompt_version), content=content)]


def comparison_spans(c: Comparison, *, content: bool) -> list[SpanPlan]:
    """``compare {title}`` over each lane's finished runs (empty: nothing ran yet)."""
    runs: list[SpanPlan] = []
    for lane in c.lanes:
        at = 0.0
        for repeat, record in enumerate(r for r in lane.history if r.done):
            tags = Tags(c.title, record.settings.prompt_version, lane.lane, None, repeat)
            runs.append(run_spans(record, tags, content=content, start_s=at))
            at = runs[-1].end_s
    if not runs:
        return []
    return [group_span(f"compare {c.title}", "compare", Tags(c.title), runs)]


def evaluation_spans(r: EvalResults, *, content: bool) -> list[SpanPlan]:
    """``evaluate {title}`` over each cell's run that has its record (empty: none has)."""
    runs: list[SpanPlan] = []
    lane_ends: dict[str, float] = {}
    for result, record in r.runs:
        if record is None or not record.done:
            continue
        lane = result.lane
        version = result.prompt_version or record.settings.prompt_version
        tags = Tags(r.title, version, lane, result.case, result.repeat)
        plan = run_spans(record, tags, content=content, start_s=lane_ends.get(lane, 0.0))
        plan.attributes["react_sandbox.passed"] = result.passed  # the cell's verdict
        lane_ends[lane] = plan.end_s
        runs.append(plan)
    if not runs:
        return []
    return [group_span(f"evaluate {r.title}", "evaluate", Tags(r.title), runs)]
