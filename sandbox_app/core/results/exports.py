"""Every export reads run records here: the trace as text, one run as a JSON-ready document,
the comparison table as Markdown, CSV or JSON; and the one registry of export formats.

The registry holds an :class:`Exporter` per format, grouped by what it exports: a run
(:data:`RUN_FORMATS`), a comparison (:data:`COMPARE_FORMATS`), a test set's results
(:data:`TEST_SET_FORMATS`). The window's menus and file-dialog filters are built from it and
the CLI writes through it, so a new format is its write function, one line here, and its
test. An unknown format is a ValueError naming the known ones, never a fallback to another.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from sandbox_app.core.results.compare import COLUMNS, LaneRecord
from sandbox_app.core.results.eval_report import (
    results_csv,
    results_json,
    results_markdown,
    to_html,
)
from sandbox_app.core.results.eval_result import EvalResult, RunKey
from sandbox_app.core.results.outcome import verdict_fields
from sandbox_app.core.results.run_export import run_html, run_markdown
from sandbox_app.core.results.trace_text import TraceText
from sandbox_app.core.running.events import event_to_dict, metrics_to_dict
from sandbox_app.core.running.recording import Recording, recording_text
from sandbox_app.core.running.records import RunRecord
from sandbox_app.core.untrusted.markdown import inline


def trace_text(record: RunRecord) -> str:
    """The run as plain text, as the CLI prints it (Edit → Copy trace): its answer judged, as
    `run` judges it, where the record knows its scenario."""
    trace = TraceText(expected=record.scenario.expected if record.scenario is not None else None)
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
        "settings": record.settings.to_dict(),
        # right or wrong by the scenario's expected answer, where the record knows it
        **verdict_fields(
            finished.answer if finished else None,
            record.scenario.expected if record.scenario is not None else None,
        ),
        "events": [event_to_dict(e) for e in record.events] if events else [],
    }
    if record.chars_not_kept:
        document["chars_not_kept"] = record.chars_not_kept
    return document


Rows = Sequence[dict[str, str]]


def to_markdown(rows: Rows) -> str:
    """The table; a cell (a model's name, its answer) is literal text
    (core/untrusted/markdown.py)."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(inline(row[c]) for c in COLUMNS) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def to_csv(rows: Rows) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


@dataclass(frozen=True)
class Comparison:
    """What a comparison exports: its lanes' records and the table's rows."""

    title: str
    question: str
    lanes: Sequence[LaneRecord]
    rows: Rows


def to_json(c: Comparison) -> str:
    """Every lane's summary row and the full record of every repeat."""
    document = {
        "title": c.title,
        "question": c.question,
        "lanes": [
            {
                "lane": lane.lane,
                "model": lane.model,
                "summary": row,
                "runs": [run_document(record) for record in lane.history if record.done],
            }
            for lane, row in zip(c.lanes, c.rows, strict=True)
        ],
    }
    return json.dumps(document, ensure_ascii=False, indent=1)


# ---- the registry ----------------------------------------------------------------------

S = TypeVar("S")


class ExportError(Exception):
    """This format cannot show this subject (a run too long for one picture); one line."""


@dataclass(frozen=True)
class Exporter(Generic[S]):
    """One format: ``write`` turns the subject into the file's contents (text is written as
    UTF-8, bytes as they are), so a format is testable without a file."""

    kind: str  # what menus, `export_to` and the CLI call it: "md"
    label: str  # what a person reads in a menu and a file dialog: "Markdown"
    suffix: str  # the file's: ".md"
    write: Callable[[S], str | bytes]
    also: tuple[str, ...] = ()  # other suffixes a typed name may end in (".htm")

    @property
    def filter(self) -> str:
        """Its file-dialog filter: "Markdown (*.md)"."""
        return f"{self.label} ({' '.join('*' + s for s in (self.suffix, *self.also))})"

    def text(self, subject: S) -> str:
        contents = self.write(subject)
        if isinstance(contents, bytes):
            raise ValueError(f"{self.label} is not text")
        return contents

    def save(self, subject: S, path: Path) -> None:
        """Write the subject to ``path`` (OSError if the disk says no, ExportError if the
        format cannot show it: then nothing is written)."""
        contents = self.write(subject)
        if isinstance(contents, bytes):
            path.write_bytes(contents)
        else:
            path.write_text(contents, encoding="utf-8")


class Formats(Mapping[str, Exporter[S]]):
    """The formats one subject exports to, kind → exporter, in menu order."""

    def __init__(self, what: str, *exporters: Exporter[S]) -> None:
        self.what = what  # "run", "comparison", "test set": for messages
        self._by_kind = {e.kind: e for e in exporters}
        suffixes = [s for e in exporters for s in (e.suffix, *e.also)]
        if len(self._by_kind) < len(exporters) or len(set(suffixes)) < len(suffixes):
            raise ValueError(f"{what}: two formats share a kind or a suffix")

    def __getitem__(self, kind: str) -> Exporter[S]:
        return self._by_kind[kind]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_kind)

    def __len__(self) -> int:
        return len(self._by_kind)

    def exporter(self, kind: str) -> Exporter[S]:
        """The format called ``kind``; a ValueError naming the known ones for any other."""
        try:
            return self._by_kind[kind]
        except KeyError:
            raise ValueError(f"unknown export format {kind!r}; choose {', '.join(self)}") from None

    def plus(self, *exporters: Exporter[S]) -> Formats[S]:
        """These formats and more (the window adds the ones only Qt can draw)."""
        return Formats(self.what, *self.values(), *exporters)

    def for_path(self, path: Path, chosen_filter: str = "") -> Exporter[S] | None:
        """The format a file name asks for by its suffix; a name without one takes the
        file dialog's chosen filter. None when neither names a format."""
        suffix = path.suffix.lower()
        for e in self.values():
            if suffix in (e.suffix, *e.also) or (not suffix and e.filter == chosen_filter):
                return e
        return None

    def dialog_filter(self) -> str:
        """Every format, for a save dialog: "Markdown (*.md);;HTML page (*.html)"."""
        return ";;".join(e.filter for e in self.values())

    def suffixes(self) -> str:
        """The suffixes in words: ".md, .html or .json"."""
        names = [e.suffix for e in self.values()]
        return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


@dataclass(frozen=True)
class RunExport:
    """One run to export: its record; the window's colours (role → an object with ``color``,
    ``background``, ``bold``, ``italic``: ui/common/theme.py's) for the HTML page; and for a
    recording, the run with its timing (None: nothing to record)."""

    record: RunRecord
    styles: Mapping[str, Any]
    recording: Recording | None = None


@dataclass(frozen=True)
class EvalResults:
    """A test set's results: each run's latest result with its record (None where only the
    result is kept, as in ``eval``'s results file: its JSON then has no events). ``runs``
    may be read as it is gone through (the window's, from the history database): an export
    goes through it once, each record used and dropped. ``verdicts``: its arms compared
    (core/comparing/arm_diff.py's ``verdict_document`` each), for the HTML report."""

    title: str
    questions: Sequence[str]
    labels: Sequence[str]
    runs: Iterable[tuple[EvalResult, RunRecord | None]]
    verdicts: Sequence[Mapping[str, Any]] = ()
    # People's grades of runs (the history's, core/history/history_grades.py): a run's key →
    # {"good": 👍 or not, "note": …}; the JSON and the HTML report carry them.
    grades: Mapping[RunKey, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def results(self) -> list[EvalResult]:
        return [result for result, _ in self.runs]


def _recording(run: RunExport) -> str:
    if run.recording is None:
        raise ExportError("Nothing to record yet: run it first.")
    return recording_text(run.recording)


def _with_events(r: EvalResults) -> str:
    # Only this format turns events into dicts: ~1 ms a run, thousands of runs.
    return results_json(
        ((result, [event_to_dict(e) for e in record.events] if record else [])
         for result, record in r.runs),
        r.grades,
    )  # fmt: skip


# The window adds its PNG to these (ui/window/run_exports.py): Qt draws it, and core knows no Qt.
RUN_FORMATS: Formats[RunExport] = Formats(
    "run",
    Exporter("md", "Markdown", ".md", lambda r: run_markdown(r.record)),
    Exporter("html", "HTML page", ".html", lambda r: run_html(r.record, r.styles), (".htm",)),
    Exporter("json", "Recording", ".json", _recording),
)
COMPARE_FORMATS: Formats[Comparison] = Formats(
    "comparison",
    Exporter("md", "Markdown", ".md", lambda c: to_markdown(c.rows)),
    Exporter("csv", "CSV", ".csv", lambda c: to_csv(c.rows)),
    Exporter("json", "JSON with every trace", ".json", to_json),
)
TEST_SET_FORMATS: Formats[EvalResults] = Formats(
    "test set",
    Exporter("md", "Markdown", ".md", lambda r: results_markdown(r.questions, r.labels, r.results)),
    Exporter("csv", "CSV", ".csv", lambda r: results_csv(r.questions, r.labels, r.results)),
    Exporter("json", "JSON", ".json", _with_events),
    Exporter(
        "html",
        "HTML",
        ".html",
        lambda r: to_html(r.title, r.questions, r.labels, r.results, r.verdicts, r.grades),
    ),
)


def export_comparison(
    kind: str, title: str, question: str, lanes: Sequence[LaneRecord], rows: Rows
) -> str:
    """The comparison in one format; raises ValueError naming the formats for any other."""
    return COMPARE_FORMATS.exporter(kind).text(Comparison(title, question, lanes, rows))
