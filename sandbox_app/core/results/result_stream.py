"""A results file read as a stream: an evaluation of 100,000 runs is never held in memory.

What a resumed evaluation needs up front is each run's latest verdict (:func:`scan`: a
``RunKey → passed`` map and which line holds it, a few dozen bytes a run); what its summary,
report and JUnit file need after is each run's latest result, one at a time
(:func:`iter_latest`: the file read again, only the latest line of each run parsed into an
:class:`EvalResult` kept). The rules for a line are :func:`evaluation.results_file`'s: a
damaged line is skipped and counted, a run the plan does not hold is left out and counted.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from sandbox_app.core.results.eval_result import EvalResult, RunKey
from sandbox_app.core.results.evaluation import MAX_RESULTS_BYTES, LaneTally, ResultsFile
from sandbox_app.core.untrusted.file_reader import ReadError, display_name, iter_lines, json_line


@dataclass
class Scan:
    """A results file's runs by key: the latest verdict of each (``latest``) and the line that
    holds it (``lines``, 1-based), without the results themselves; ``damaged`` and
    ``outside`` as :class:`ResultsFile` counts them."""

    latest: dict[RunKey, bool] = field(default_factory=dict)
    lines: dict[RunKey, int] = field(default_factory=dict)
    damaged: int = 0
    outside: int = 0

    def notice(self, name: str) -> str:
        """One line saying what was left out, or ""."""
        return ResultsFile([], self.damaged, self.outside).notice(name)


def scan(path: Path, planned: Collection[RunKey] | None = None) -> Scan:
    """Each run's latest verdict in ``path`` (nothing if there is no file); a file that
    cannot be read at all is a :class:`ReadError`."""
    found = Scan()
    for number, result in _results(path, planned, found):
        key = result.key
        found.latest[key] = result.passed
        found.lines[key] = number
    return found


def iter_latest(
    path: Path, planned: Collection[RunKey] | None = None, found: Scan | None = None
) -> Iterator[EvalResult]:
    """Each run's latest result in ``path``, in the file's order, one at a time (``found``:
    a scan of the file as it is now, or it is scanned first)."""
    found = found if found is not None else _scan_keys(path, planned)
    wanted = {number: key for key, number in found.lines.items()}
    for number, result in _results(path, planned, Scan(), wanted):
        if wanted.get(number) == result.key:
            yield result


def tally_latest(
    path: Path,
    lanes: Collection[str],
    found: Scan,
    leave_out: Callable[[RunKey], bool] = lambda _key: False,
) -> dict[str, LaneTally]:
    """Each lane's tally of the latest results ``found`` in ``path``, but those
    ``leave_out`` names (the runs about to be made again: their new result counts instead)."""
    tallies = {lane: LaneTally() for lane in lanes}
    if not found.lines:
        return tallies
    for result in iter_latest(path, None, found):
        key = result.key
        if key.lane in tallies and key in found.lines and not leave_out(key):
            tallies[key.lane].add(result)
    return tallies


# How this program writes a result's line: its key first (EvalResult.to_dict). Read from
# the line's start, a key costs no parse of the line's 10 kB of events.
_KEY = re.compile(rb'\{"lane": ("(?:[^"\\]|\\.)*"), "case": (\d{1,9}), "repeat": (\d{1,9}), ')


def scan_keys(path: Path, planned: Collection[RunKey] | None) -> Scan:
    """Each run's latest line that ends as a whole one does (a line cut short by a kill
    does not), its key read from its start (:func:`_quick_key`), the result not parsed:
    which lines a merge of shard files copies (core/results/shards.py)."""
    found = Scan()
    for number, raw in _lines(path):
        if not raw.rstrip().endswith(b"}"):  # a line cut short (its JSON is read when copied)
            found.damaged += 1
            continue
        key = _quick_key(raw)
        if key is None:  # not as this program writes a line: read as a result
            try:
                key = EvalResult.from_json(raw, f"{display_name(path)} line {number}").key
            except ReadError:
                found.damaged += 1
                continue
        if planned is None or key in planned:
            found.lines[key] = number
        else:
            found.outside += 1
    return found


def iter_raw_latest(path: Path, found: Scan) -> Iterator[tuple[RunKey, bytes]]:
    """The lines ``found`` names (each run's latest), as they are in ``path``."""
    wanted = {number: key for key, number in found.lines.items()}
    for number, raw in _lines(path):
        key = wanted.get(number)
        if key is not None:
            yield key, raw


def _scan_keys(path: Path, planned: Collection[RunKey] | None) -> Scan:
    """:func:`scan`'s ``lines``, cheaply: a line whose start is a key, as this program writes
    it, is not parsed (:func:`iter_latest` parses the chosen lines and checks their keys)."""
    found = Scan()
    name = display_name(path)
    for number, raw in _lines(path):
        key = _quick_key(raw)
        if key is None:
            try:
                key = EvalResult.from_json(raw, f"{name} line {number}").key
            except ReadError:
                continue
        if planned is None or key in planned:
            found.lines[key] = number
    return found


def _quick_key(raw: bytes) -> RunKey | None:
    head = _KEY.match(raw)
    if head is None:
        return None
    try:
        lane = json.loads(head.group(1))
    except ValueError:  # not a JSON string after all: the line is parsed instead
        return None
    return RunKey(lane, int(head.group(2)), int(head.group(3)))


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    if not os.path.lexists(path):
        return
    for number, raw in enumerate(iter_lines(path, MAX_RESULTS_BYTES, "a results file"), 1):
        if raw.strip():
            yield number, raw


def _results(
    path: Path,
    planned: Collection[RunKey] | None,
    counts: Scan,
    only: Collection[int] | None = None,
) -> Iterator[tuple[int, EvalResult]]:
    """``(line number, result)`` for each readable result of a planned run (``only``: of
    these lines, the others not parsed); the rest counted in ``counts`` (damaged, outside)."""
    name = display_name(path)
    for number, raw in _lines(path):
        if only is not None and number not in only:
            continue
        try:
            result = EvalResult.from_json(raw, f"{name} line {number}")
        except ReadError:
            counts.damaged += 1
            continue
        if planned is not None and result.key not in planned:
            counts.outside += 1
            continue
        yield number, result


# Where a line as this program writes it holds its metrics and trace: the metrics, then the
# events, then "judge" (when judged) and "checks" (EvalResult.to_dict's order). Inside a JSON
# string a quote is escaped, so these bytes are never a string's; that they are the line's
# own keys, not a nested object's, is counted (:func:`_depth`).
_METRICS, _EVENTS = b', "metrics": ', b', "events": '
_JUDGE, _CHECKS = b', "judge": {', b', "checks": ['


class LineParts(NamedTuple):
    """A results line as a merge stores it: the result checked, and two of its JSON values as
    the line holds them (UTF-8), never parsed again or written again."""

    result: EvalResult  # without its events
    events: bytes  # the trace's JSON
    metrics: str | None  # the metrics' JSON (None: written again from ``result``)


def split_line(raw: bytes, where: str) -> LineParts:
    """A results line read without parsing its trace: what a merge of 100,000 runs stores,
    parsing 3 kB a run rather than 14. The line is still read by the one reader, all but
    its trace (the rest of the line and the metrics, each as a JSON text of its own), and
    checked by ``EvalResult``'s; the metrics' text is the one parsed. A line not as this
    program writes it is read whole (its events written again); one that is no result a
    ReadError naming ``where``."""
    start = raw.find(_EVENTS)
    end = raw.rfind(_CHECKS)
    at = raw.rfind(_METRICS, 0, start)
    if 0 <= at < start < end:
        judged = raw.rfind(_JUDGE, start, end)
        end = judged if judged >= 0 else end
        events, metrics = raw[start + len(_EVENTS) : end], raw[at + len(_METRICS) : start]
        # The cut is the line's own members when the metrics' key stands at its top level
        # and the rest closes that level: else a nested object's keys, read whole below.
        whole_members = _depth(raw[:at]) == 1 and _depth(raw[end:]) == -1
        if whole_members and events.startswith(b"[") and events.endswith(b"]"):
            try:
                data = json_line(raw[:at] + raw[end:], where, "a result")
                if isinstance(data, dict) and not {"metrics", "events"} & data.keys():
                    data["metrics"] = json_line(metrics, where, "a result")
                    text = metrics.decode() if metrics.startswith(b"{") else None  # not null
                    return LineParts(EvalResult.from_dict(data, where), events, text)
            except (ReadError, UnicodeDecodeError):
                pass  # not cut where it seemed: read whole below
    result = EvalResult.from_json(raw, where)
    trace = json.dumps(list(result.events or ()), ensure_ascii=False).encode()
    return LineParts(replace(result, events=None), trace, None)


def _depth(text: bytes) -> int:
    """How many brackets ``text`` opens more than it closes, outside its strings: its escapes
    taken out (a pair at a time, as JSON reads them), the rest split at the quotes."""
    bare = b"".join(text.replace(b"\\\\", b"").replace(b'\\"', b"").split(b'"')[::2])
    return bare.count(b"{") + bare.count(b"[") - bare.count(b"}") - bare.count(b"]")
