"""Recordings: runs saved with their timing, played back with no network and no model.

A recording holds the scenario, and for each lane (one for the Run tab, 2–4 for a comparison)
its settings (never a key) and every event with its time offset from the run's start, as the
window received them (a frame's tokens together). Playing one back feeds the same events
through the same run pane at the recorded pace (or 2×, 4×, at once), so the trace text, its
colours, the metrics and the comparison table are the live run's.

    {"recording": 1, "app": "0.9.0", "created": "2026-11-30T10:00:00+00:00",
     "scenario": {… the scenario file's fields …},
     "lanes": [{"settings": {"model": "qwen3:8b", …},
                "events": [{"t": 0.0, "type": "RunStarted", …}, …]}]}
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandbox_app.core.running import events as ev
from sandbox_app.core.running.carried import check_carried
from sandbox_app.core.running.events import Event, RunFinished, event_to_dict
from sandbox_app.core.running.metrics import RunMetrics
from sandbox_app.core.running.records import RunSettings
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.scenarios.scenario_file import (
    scenario_from_dict,
    scenario_to_dict,
    scenarios_dir,
)
from sandbox_app.core.untrusted.file_reader import (
    ReadError,
    check,
    display_name,
    read_json,
    shown,
    typed,
)
from sandbox_app.lazy_import import lazy_import

if TYPE_CHECKING:
    import asyncio
else:
    asyncio = lazy_import("asyncio")


VERSION = 1
MAX_BYTES = 50 * 1024 * 1024
MAX_OFFSET_S = 7 * 24 * 3600  # an event's time from the run's start: a week is plenty
Timed = tuple[float, Event]
FIRST_EVENTS = 600  # of a long recording, checked before it plays: its first screen and more
_TYPES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        ev.RunStarted,
        ev.StepStarted,
        ev.TokenDelta,
        ev.ReasoningDelta,
        ev.ThinkingReclassified,
        ev.FabricationCut,
        ev.RepetitionCut,
        ev.ActionParsed,
        ev.Observation,
        ev.FormatError,
        ev.Notice,
        ev.LoopNoticed,
        ev.ContextMeasured,
        ev.ContextWontFit,
        ev.PromptTruncated,
        ev.Edited,
        ev.FinalAnswer,
        ev.Exchange,
        ev.StepFinished,
        ev.RunFinished,
    )
}


def recordings_dir() -> Path:
    """Shipped recordings: ``resources/recordings``, beside the built-in scenarios."""
    return scenarios_dir().parent / "recordings"


class RecordingError(ReadError):
    """A recording file that cannot be played, in one line."""


@dataclass(frozen=True)
class RecordedLane:
    settings: RunSettings
    events: tuple[Timed, ...]

    @property
    def finished(self) -> RunFinished | None:
        last = self.events[-1][1] if self.events else None
        return last if isinstance(last, RunFinished) else None


@dataclass(frozen=True)
class Recording:
    scenario: Scenario
    lanes: tuple[RecordedLane, ...]
    created: str = ""  # ISO 8601, UTC
    app: str = ""

    @property
    def models(self) -> list[str]:
        return [lane.settings.model or lane.settings.backend for lane in self.lanes]

    def title(self) -> str:
        """What the window says is playing: the models and when they were recorded."""
        when = self.created[:16].replace("T", " ")
        return f"Recording of {' · '.join(self.models)}, {when} UTC"


# A recording to play, and its one lane's events still to read or check
# (core/running/recording_stream.open_recording); none for a short one or a comparison.
Played = tuple[Recording, Iterable[Timed]]


def recording_of(scenario: Scenario, lanes: Sequence[RecordedLane], app: str = "") -> Recording:
    created = datetime.now(UTC).replace(microsecond=0).isoformat()
    return Recording(scenario, tuple(lanes), created, app)


def save_recording(recording: Recording, path: Path) -> None:
    path.write_text(recording_text(recording), encoding="utf-8")


def recording_text(recording: Recording) -> str:
    """The recording's file, as text (File → Save recording, Export run… as .json)."""
    data = {
        "recording": VERSION,
        "app": recording.app,
        "created": recording.created,
        "scenario": scenario_to_dict(recording.scenario),
        "lanes": [
            {
                "settings": lane.settings.to_dict(),
                "events": [{"t": round(t, 4), **event_to_dict(e)} for t, e in lane.events],
            }
            for lane in recording.lanes
        ],
    }
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def load_recording(path: Path) -> Recording:
    """Read a recording; RecordingError says in one line what is wrong with the file.

    Every field of every event is checked against its type here, so playing a recording
    never meets a wrong one (text that is a number, a step that is text). To play one as it
    is read: core/running/recording_stream.open_recording."""
    try:
        data = read_json(path, MAX_BYTES, "a recording")
    except ReadError as err:
        raise RecordingError(str(err)) from None
    try:
        recording, _ = recording_from(data, None)
    except ReadError as err:  # ScenarioError and RecordingError too
        raise RecordingError(f"{display_name(path)}: {err}") from None
    return recording


def recording_from(data: Any, checked_first: int | None) -> Played:
    """A recording's parsed JSON checked; of one lane of more than ``checked_first`` events,
    only the first ones here, the rest by the iterator as it is taken."""
    if not isinstance(data, dict) or data.get("recording") != VERSION:
        raise RecordingError(f'not a recording (no "recording": {VERSION}).')
    lanes = data.get("lanes")
    if not isinstance(lanes, list) or not 1 <= len(lanes) <= 4:
        raise RecordingError('"lanes" must hold 1 to 4 lanes.')
    first = checked_first if len(lanes) == 1 else None  # a comparison: every lane at once
    read = [_lane(lane, i, first) for i, lane in enumerate(lanes)]
    recording = Recording(
        scenario_from_dict(data.get("scenario")),
        tuple(lane for lane, _ in read),
        check(data.get("created", ""), str, "created"),
        check(data.get("app", ""), str, "app"),
    )
    return recording, read[0][1]


def _lane(data: Any, index: int, first: int | None) -> tuple[RecordedLane, Iterable[Timed]]:
    where = f"lanes[{index}]"
    settings = data.get("settings") if isinstance(data, dict) else None
    items = data.get("events") if isinstance(data, dict) else None
    if not isinstance(settings, dict) or not isinstance(items, list):
        raise RecordingError(f'{where} needs "settings" and "events".')
    head = len(items) if first is None or len(items) <= first else first
    timed = [timed_event(items[j], f"{where}.events[{j}]") for j in range(head)]
    lane = RecordedLane(RunSettings.from_dict(settings, f"{where}.settings"), tuple(timed))
    return lane, _checked(items, head, where) if head < len(items) else ()


def _checked(items: list[Any], start: int, where: str) -> Iterator[Timed]:
    for j in range(start, len(items)):
        item, items[j] = items[j], None  # the parsed dict let go once it is an event
        yield timed_event(item, f"{where}.events[{j}]")


def timed_event(item: Any, at: str) -> Timed:
    """A recorded event's parsed JSON (``at`` names it in the messages) checked: its time
    and the event."""
    if not isinstance(item, dict) or "t" not in item:
        raise RecordingError(f"{at} has no time.")
    t = check(item["t"], float, f"{at}.t")
    if not 0 <= t <= MAX_OFFSET_S:  # a timer set years ahead would overflow, or never end
        raise RecordingError(f'"{at}.t" must be from 0 to {MAX_OFFSET_S:,} s (got {t:g}).')
    return t, event_from_dict(item, at)


def event_from_dict(data: dict[str, Any], where: str = "event") -> Event:
    """The event :func:`events.event_to_dict` wrote (its extra keys, like ``t``, ignored),
    each field checked against its type (:class:`ReadError` names the one that is wrong), a
    request's provider items against their bound (core/running/carried.py)."""
    kind = data.get("type")
    cls = _TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise RecordingError(f'"{where}.type" is not an event type (got {shown(kind)}).')
    event: Event = typed(cls, data, where)
    if isinstance(event, ev.Exchange):
        check_carried(event.messages, f"{where}.messages")
    return event


class RecordedRun:
    """Plays a recorded lane's events at ``speed`` × the recorded pace (0: at once); runs
    through ``engine.drive`` like a live engine, so everything downstream is the same.
    ``more``: events after the lane's that are still being read (a long trace streams in:
    core/otel/otel_import.TraceStream); a file that turns out damaged on the way ends the
    run as failed, in its one line. At once, the loop gets a turn every :data:`TURN_S`, so
    the window draws and answers while a long run pours in."""

    TURN_S = 0.001  # a turn's work before the window's: a heartbeat waits no longer

    def __init__(self, lane: RecordedLane, speed: float = 1.0, more: Iterable[Timed] = ()) -> None:
        self.lane = lane
        self.speed = speed
        self.more = more
        self._shown: RunMetrics = RunMetrics()

    async def run(self) -> AsyncIterator[Event]:
        loop = asyncio.get_running_loop()
        started = turn = loop.time()
        timed = itertools.chain(self.lane.events, self.more)
        while True:
            try:
                offset, event = next(timed)
            except StopIteration:
                return
            except ReadError as err:
                yield RunFinished("failed", str(err), None, self._shown)
                return
            if self.speed > 0:
                delay = started + offset / self.speed - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
            elif loop.time() - turn > self.TURN_S:
                await asyncio.sleep(0)
                turn = loop.time()
            if isinstance(event, RunFinished):
                self._shown = event.metrics
            yield event

    def stopped(self) -> RunFinished:
        return RunFinished("stopped", "Stopped by the user.", None, self._shown)


class NoBackend:
    """What a played-back run talks to: nothing (no socket, no model)."""

    label = "Recording"

    async def aclose(self) -> None:
        return None
