"""Files the app reads, written to hurt it: a link to /dev/zero, a FIFO, JSON nested 5,000
deep, fields of the wrong type, a byte-order mark, a results line cut inside a character.
Each gives a valid result or one line naming the file and the field, never a traceback, a
freeze or a run counted that should not be."""

from __future__ import annotations

import asyncio
import io
import json
import os
import resource
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.backends.offline.scripted import ScriptedBackend
from sandbox_app.backends.transport.response_cache import CachedBackend
from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.core.running.backend import StreamParams
from sandbox_app.core.running.recording import RecordingError, load_recording, recordings_dir
from sandbox_app.core.scenarios.scenario import Script
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.scenario_file import load_scenario, scenarios_dir
from sandbox_app.core.scenarios.test_set import import_cases

EXAMPLE = scenarios_dir() / "test_set.json"
SHIPPED = recordings_dir() / "brightgrid_two_models.json"
DEEP = "[" * 5000 + "]" * 5000

# Each reader of a file, called in a fresh interpreter with a memory limit (reading /dev/zero
# to the end would take all the memory there is): prints one line per reader.
_READERS = """
import sys
from pathlib import Path
from sandbox_app.core.untrusted.file_reader import ReadError
from sandbox_app.core.scenarios.scenario_file import load_scenario
from sandbox_app.core.running.recording import load_recording
from sandbox_app.core.results.evaluation import results_file
from sandbox_app.core.scenarios.test_set import import_file
from sandbox_app.backends.transport.response_cache import _read
path = Path(sys.argv[1])
for name, read in [("scenario", load_scenario), ("recording", load_recording),
                   ("results", results_file), ("test set", import_file), ("cache", _read)]:
    try:
        print(name, "read", repr(read(path)))
    except ValueError as err:
        print(name, "refused", str(err))
"""


def _memory_limit() -> None:
    limit = 1 << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def test_a_link_to_dev_zero_is_refused_by_every_reader(tmp_path: Path) -> None:
    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")
    done = subprocess.run(
        [sys.executable, "-c", _READERS, str(link)],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_memory_limit,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[:4] == [
        f"{reader} refused zero.json is not a regular file (a device, pipe or socket), not read."
        for reader in ("scenario", "recording", "results", "test set")
    ]
    assert lines[4] == "cache read None"  # a miss: asked again


def _within_deadline(read: Callable[[], object], fifo: Path) -> object:
    """``read()`` on a thread; if it is still blocked after the deadline, a writer opens the
    FIFO so the read ends (and the test fails instead of hanging)."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(read())
        except Exception as err:
            outcome.append(err)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=20)
    blocked = worker.is_alive()
    if blocked:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(timeout=20)
    assert not blocked, "the reader waited on the FIFO for a writer"
    return outcome[0]


@pytest.mark.parametrize(
    ("read", "error"), [(load_scenario, ScenarioError), (load_recording, RecordingError)]
)
def test_a_fifo_is_refused_without_waiting_for_a_writer(
    tmp_path: Path, read: Callable[[Path], object], error: type[Exception]
) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    outcome = _within_deadline(lambda: read(fifo), fifo)
    assert isinstance(outcome, error), outcome
    assert str(outcome) == "pipe.json is not a regular file (a device, pipe or socket), not read."


# ---- recordings -------------------------------------------------------------------------


def _recording_with(change: Callable[[dict[str, Any]], None], tmp_path: Path) -> Path:
    data = json.loads(SHIPPED.read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _event(data: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(e for e in data["lanes"][0]["events"] if e["type"] == kind)


def _index(data: dict[str, Any], kind: str) -> int:
    events = data["lanes"][0]["events"]
    return next(i for i, e in enumerate(events) if e["type"] == kind)


MISTYPED: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "event text as a number": (
        lambda d: _event(d, "TokenDelta").update(text=42),
        '"lanes[0].events[{TokenDelta}].text" must be text (got 42)',
    ),
    "step as a string": (
        lambda d: _event(d, "StepStarted").update(step="1"),
        '"lanes[0].events[{StepStarted}].step" must be a whole number (got "1")',
    ),
    "settings field as a list": (
        lambda d: d["lanes"][0]["settings"].update(model=["a"]),
        '"lanes[0].settings.model" must be text (got ["a"])',
    ),
    "metrics as text": (
        lambda d: _event(d, "RunFinished").update(metrics="fast"),
        '"lanes[0].events[{RunFinished}].metrics" must be an object (got "fast")',
    ),
    "a step's wall time as text": (
        lambda d: _event(d, "RunFinished")["metrics"]["steps"][0].update(wall_s="1 s"),
        '"lanes[0].events[{RunFinished}].metrics.steps[0].wall_s" must be a number',
    ),
    "an unknown status": (
        lambda d: _event(d, "RunFinished").update(status="won"),
        '"lanes[0].events[{RunFinished}].status" must be one of "answered"',
    ),
    "an answer as an object": (
        lambda d: _event(d, "RunFinished").update(answer={"x": 1}),
        '"lanes[0].events[{RunFinished}].answer" must be text or null',
    ),
    "a time as text": (
        lambda d: _event(d, "TokenDelta").update(t="soon"),
        '"lanes[0].events[{TokenDelta}].t" must be a number (got "soon")',
    ),
    "a time centuries ahead": (
        lambda d: _event(d, "TokenDelta").update(t=1e12),
        '"lanes[0].events[{TokenDelta}].t" must be from 0 to 604,800 s',
    ),
    "the date as a number": (lambda d: d.update(created=2026), '"created" must be text'),
}


@pytest.mark.parametrize("name", list(MISTYPED))
def test_a_recording_with_a_field_of_the_wrong_type_is_one_line_naming_it(
    tmp_path: Path, name: str
) -> None:
    change, expected = MISTYPED[name]
    path = _recording_with(change, tmp_path)
    before = path.read_bytes()
    data = json.loads(before)
    kinds = ("TokenDelta", "StepStarted", "RunFinished")
    expected = expected.format(**{k: _index(data, k) for k in kinds})
    with pytest.raises(RecordingError) as info:
        load_recording(path)
    assert str(info.value).startswith(f"changed.json: {expected}")
    assert "\n" not in str(info.value)
    assert path.read_bytes() == before


def test_a_deeply_nested_recording_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"recording": 1, "lanes": ' + DEEP + "}")
    with pytest.raises(RecordingError) as info:
        load_recording(path)
    assert str(info.value) == "deep.json nests its JSON too deeply to be a recording."


def test_a_recording_with_a_byte_order_mark_plays(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + SHIPPED.read_bytes())
    assert load_recording(path) == load_recording(SHIPPED)


# ---- eval --resume ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def finished_results(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The example test set's results, run once offline: case 12 fails, 11 of 12 pass."""
    path = tmp_path_factory.mktemp("results") / "results.jsonl"
    assert eval_command([str(EXAMPLE), "--out", str(path)], io.StringIO()) == 0
    return path.read_bytes()


def _line(results: bytes, number: int, **changes: object) -> bytes:
    """Case ``number``'s result line, with ``changes``."""
    for line in results.splitlines():
        item = json.loads(line)
        if item["case"] == number:
            return json.dumps({**item, **changes}).encode()
    raise AssertionError(number)


HOSTILE_LINES: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "cut inside a character": (
        lambda r: '{"lane": "scripted", "case": 0, "repeat": 0, "answer": "€'.encode()[:-1],
        "1 damaged line skipped, not counted",
    ),
    "a case that is text": (
        lambda r: _line(r, 0, case="x"),
        "1 damaged line skipped, not counted",
    ),
    "nested 5,000 deep": (
        lambda r: ('{"lane": "scripted", "case": 0, "x": ' + DEEP + "}").encode(),
        "1 damaged line skipped, not counted",
    ),
    "passed as text": (
        lambda r: _line(r, 11, passed="no"),  # case 12 failed: "no" must not make it pass
        "1 damaged line skipped, not counted",
    ),
    "a case no longer in the set": (
        lambda r: _line(r, 12 - 1, case=12, passed=True),
        "1 result for runs this evaluation does not have",
    ),
    "metrics of the wrong type": (
        lambda r: _line(r, 3, metrics={"tool_calls": "many"}),
        "1 damaged line skipped, not counted",
    ),
}


@pytest.mark.parametrize("name", list(HOSTILE_LINES))
def test_a_resumed_evaluation_counts_only_sound_results_of_its_own_cases(
    tmp_path: Path, finished_results: bytes, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    make, notice = HOSTILE_LINES[name]
    results = tmp_path / "results.jsonl"
    results.write_bytes(finished_results + make(finished_results) + b"\n")
    before = results.read_bytes()
    out = io.StringIO()
    code = eval_command([str(EXAMPLE), "--out", str(results), "--resume"], out)
    assert code == 0
    assert "scripted: 92% (11/12, " in out.getvalue()  # nothing run again, nothing extra
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("react-sandbox eval: results.jsonl: ")
    assert notice in err
    assert results.read_bytes() == before


# ---- the response cache ----------------------------------------------------------------


CORRUPT_ENTRIES = {
    "a number for a piece": b"[5]",
    "a tool call with unknown fields": b'[{"tool_calls": [{"bogus": 1}]}]',
    "usage with text for a count": b'[{"usage": {"prompt_tokens": "x", "completion_tokens": 1}}]',
    "text as a number": b'[{"text": 5}]',
    "nested 5,000 deep": DEEP.encode(),
    "not UTF-8": b'[{"text": "\xff"}]',
}


@pytest.mark.parametrize("name", list(CORRUPT_ENTRIES))
def test_a_corrupt_cache_entry_is_a_miss(tmp_path: Path, name: str) -> None:
    inner = ScriptedBackend(Script(replies=("Answer: 4",), tokens_per_second=0), "Q?")
    cached = CachedBackend(inner, tmp_path, "lane")
    messages = [{"role": "user", "content": "Q?"}]
    params = StreamParams(model="m")
    entry = tmp_path / f"{cached.key(messages, params)}.json"
    entry.write_bytes(CORRUPT_ENTRIES[name])

    async def reply() -> str:
        return "".join([d.text async for d in cached.stream(messages, params)])

    assert asyncio.run(reply()) == "Answer: 4"  # asked the model, as for a miss
    assert cached.hits == 0


def test_a_cache_entry_with_a_byte_order_mark_is_a_hit(tmp_path: Path) -> None:
    inner = ScriptedBackend(Script(replies=("Answer: 4",), tokens_per_second=0), "Q?")
    cached = CachedBackend(inner, tmp_path, "lane")
    messages = [{"role": "user", "content": "Q?"}]
    params = StreamParams(model="m")
    entry = tmp_path / f"{cached.key(messages, params)}.json"
    entry.write_bytes(b'\xef\xbb\xbf[{"text": "Answer: 5", "reasoning": ""}]')

    async def reply() -> str:
        return "".join([d.text async for d in cached.stream(messages, params)])

    assert asyncio.run(reply()) == "Answer: 5"
    assert cached.hits == 1


# ---- test-set import --------------------------------------------------------------------


def test_a_deeply_nested_jsonl_row_is_one_line() -> None:
    text = '{"question": "Q", "answer": "1"}\n{"question": ' + DEEP + "}\n"
    with pytest.raises(ScenarioError) as info:
        import_cases(text, "jsonl")
    assert str(info.value) == "row 2: nests its JSON too deeply to be a case."


def test_a_csv_field_longer_than_the_csv_module_takes_is_one_line() -> None:
    text = "question,answer\n" + "Q" * 200_000 + ",4\n"
    with pytest.raises(ScenarioError) as info:
        import_cases(text, "csv")
    assert str(info.value).startswith("row 2: field larger than field limit")
    assert "\n" not in str(info.value)
