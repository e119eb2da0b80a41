"""A long trace read as it is shown (core/otel/otel_import.TraceStream): its first steps come
before the file is read to its end, every step comes in order, and a line damaged past the
first read ends the played run as failed in one line, the steps before it kept. A long
recording likewise: its first events checked before it plays, the rest as they play."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from sandbox_app.core.otel.otel_import import TraceStream, open_trace
from sandbox_app.core.otel.otel_spans import TraceError, iter_spans
from sandbox_app.core.running import events as ev
from sandbox_app.core.running.recording import (
    FIRST_EVENTS,
    RecordedLane,
    RecordedRun,
    load_recording,
    recording_text,
)
from sandbox_app.core.running.recording_stream import open_recording
from tests.long_trace import ANSWER, observation, write_trace

STEPS = 1_500  # 3,000 spans and more: past the first read's 2,000


def test_the_first_steps_come_before_the_file_is_read_and_then_every_step(
    tmp_path: Path,
) -> None:
    path = write_trace(tmp_path / "long.jsonl", STEPS)
    stream = TraceStream(path)
    assert not stream.done  # the scenario and the first steps from the first read only
    assert stream.scenario.question.startswith("Walk the 30,000 pages")
    timed = stream.timed()
    first = [next(timed)[1] for _ in range(12)]
    assert not stream.done
    assert [type(e).__name__ for e in first[:3]] == ["RunStarted", "Notice", "StepStarted"]
    rest = [event for _, event in timed]
    assert stream.done
    events = first + rest
    observed = [e.text for e in events if isinstance(e, ev.Observation)]
    assert observed == [observation(k) for k in range(1, STEPS + 1)]
    finished = events[-1]
    assert isinstance(finished, ev.RunFinished)
    assert finished.answer == ANSWER
    assert len(finished.metrics.steps) == STEPS + 1
    whole = open_trace(path)  # the CLI's: the same run, read whole first
    assert [e for _, e in whole.lane.events] == events


def test_a_line_damaged_past_the_first_read_ends_the_run_as_failed_in_one_line(
    tmp_path: Path,
) -> None:
    path = write_trace(tmp_path / "damaged.jsonl", STEPS)
    lines = path.read_bytes().split(b"\n")
    lines[12] = lines[12][:5000]  # a process killed while writing it
    path.write_bytes(b"\n".join(lines))
    stream = TraceStream(path)
    play = RecordedRun(RecordedLane(stream.settings, ()), 0.0, stream.timed())

    async def played() -> list[ev.Event]:
        return [event async for event in play.run()]

    events = asyncio.run(played())
    finished = events[-1]
    assert isinstance(finished, ev.RunFinished)
    assert finished.status == "failed"
    assert "damaged.jsonl line 13" in finished.reason
    assert "\n" not in finished.reason
    steps = [e.step for e in events if isinstance(e, ev.StepStarted)]
    assert steps == list(range(1, len(steps) + 1))  # what came before it, in order
    assert len(steps) >= 1_000


def test_a_long_recording_plays_its_checked_first_events_and_checks_the_rest_as_it_plays(
    tmp_path: Path,
) -> None:
    trace = open_trace(write_trace(tmp_path / "run.jsonl", 200))  # 1,200 events and more
    path = tmp_path / "run.json"
    path.write_text(recording_text(trace.recording), encoding="utf-8")
    recording, more = open_recording(path)
    lane = recording.lanes[0]
    assert len(lane.events) == FIRST_EVENTS  # checked before it plays
    rest = list(more)
    assert [e for _, e in (*lane.events, *rest)] == [e for _, e in trace.lane.events]
    assert load_recording(path).lanes == trace.recording.lanes  # read whole: the same

    data = json.loads(path.read_text(encoding="utf-8"))
    data["lanes"][0]["events"][900]["step"] = "nine hundred"
    path.write_text(json.dumps(data), encoding="utf-8")
    recording, more = open_recording(path)  # its first events are fine: it opens
    play = RecordedRun(recording.lanes[0], 0.0, more)

    async def played() -> list[ev.Event]:
        return [event async for event in play.run()]

    events = asyncio.run(played())
    finished = events[-1]
    assert isinstance(finished, ev.RunFinished)
    assert finished.status == "failed"
    assert "lanes[0].events[900].step" in finished.reason
    assert len(events) == 901  # the 900 before it, then the run's end


def test_a_lines_spans_read_one_at_a_time_are_those_of_the_request_read_whole(
    tmp_path: Path,
) -> None:
    line = write_trace(tmp_path / "two.jsonl", 150).read_text(encoding="utf-8").splitlines()[0]
    request = json.loads(line)
    resource = request["resourceSpans"][0]
    request["resourceSpans"][0] = {  # its resource after its spans, a key of another kind first
        "schemaUrl": {"not": ["read"]},
        "scopeSpans": resource["scopeSpans"],
        "resource": resource["resource"],
    }
    whole = tmp_path / "one.json"  # one request, not lines: read whole
    whole.write_text(json.dumps(request, indent=1), encoding="utf-8")
    lines = tmp_path / "lines.jsonl"
    lines.write_text(f"{json.dumps(request)}\n{json.dumps(request)}\n", encoding="utf-8")
    once = list(iter_spans(whole))
    assert len(once) == 200
    assert {s.resource["service.name"] for s in once} == {"crawler"}
    assert list(iter_spans(lines)) == once + once

    lines.write_text('{"resourceSpans": []}\n{"resource_spans": 5}\n', encoding="utf-8")
    with pytest.raises(TraceError) as caught:
        list(iter_spans(lines))
    assert str(caught.value) == 'lines.jsonl: not an OTLP trace (no "resourceSpans" list).'
