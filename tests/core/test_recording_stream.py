"""A long recording played as it is read (core/running/recording_stream.py, over
core/untrusted/json_walk.py): it opens with its first events before the rest of the file is
parsed, so a file cut short or damaged past them still opens, plays the steps before the
damage and ends in one line naming the place; a comparison, or keys in another order, are
read whole, the same recording either way."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from sandbox_app.core.otel.otel_import import ImportedTrace, open_trace
from sandbox_app.core.running import events as ev
from sandbox_app.core.running.recording import (
    RecordedRun,
    Recording,
    RecordingError,
    load_recording,
    recording_text,
)
from sandbox_app.core.running.recording_stream import open_recording
from sandbox_app.core.untrusted.file_reader import ReadError
from sandbox_app.core.untrusted.json_walk import JsonWalk
from tests.long_trace import observation, write_trace

FIRST = 30  # events checked before it plays, here: a few steps


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> ImportedTrace:
    return open_trace(write_trace(tmp_path_factory.mktemp("t") / "run.jsonl", 60))


def _played(path: Path) -> list[ev.Event]:
    recording, more = open_recording(path, checked_first=FIRST)
    lane = recording.lanes[0]

    async def play() -> list[ev.Event]:
        return [event async for event in RecordedRun(lane, 0.0, more).run()]

    return asyncio.run(play())


def _events(recording: Recording) -> list[ev.Event]:
    return [event for _, event in recording.lanes[0].events]


def test_a_long_recording_plays_as_read_the_same_events_as_read_whole(
    tmp_path: Path, trace: ImportedTrace
) -> None:
    path = tmp_path / "run.json"
    path.write_text(recording_text(trace.recording), encoding="utf-8")
    recording, more = open_recording(path, checked_first=FIRST)
    assert len(recording.lanes[0].events) == FIRST  # read before it plays; the rest not yet
    assert recording.scenario == trace.recording.scenario
    rest = [event for _, event in more]
    assert [*_events(recording), *rest] == _events(trace.recording)
    assert _played(path) == _events(trace.recording)


@pytest.mark.parametrize("cut", [0.5, 0.9, 0.9999])
def test_a_recording_cut_short_plays_what_was_read_and_ends_in_one_line(
    tmp_path: Path, trace: ImportedTrace, cut: float
) -> None:
    whole = recording_text(trace.recording).encode("utf-8")
    path = tmp_path / "cut.json"
    path.write_bytes(whole[: int(len(whole) * cut)])  # a copy stopped part way
    with pytest.raises(RecordingError):
        load_recording(path)  # read whole: refused, nothing to play
    events = _played(path)
    finished = events[-1]
    assert isinstance(finished, ev.RunFinished)
    assert finished.status == "failed"
    assert finished.reason.startswith("cut.json is not valid JSON: ")
    assert " at line " in finished.reason
    assert "\n" not in finished.reason
    observed = [e.text for e in events if isinstance(e, ev.Observation)]
    assert observed == [observation(k) for k in range(1, len(observed) + 1)]  # kept, in order
    assert len(observed) >= 25 * cut  # what came before the cut


def test_damage_inside_an_event_past_the_first_ends_the_run_naming_it(
    tmp_path: Path, trace: ImportedTrace
) -> None:
    text = recording_text(trace.recording)
    data = json.loads(text)
    data["lanes"][0]["events"][200]["step"] = [[[]]] * 3  # a step that is a list
    deep = {"t": 1.0, "type": "Notice", "step": 1, "text": "x"}
    data["lanes"][0]["events"][100] = deep
    path = tmp_path / "damaged.json"
    raw = json.dumps(data, indent=1)
    at = raw.index('"x"', raw.index('"Notice"'))  # that event's text nested 150 deep
    path.write_text(raw[:at] + "[" * 150 + '"x"' + "]" * 150 + raw[at + 3 :], encoding="utf-8")
    events = _played(path)
    finished = events[-1]
    assert isinstance(finished, ev.RunFinished)
    assert finished.status == "failed"
    assert finished.reason == "damaged.json nests its JSON too deeply to be a recording."
    assert len(events) == 101  # the 100 before it, then the end

    del data["lanes"][0]["events"][100]
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    finished = _played(path)[-1]
    assert isinstance(finished, ev.RunFinished)
    assert finished.reason.startswith("damaged.json: ")
    assert "lanes[0].events[199].step" in finished.reason


def test_a_lone_surrogate_in_a_later_event_is_the_replacement_character(
    tmp_path: Path, trace: ImportedTrace
) -> None:
    data = json.loads(recording_text(trace.recording))
    events = data["lanes"][0]["events"]
    index = FIRST + 5  # past the first events: read as it plays
    events.insert(index, {"t": events[index]["t"], "type": "Notice", "step": 2, "text": ""})
    events[index]["text"] = "bad \ud800 half"
    path = tmp_path / "surrogate.json"
    path.write_text(json.dumps(data), encoding="utf-8")  # written as the escape \ud800
    played = _played(path)
    notices = [e.text for e in played if isinstance(e, ev.Notice) and "half" in e.text]
    assert notices == ["bad \ufffd half"]
    assert played[-1] == _events(load_recording(path))[-1]


def test_a_comparison_and_keys_in_another_order_are_read_whole(
    tmp_path: Path, trace: ImportedTrace
) -> None:
    data = json.loads(recording_text(trace.recording))
    two = {**data, "lanes": [data["lanes"][0], data["lanes"][0]]}
    path = tmp_path / "two.json"
    path.write_text(json.dumps(two), encoding="utf-8")
    recording, more = open_recording(path, checked_first=FIRST)
    assert len(recording.lanes) == 2  # both lanes, whole, to play side by side
    assert more == ()
    assert recording == load_recording(path)

    lanes = data.pop("lanes")
    later = {"lanes": [{"events": lanes[0]["events"], "settings": lanes[0]["settings"]}], **data}
    path = tmp_path / "order.json"
    path.write_text(json.dumps(later), encoding="utf-8")
    recording, more = open_recording(path, checked_first=FIRST)
    assert [*_events(recording), *(e for _, e in more)] == _events(trace.recording)


def test_the_walk_refuses_what_json_refuses() -> None:
    def walked(text: str) -> dict[str, object]:
        walk = JsonWalk(text, "f.json", "a test")
        out: dict[str, object] = {}
        for key in walk.members():
            if key == "a":
                out[key] = [walk.value() for _ in walk.items()]
            else:
                out[key] = walk.value()
        walk.end()
        return out

    assert walked(' {"a": [1, {"b": []}], "c": "d"} \n') == {"a": [1, {"b": []}], "c": "d"}
    assert walked('{"a": []}') == {"a": []}
    for bad, message in [
        ('{"a": [1 2]}', "Expecting ',' delimiter at line 1, column 10"),
        ('{"a": [1], "c": 2} x', "Extra data at line 1, column 20"),
        ('{"a": [1],\n 5: 2}', "Expecting property name enclosed in double quotes at line 2"),
        ('{"a": [1', "Expecting ',' delimiter at line 1, column 9"),
        ('{"c": ' + "[" * 5000 + "]" * 5000 + "}", "nests its JSON too deeply to be a test"),
        ('{"a": [' + "[" * 99 + "]" * 99 + "]}", "nests its JSON too deeply to be a test"),
    ]:
        with pytest.raises(ReadError) as caught:
            walked(bad)
        assert message in str(caught.value)
        assert str(caught.value).startswith("f.json ")
