"""Run records: every finished or stopped run, kept as its events with the settings behind it.

The window (its main view and every compare lane) and the CLI keep a record of each run;
every export (copy trace, the compare exports, the CLI's ``--json``) reads records through
``exports.py``. A record never holds an API key.

Memory stays flat over many runs: a step's tokens are joined into one event (its thinking
into another), a record keeps at most :data:`MAX_RECORD_CHARS` of model text (what is past
it is counted, not kept; a replayed record keeps all: its text was held already), and a
:class:`RunHistory` keeps the last few records only.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from sandbox_app.core.running.events import (
    Event,
    ReasoningDelta,
    RunFinished,
    StepStarted,
    ThinkingReclassified,
    TokenDelta,
)
from sandbox_app.core.running.fork import ForkOrigin
from sandbox_app.core.scenarios.lane_settings import LaneSettings, SettingError
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.untrusted.file_reader import ReadError, typed

MAX_RECORD_CHARS = 1_000_000  # ~200k tokens of model text: far past a max_tokens run
MAX_RUNS_KEPT = 20  # the compare view's largest Repeat


Streamed = TokenDelta | ReasoningDelta


@dataclass(frozen=True)
class RunSettings:
    """What produced a run (never a key): enough to tell runs apart in an export."""

    backend: str = ""
    base_url: str = ""
    model: str = ""
    settings: LaneSettings = field(default_factory=LaneSettings)
    dialect: str = ""
    max_steps: int = 0
    question: str = ""
    # The prompt version the run was told (core/scenarios/prompt_versions.py: its full id);
    # "" in records made before versions were kept.
    prompt_version: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Flat, as files have always held it: the lane settings beside the model's name."""
        return {
            "backend": self.backend,
            "base_url": self.base_url,
            "model": self.model,
            **self.settings.to_dict(lane=False),  # a lane's own: applied, so dialect etc.
            "dialect": self.dialect,
            "max_steps": self.max_steps,
            "question": self.question,
            "prompt_version": self.prompt_version,
        }

    @classmethod
    def from_dict(cls, data: Any, where: str) -> RunSettings:
        """What :meth:`to_dict` wrote, each field checked; ReadError names the bad one."""
        plain = typed(cls, data, where)  # "settings" is never a key of the flat form
        try:
            return replace(plain, settings=LaneSettings.from_dict(data, where, lane=False))
        except SettingError as err:
            raise ReadError(str(err)) from None


class RunRecord:
    """One run's events, in order, with a step's tokens (and its thinking) joined."""

    def __init__(self, settings: RunSettings | None = None) -> None:
        self.settings = settings or RunSettings()
        self.scenario: Scenario | None = None  # what the run was made from, where known
        self.replayed = False  # played back from a recording, not run
        self.fork: ForkOrigin | None = None  # a fork or rerun of another kept run
        self.finished: RunFinished | None = None
        # Where the history database keeps this run, once it does: "run" (a single run) or
        # "result" (a test set's), its row id and the database file; what a grade is kept by.
        self.stored_as: tuple[str, int, str] | None = None
        # The events as they arrived, each frame's text joined, with seconds since the run
        # began: what a recording plays back (core/running/recording.py). Only when add() is
        # timed. Kept flat, a time for each frame's events, not a pair for each event: a
        # 30,000-step trace's 180,000 pairs took 13 MB of tuples.
        self._timed: list[Event] = []
        self._frames = array("d")  # each frame's time
        self._frame_ends = array("L")  # and where its events in ``_timed`` end
        self._timed_chars = 0
        self.chars_not_kept = 0
        self._chars = 0
        self._events: list[Event] = []
        # The streamed text so far, joined only when read: adding token after token to one
        # string would copy the whole step each time (quadratic over a 100,000-token reply).
        self._text_kind: type[Streamed] = TokenDelta
        self._text_step = 0
        self._text: list[str] = []
        self._text_event: Streamed | None = None  # the event whose text began ``_text``

    @property
    def events(self) -> list[Event]:
        self._close_text()
        return self._events

    def add(self, events: Iterable[Event], at: float | None = None) -> None:
        """Add events in order; ``at``: when they arrived (seconds since the run began)."""
        events = list(events)
        if at is not None:
            self._add_timed(events, at)
        for event in events:
            if isinstance(event, TokenDelta | ReasoningDelta):
                self._add_text(event)
                continue
            self._close_text()
            if isinstance(event, ThinkingReclassified):
                self._reclassify(event.step)
                continue
            if isinstance(event, RunFinished):
                self.finished = event
            self._events.append(event)

    def _add_timed(self, events: list[Event], at: float) -> None:
        """A frame's events, its runs of text of one kind and step joined (once, not piece
        by piece: a client catching up delivers thousands in one frame)."""
        runs: list[Event | list[Streamed]] = []
        for event in events:
            if not isinstance(event, TokenDelta | ReasoningDelta):
                runs.append(event)
                continue
            if self._timed_chars >= MAX_RECORD_CHARS and not self.replayed:
                continue  # the record keeps no more text either
            self._timed_chars += len(event.text)
            last = runs[-1] if runs else None
            if (
                isinstance(last, list)
                and type(last[0]) is type(event)
                and last[0].step == event.step
            ):
                last.append(event)
            else:
                runs.append([event])
        for run in runs:
            if isinstance(run, list):  # one piece: that event itself, shared with the record
                run = run[0] if len(run) == 1 else type(run[0])(run[0].step, _joined(run))
            self._timed.append(run)
        self._frames.append(at)
        self._frame_ends.append(len(self._timed))

    @property
    def timeline(self) -> list[tuple[float, Event]]:
        timed, start = [], 0
        for at, end in zip(self._frames, self._frame_ends, strict=True):
            timed += [(at, event) for event in self._timed[start:end]]
            start = end
        return timed

    def _add_text(self, event: Streamed) -> None:
        # A recording's text is held already (a long trace's, its every step): kept whole.
        room = len(event.text) if self.replayed else MAX_RECORD_CHARS - self._chars
        text = event.text
        if len(text) > room:
            self.chars_not_kept += len(text) - room
            text = text[:room]
        if not text:
            return
        self._chars += len(text)
        if self._text and (self._text_step != event.step or self._text_kind is not type(event)):
            self._close_text()
        if not self._text:
            last = self._events[-1] if self._events else None
            same = isinstance(last, TokenDelta | ReasoningDelta) and type(last) is type(event)
            if same and last.step == event.step:  # type: ignore[union-attr]
                self._events.pop()  # read mid-step: carry on joining
                self._text.append(last.text)  # type: ignore[union-attr]
            self._text_step, self._text_kind = event.step, type(event)
            self._text_event = event if text is event.text else None
        self._text.append(text)

    def _close_text(self) -> None:
        if self._text:
            whole = self._text_event
            if whole is None or len(self._text) > 1:  # one piece: that event, not a copy
                whole = self._text_kind(self._text_step, "".join(self._text))
            self._events.append(whole)
            self._text.clear()

    def _reclassify(self, step: int) -> None:
        """The step's model text so far was thinking: record it as such, as if it had come so."""
        thinking: list[str] = []
        while self._events:
            last = self._events[-1]
            if not isinstance(last, TokenDelta | ReasoningDelta) or last.step != step:
                break
            self._events.pop()
            thinking.insert(0, last.text)
        if thinking:
            self._events.append(ReasoningDelta(step, "".join(thinking)))

    @property
    def done(self) -> bool:
        return self.finished is not None

    def steps_started(self) -> int:
        """How many steps the run started (a step it stopped in counted)."""
        return max((e.step for e in self._events if isinstance(e, StepStarted)), default=0)


class RunHistory:
    """The last :data:`MAX_RUNS_KEPT` records of one run pane (the main view or a lane)."""

    def __init__(self, limit: int = MAX_RUNS_KEPT) -> None:
        self._records: deque[RunRecord] = deque(maxlen=limit)

    def start(self, settings: RunSettings | None = None) -> RunRecord:
        record = RunRecord(settings)
        self._records.append(record)
        return record

    def add(self, record: RunRecord) -> None:
        """Keep a record made elsewhere (a test-set run shown in its lane)."""
        self._records.append(record)

    @property
    def full(self) -> bool:
        """The next record pushes the oldest out."""
        return len(self._records) == self._records.maxlen

    def clear(self) -> None:
        self._records.clear()

    @property
    def latest(self) -> RunRecord | None:
        return self._records[-1] if self._records else None

    @property
    def finished(self) -> list[RunFinished]:
        return [r.finished for r in self._records if r.finished is not None]

    def __getitem__(self, index: int) -> RunRecord:
        return self._records[index]

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[RunRecord]:
        return iter(self._records)


def _joined(pieces: list[Streamed]) -> str:
    return "".join(piece.text for piece in pieces)
