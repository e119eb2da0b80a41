"""Every export reads run records here: the trace as text, one run as a JSON-ready document,
and the comparison table as Markdown, CSV or JSON.

A new format is one function here, one entry in :data:`COMPARE_FORMATS`, and its test. An
unknown format is an error, never a silent fallback to another one.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict
from typing import Any

from sandbox_app.core.compare import COLUMNS, LaneRecord
from sandbox_app.core.events import event_to_dict, metrics_to_dict
from sandbox_app.core.markdown import inline
from sandbox_app.core.records import RunRecord
from sandbox_app.core.trace_text import TraceText


def trace_text(record: RunRecord) -> str:
    """The run as plain text, as the CLI prints it (Edit → Copy trace)."""
    trace = TraceText()
    return "".join(text for event in record.events for text, _ in trace.feed(event))


def run_document(record: RunRecord, *, events: bool = True) -> dict[str, Any]:
    """One run as JSON-ready data: outcome, metrics, settings and every event (or, with
    ``events=False``, none: turning them into dicts costs ~1 ms a run)."""
    finished = record.finished
    document: dict[str, Any] = {
        "status": finished.status if finished else "running",
        "answer": finished.answer if finished else None,
        "reason": finished.reason if finished else "",
        "metrics": metrics_to_dict(finished.metrics) if finished else None,
        "settings": asdict(record.settings),
        "events": [event_to_dict(e) for e in record.events] if events else [],
    }
    if record.chars_not_kept:
        document["chars_not_kept"] = record.chars_not_kept
    return document


Rows = Sequence[dict[str, str]]


def to_markdown(rows: Rows) -> str:
    """The table; a cell (a model's name, its answer) is literal text (core/markdown.py)."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(inline(row[c]) for c in COLUMNS) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def to_csv(rows: Rows) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def to_json(title: str, question: str, lanes: Iterable[LaneRecord], rows: Rows) -> str:
    """Every lane's summary row and the full record of every repeat."""
    document = {
        "title": title,
        "question": question,
        "lanes": [
            {
                "lane": lane.lane,
                "model": lane.model,
                "summary": row,
                "runs": [run_document(record) for record in lane.history if record.done],
            }
            for lane, row in zip(lanes, rows, strict=True)
        ],
    }
    return json.dumps(document, ensure_ascii=False, indent=1)


# What the compare view's Export menu offers: kind → (file suffix, writer).
COMPARE_FORMATS: dict[str, Callable[[str, str, Sequence[LaneRecord], Rows], str]] = {
    "md": lambda _title, _question, _lanes, rows: to_markdown(rows),
    "csv": lambda _title, _question, _lanes, rows: to_csv(rows),
    "json": to_json,
}


def export_comparison(
    kind: str, title: str, question: str, lanes: Sequence[LaneRecord], rows: Rows
) -> str:
    """The comparison in one format; raises ValueError naming the formats for any other."""
    try:
        writer = COMPARE_FORMATS[kind]
    except KeyError:
        raise ValueError(
            f"unknown export format {kind!r}; choose {', '.join(COMPARE_FORMATS)}"
        ) from None
    return writer(title, question, lanes, rows)
