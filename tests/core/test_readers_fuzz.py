"""Every reader of a file or stored setting, fed truncated, mistyped, deep, huge, binary,
BOM-prefixed and non-regular inputs: each gives a valid result (which the code after it can
use) or its one error type with a one-line message, and the input is never changed."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QSettings

from sandbox_app.backends.transport.response_cache import MAX_ENTRY_BYTES, _read
from sandbox_app.core.results.compare import stored_prices
from sandbox_app.core.results.eval_report import to_html
from sandbox_app.core.results.evaluation import MAX_RESULTS_BYTES, RunKey, results_file, summarise
from sandbox_app.core.results.exports import run_document, trace_text
from sandbox_app.core.running.recording import (
    MAX_BYTES,
    RecordedRun,
    RecordingError,
    load_recording,
    recordings_dir,
)
from sandbox_app.core.running.recording_stream import open_recording
from sandbox_app.core.running.records import RunRecord
from sandbox_app.core.scenarios.document import KeptEdits
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.scenario_file import MAX_FILE_BYTES, load_scenario, scenarios_dir
from sandbox_app.core.scenarios.test_set import MAX_IMPORT_BYTES, import_file
from sandbox_app.core.untrusted.file_reader import ReadError, check, parse_json_text, stored_number
from tests.hostile_input import any_json, encodes, hostile_json, nodes, replaced

RESULT = {
    "lane": "scripted",
    "case": 0,
    "repeat": 0,
    "passed": True,
    "answer": "4",
    "status": "answered",
    "metrics": {"steps": [{}], "tool_calls": 1, "tokens_in": 10, "wall_s": 0.5},
}
RESULTS = "".join(
    json.dumps({**RESULT, "case": case, "passed": case != 1}) + "\n" for case in range(3)
)
PLANNED = {RunKey("scripted", case, 0) for case in range(3)}


def _use_recording(path: Path) -> None:
    recording = load_recording(path)
    for lane in recording.lanes:  # what the window does with it: play, show, export
        record = RunRecord(lane.settings)

        async def play(lane: Any = lane, record: RunRecord = record) -> None:
            async for event in RecordedRun(lane, speed=0).run():
                record.add([event])

        asyncio.run(play())
        encodes(trace_text(record), json.dumps(run_document(record), ensure_ascii=False))
    encodes(recording.title())


def _play_recording(path: Path) -> None:
    """A one-lane recording played as it is read (its first 3 events checked first): a
    damage met as it plays ends the run in one line."""
    recording, more = open_recording(path, checked_first=3)
    lane = recording.lanes[0]

    async def play() -> list[Any]:
        return [event async for event in RecordedRun(lane, speed=0, more=more).run()]

    record = RunRecord(lane.settings)
    record.add(asyncio.run(play()))
    assert record.finished is None or "\n" not in record.finished.reason
    encodes(trace_text(record), json.dumps(run_document(record), ensure_ascii=False))


def _one_lane(recording: str) -> str:
    data = json.loads(recording)
    return json.dumps({**data, "lanes": data["lanes"][:1]}, indent=1, ensure_ascii=False)


def _use_results(path: Path) -> None:
    found = results_file(path, PLANNED)
    summaries = summarise(found.results, ["scripted"])
    [s.row() for s in summaries]
    encodes(to_html("t", ["a", "b", "c"], ["scripted"], found.results))
    assert "\n" not in found.notice(path.name)


def _use_cache(path: Path) -> None:
    entry = _read(path)  # never raises: a bad entry is a miss (None)
    assert entry is None or all(isinstance(d.text, str) for d in entry)


def _use_kept_edits(path: Path) -> None:
    # Kept edits and prices are settings' text, not files: read the text as QSettings would.
    text = path.read_bytes().decode("utf-8", "replace")
    kept = KeptEdits.from_json(text)  # None for anything damaged
    assert kept is None or isinstance(kept.edited, Scenario)


def _use_prices(path: Path) -> None:
    text = path.read_bytes().decode("utf-8", "replace")
    with tempfile.TemporaryDirectory() as elsewhere:  # not beside the input, which must not change
        store = QSettings(str(Path(elsewhere) / "settings.ini"), QSettings.Format.IniFormat)
        store.setValue("prices", text)
        prices = stored_prices(store.value("prices", "{}"))
    assert all(p.input_per_million >= 0 and p.output_per_million >= 0 for p in prices.values())
    try:  # the parser under it: a value, or its one error
        check(parse_json_text(text, "prices"), dict[str, Any], "prices")
        message = ""
    except ReadError as err:
        message = str(err)
    assert "\n" not in message


def _use_number(path: Path) -> None:
    text = path.read_bytes().decode("utf-8", "replace")
    zoom = stored_number(text, 1.0, 0.8, 3.0)
    assert 0.8 <= zoom <= 3.0


class Never(Exception):
    """What a reader that never raises (a miss, a default) is allowed to raise: nothing."""


@dataclass(frozen=True)
class Reader:
    name: str
    suffix: str
    limit: int  # bytes: a sparse file one byte over it is "huge"; 0: not a file but a setting
    valid: str  # an input it accepts, to damage
    use: Callable[[Path], object]
    error: type[Exception] = Never  # the one error type its callers catch


KEPT = KeptEdits(Scenario(title="edited"), Path("/tmp/x.json"), Scenario(title="before")).to_json()
READERS = [
    Reader(
        "scenario",
        ".json",
        MAX_FILE_BYTES,
        (scenarios_dir() / "brightgrid.json").read_text(encoding="utf-8"),
        load_scenario,
        ScenarioError,
    ),
    Reader(
        "recording",
        ".json",
        MAX_BYTES,
        (recordings_dir() / "brightgrid_two_models.json").read_text(encoding="utf-8"),
        _use_recording,
        RecordingError,
    ),
    Reader(
        "recording played as read",
        ".json",
        MAX_BYTES,
        _one_lane((recordings_dir() / "brightgrid_two_models.json").read_text(encoding="utf-8")),
        _play_recording,
        RecordingError,
    ),
    Reader("results", ".jsonl", MAX_RESULTS_BYTES, RESULTS, _use_results, ReadError),
    Reader(
        "cache",
        ".json",
        MAX_ENTRY_BYTES,
        '[{"text": "Answer: 4", "reasoning": "", "usage": {"prompt_tokens": 3, '
        '"completion_tokens": 2}, "finish_reason": "stop", "tool_calls": [{"index": 0, '
        '"name": "calculator", "arguments": "{}"}]}]',
        _use_cache,
    ),
    Reader(
        "test set (JSONL)",
        ".jsonl",
        MAX_IMPORT_BYTES,
        '{"question": "Q1", "answer": "1", "replies": ["Answer: 1"]}\n'
        '{"question": "Q2", "expected": {"answer": "2", "match": "exact"}}\n',
        import_file,
        ScenarioError,
    ),
    Reader(
        "test set (CSV)",
        ".csv",
        MAX_IMPORT_BYTES,
        "question,answer,match,documents\nWhat is 2 + 2?,4,number,\n"
        "Refunds?,5 days,contains,a | b\n",
        import_file,
        ScenarioError,
    ),
    Reader("kept edits", ".txt", 0, KEPT, _use_kept_edits),
    Reader("prices", ".txt", 0, '{"m1": [1, 2.5], "m2": [0, 0]}', _use_prices),
    Reader("zoom", ".txt", 0, "1.5", _use_number),
]


@st.composite
def damaged(draw: st.DrawFn, valid: str) -> bytes:
    """``valid`` as it is, cut short, with a value of another type, nested deeply, BOM-
    prefixed, replaced by random bytes, or one line's JSON damaged as tests/hostile_input.py
    damages it (lone surrogates, escapes, control characters, 24-digit and non-finite
    numbers, 10,000 deep, a 10 MB string)."""
    how = draw(st.sampled_from(["as is", "cut", "mistyped", "deep", "bom", "binary", "hostile"]))
    text = valid
    if how == "mistyped":
        lines = text.splitlines(keepends=True)
        index = draw(st.integers(0, len(lines) - 1))
        try:
            value = json.loads(lines[index])
        except ValueError:  # CSV or a number: a field swapped for any JSON
            value = None
        paths = nodes(value)
        path = paths[draw(st.integers(0, len(paths) - 1))]
        lines[index] = json.dumps(replaced(value, path, draw(any_json()))) + "\n"
        text = "".join(lines)
    elif how == "hostile":
        lines = text.splitlines(keepends=True)
        index = draw(st.integers(0, len(lines) - 1))
        try:
            value = json.loads(lines[index])
        except ValueError:  # CSV or a number: the line as a JSON string
            value = lines[index]
        lines[index] = draw(hostile_json(value)) + "\n"
        text = "".join(lines)
    elif how == "deep":
        depth = draw(st.sampled_from([99, 101, 1500, 5000]))
        at = draw(st.integers(0, len(text)))
        text = text[:at] + "[" * depth + "]" * depth + text[at:]
    raw = text.encode("utf-8", "surrogatepass")  # a raw lone surrogate stays: not UTF-8
    if how == "cut":
        raw = raw[: draw(st.integers(0, len(raw)))]
    elif how == "bom":
        raw = b"\xef\xbb\xbf" + raw
    elif how == "binary":
        raw = draw(st.binary(max_size=200))
    return raw


def _place(where: Path, kind: str, raw: bytes, limit: int) -> Path:
    path = where / "input"
    if kind == "regular":
        path.write_bytes(raw)
    elif kind == "huge":
        with path.open("wb") as f:
            f.truncate(limit + 1)  # sparse: costs no disk
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        path.mkdir()
    elif kind != "missing":
        path.symlink_to(kind)  # /dev/zero, /dev/null
    return path


KINDS = ["regular"] * 6 + ["huge", "fifo", "dir", "missing", "/dev/zero", "/dev/null"]


def _snapshot(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every entry's size, time and (unless it is a sparse giant) content."""
    out = {}
    for item in sorted(folder.rglob("*")):
        info = item.lstat()
        small = item.is_file() and not item.is_symlink() and info.st_size < 1 << 20
        out[item.name] = (info.st_size, info.st_mtime_ns, item.read_bytes() if small else b"")
    return out


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.name)
@settings(max_examples=30)
@given(data=st.data())
def test_every_reader_gives_a_value_or_one_line(reader: Reader, data: st.DataObject) -> None:
    raw = data.draw(damaged(reader.valid), label="input")
    files = reader.limit > 0
    kind = data.draw(st.sampled_from(KINDS if files else ["regular"]), label="kind")
    with tempfile.TemporaryDirectory() as folder:
        where = Path(folder)
        path = _place(where, kind, raw, reader.limit).with_suffix(reader.suffix)
        if (where / "input").exists() or (where / "input").is_symlink():
            (where / "input").rename(path)
        before = _snapshot(where)
        try:
            reader.use(path)
            message = None  # a valid result, used as the app would use it
        except reader.error as err:
            message = str(err)
        assert message is None or (message.strip() and "\n" not in message), repr(message)
        assert _snapshot(where) == before
