"""A recording opened to play (File → Open recording…): a long one played as it is read.

A recording is one JSON document (core/running/recording.py); a 15,000-step run is ~40 MB,
a second of parsing before anything could be shown, and its parsed dicts take more memory
than the events made from them. So a recording of one lane is walked a value at a time
(core/untrusted/json_walk.py): its header, the lane's settings and its first
:data:`recording.FIRST_EVENTS` events are read and checked before it plays, and each later
event is parsed and checked as it is played, its parsed dict let go at once. A file damaged or
cut short past that point ends the played run as failed, in one line, its steps before the
damage shown. Keys that follow a lane's events, or the recording's lanes, are read (the
file must be whole JSON) but not used.

Anything else is read whole, as :func:`recording.load_recording` reads it, the events past
the first checked as they play: a comparison (its lanes play side by side, so every lane is
needed at once), a short lane, and a file whose keys come in another order than the app
writes them (the scenario after the lanes, a lane's events before its settings).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sandbox_app.core.running.recording import (
    FIRST_EVENTS,
    MAX_BYTES,
    VERSION,
    Played,
    RecordedLane,
    Recording,
    RecordingError,
    Timed,
    recording_from,
    timed_event,
)
from sandbox_app.core.running.records import RunSettings
from sandbox_app.core.scenarios.scenario_file import scenario_from_dict
from sandbox_app.core.untrusted.file_reader import (
    ReadError,
    check,
    display_name,
    parse_json,
    read_text,
)
from sandbox_app.core.untrusted.json_walk import JsonWalk

WHAT = "a recording"


def open_recording(path: Path, checked_first: int | None = FIRST_EVENTS) -> Played:
    """A recording to play, and its events still to read or check. One lane of more than
    ``checked_first`` events (a long run) has only its first ones read and checked here; the
    iterator reads and checks the rest as it is taken (a wrong one, or the file's damage,
    raises :class:`ReadError` there, in one line)."""
    name = display_name(path)
    try:
        text = read_text(path, MAX_BYTES, WHAT)
        walk = JsonWalk(text, name, WHAT)
        played = None if checked_first is None else _streamed(walk, checked_first)
        if played is not None:
            return played
        data = parse_json(text, name, WHAT)
    except RecordingError:
        raise
    except ReadError as err:
        raise RecordingError(str(err)) from None
    try:
        return recording_from(data, checked_first)
    except ReadError as err:  # ScenarioError and RecordingError too
        raise RecordingError(f"{name}: {err}") from None


def _streamed(walk: JsonWalk, first: int) -> Played | None:
    """The recording with its lane's first ``first`` events, the rest to read as they are
    taken; None when it is not one long lane in the app's own order of keys."""
    top: dict[str, Any] = {}
    keys = walk.members() if walk.peek() == "{" else iter(())
    for key in keys:
        if key == "lanes":
            break
        top[key] = walk.value()
    else:
        return None
    if top.get("recording") != VERSION or "scenario" not in top or walk.peek() != "[":
        return None
    lanes = walk.items()
    lane_keys = walk.members() if next(lanes, None) == 0 and walk.peek() == "{" else iter(())
    if next(lane_keys, None) != "settings" or not isinstance(settings := walk.value(), dict):
        return None
    if next(lane_keys, None) != "events" or walk.peek() != "[":
        return None
    events = walk.items()
    held = [walk.value() for _, _ in zip(range(first + 1), events, strict=False)]
    # More lanes (each needs "settings": only a key, or a string, can be that word) make a
    # comparison, which plays every lane at once: read whole.
    if len(held) <= first or walk.text.find('"settings"', walk.pos) != -1:
        return None
    try:
        lane = RecordedLane(
            RunSettings.from_dict(settings, "lanes[0].settings"),
            tuple(_event(item, j, walk.name) for j, item in enumerate(held[:first])),
        )
        recording = Recording(
            scenario_from_dict(top.get("scenario")),
            (lane,),
            check(top.get("created", ""), str, "created"),
            check(top.get("app", ""), str, "app"),
        )
    except RecordingError:
        raise
    except ReadError as err:
        raise RecordingError(f"{walk.name}: {err}") from None
    rest = iter((held[first],))
    del held
    return recording, _rest(walk, rest, events, first, (lane_keys, lanes, keys))


def _rest(
    walk: JsonWalk,
    held: Iterator[Any],
    events: Iterator[int],
    start: int,
    after: tuple[Iterator[str], Iterator[int], Iterator[str]],
) -> Iterator[Timed]:
    """The lane's events from ``start`` on (``held``: those parsed already), each parsed and
    checked as it is taken; then the rest of the file read to its end."""
    yield _event(next(held), start, walk.name)
    for j in events:
        yield _event(walk.value(), j, walk.name)
    lane_keys, lanes, keys = after
    for _ in lane_keys:
        walk.value()
    for index in lanes:
        raise RecordingError(f'{walk.name}: lanes[{index}] needs "settings" and "events".')
    for _ in keys:
        walk.value()
    walk.end()


def _event(item: Any, index: int, name: str) -> Timed:
    try:
        return timed_event(item, f"lanes[0].events[{index}]")
    except ReadError as err:  # RecordingError too
        raise RecordingError(f"{name}: {err}") from None
