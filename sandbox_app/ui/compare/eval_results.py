"""Where the Test set panel's runs live: each run's result and trace are in the history
database, written on the evaluation's thread as the run ends, and read back only when
something asks for them — a cell's tooltip (its results), a click (that run's trace), an
export (every run, a page at a time). The panel itself keeps what the grid and the summary
draw (eval_grid_model.py's bit masks, each lane's ``LaneTally``), so 100,000 runs in the
window hold no result and no record.

Where the database did not take a run (history off: a damaged or locked file, a full disk,
said once in the status bar), that run is kept here in memory with its record, as every run
was before: a click still shows its trace and the exports still carry its events. Memory
rather than a temporary file: what stopped the database (a full disk, a folder that cannot
be written) would most likely stop a second file too, and the fallback must not fail.

The runs come in layers, newest last: a past evaluation opened from the History view, the
evaluation being written (Resume and Re-run failed from a past one start a new one), the
runs kept in memory. A run in a newer layer replaces the same run of an older one, in its
place.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from sandbox_app.core.history.history_grades import evaluation_grades, result_ref
from sandbox_app.core.history.history_schema import HistoryError
from sandbox_app.core.results.eval_result import EvalResult, RunKey
from sandbox_app.core.results.exports import EvalResults, ExportError
from sandbox_app.core.running.records import RunRecord

if TYPE_CHECKING:
    from sandbox_app.application.backend_choice import BackendChoice
    from sandbox_app.application.history import EvaluationLog
    from sandbox_app.backends.catalogue.keys import KeyStore
    from sandbox_app.core.history.history_db import HistoryStore
    from sandbox_app.core.scenarios.scenario import Scenario

Run = tuple[EvalResult, RunRecord | None]  # a result, with its record when asked for
PAGE = 500  # runs read at a time by an export


class Layer(Protocol):
    def pages(self, events: bool) -> Iterator[list[Run]]: ...

    def lookup(self, keys: Sequence[RunKey], events: bool) -> dict[RunKey, Run]: ...


@dataclass(frozen=True)
class StoredLayer:
    """One evaluation in the history database."""

    store: HistoryStore
    evaluation: int

    def pages(self, events: bool) -> Iterator[list[Run]]:
        for page in self.store.pages(self.evaluation, events, PAGE):
            yield [_run(result, events) for result in page]

    def lookup(self, keys: Sequence[RunKey], events: bool) -> dict[RunKey, Run]:
        wanted = [(key.lane, key.case, key.repeat) for key in keys]
        found = self.store.results(self.evaluation, wanted, events) if wanted else ()
        return {result.key: _run(result, events) for result in found}


@dataclass
class MemoryLayer:
    """The runs the database did not take, with their records (written on the evaluation's
    thread, read on the window's: one lock)."""

    runs: dict[RunKey, tuple[EvalResult, RunRecord]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def pages(self, events: bool) -> Iterator[list[Run]]:
        with self.lock:
            runs = list(self.runs.values())
        for start in range(0, len(runs), PAGE):
            yield [
                (result, record if events else None)
                for result, record in runs[start : start + PAGE]
            ]

    def lookup(self, keys: Sequence[RunKey], events: bool) -> dict[RunKey, Run]:
        with self.lock:
            found = {key: self.runs[key] for key in keys if key in self.runs}
        return {key: (run[0], run[1] if events else None) for key, run in found.items()}


def _run(result: EvalResult, events: bool) -> Run:
    if not events:
        return result, None
    from sandbox_app.application.history import record_of

    # The trace lives on as the record only.
    return replace(result, events=None), record_of(result.events or ())


@dataclass(frozen=True)
class MadeWith:
    """The scenario and lanes the runs on screen were started with: a record read back from
    the database is told again how its run was made, as the runner told it (its case's
    expected answer for the header's verdict; backend, server and model for Inspect)."""

    scenario: Scenario
    lanes: dict[str, BackendChoice]
    keys: KeyStore

    def tell(self, record: RunRecord, result: EvalResult) -> None:
        lane, case = self.lanes.get(result.lane), result.case
        if lane is None or not 0 <= case < len(self.scenario.test_set):
            return
        from sandbox_app.application.eval_runner import case_spec

        spec = case_spec(self.scenario, lane, case, keys=self.keys)
        record.settings = replace(spec.record_settings(), prompt_version=result.prompt_version)
        record.scenario = spec.scenario


class RunStore:
    """The panel's runs wherever they are. ``count``: how many runs there are (the grid's
    masks know, so no key is kept here for it)."""

    def __init__(self, count: Callable[[], int]) -> None:
        self._count = count
        self._stored: list[StoredLayer] = []  # oldest first
        self.memory = MemoryLayer()
        self._log: EvaluationLog | None = None
        self.made_with: MadeWith | None = None  # None: a past evaluation (not known)

    def __len__(self) -> int:
        return self._count()

    @property
    def kept(self) -> int:
        """Runs held in memory (only those the database did not take)."""
        return len(self.memory.runs)

    def evaluation(self) -> tuple[HistoryStore, int] | None:
        """The one evaluation of the database holding every run shown, if one does."""
        if len(self._stored) != 1 or self.kept:
            return None
        return self._stored[0].store, self._stored[0].evaluation

    def clear(self) -> None:
        self._stored, self._log, self.made_with = [], None, None
        with self.memory.lock:
            self.memory.runs.clear()

    def show(self, store: HistoryStore, evaluation: int) -> None:
        """A past evaluation, in place of every run shown before."""
        self.clear()
        self._stored = [StoredLayer(store, evaluation)]

    def writing(self, log: EvaluationLog | None) -> None:
        """Runs from now on go to ``log``'s evaluation (None: no history, kept in memory)."""
        self._log = log
        store = log.history.store if log is not None else None
        if log is None or store is None or log.id is None:
            return
        layer = StoredLayer(store, log.id)
        if layer not in self._stored:
            self._stored.append(layer)

    def add(self, result: EvalResult, record: RunRecord) -> None:
        """A run that ended (on the evaluation's thread): into the database, else kept."""
        stored = self._log is not None and self._log.stored(result, record)
        key = result.key
        with self.memory.lock:
            if stored:
                self.memory.runs.pop(key, None)
            else:
                self.memory.runs[key] = (result, record)

    # ---- reading --------------------------------------------------------------------------

    def _layers(self) -> list[Layer]:
        return [*self._stored, self.memory]

    def lookup(self, keys: Sequence[RunKey], events: bool = False) -> dict[RunKey, Run]:
        """These runs, each from the newest layer that has it (HistoryError: unreadable)."""
        found: dict[RunKey, Run] = {}
        for layer in self._layers():
            found.update(layer.lookup(keys, events))
        return found

    def result(self, key: RunKey) -> EvalResult | None:
        found = self.lookup([key]).get(key)
        return found[0] if found is not None else None

    def replaced(self, key: RunKey) -> EvalResult | None:
        """The result a run again replaces (on the evaluation's thread, before it is stored);
        None when it cannot be read: the summary then counts both, the grid is right."""
        try:
            return self.result(key)
        except HistoryError:
            return None

    def record(self, key: RunKey) -> RunRecord | None:
        """A run's record, its trace read now (told how it was made, where that is known)."""
        result, record = self.lookup([key], events=True).get(key) or (None, None)
        if result is None or record is None:
            return None
        if self.made_with is not None and record.scenario is None:  # not a kept one
            self.made_with.tell(record, result)
        return record

    def cell(self, lane: str, case: int, repeats: int) -> list[EvalResult]:
        """A cell's results, each repeat's in order (its tooltip, when it shows); none when
        the database cannot be read (the cell's text and colour still say how it went)."""
        keys = [RunKey(lane, case, repeat) for repeat in range(repeats)]
        try:
            found = self.lookup(keys)
        except HistoryError:
            return []
        return [found[key][0] for key in keys if key in found]

    def shown(
        self, lane: str, case: int, runs: Sequence[tuple[int, bool]]
    ) -> tuple[int, RunRecord] | None:
        """What a click on a cell shows: of its ``runs`` (repeat, passed), the last failure,
        else the last run, with its record read now (HistoryError: unreadable)."""
        if not runs:
            return None
        repeat, _ = ([run for run in runs if not run[1]] or runs)[-1]
        record = self.record(RunKey(lane, case, repeat))
        if record is None:
            return None
        for layer in reversed(self._stored):  # the newest evaluation holding it: its grade's
            try:
                ref = result_ref(layer.store, layer.evaluation, lane, case, repeat)
            except HistoryError:
                continue
            record.stored_as = (ref.place, ref.id, str(layer.store.path))
            break
        return repeat, record

    def exported(
        self,
        title: str,
        questions: Sequence[str],
        labels: Sequence[str],
        verdicts: Sequence[Mapping[str, Any]] = (),
    ) -> StoredResults:
        grades: dict[RunKey, dict[str, object]] = {}  # the exports carry people's grades
        for layer in self._stored:
            try:
                found = evaluation_grades(layer.store, layer.evaluation)
            except HistoryError:  # the export goes on, and its reading says the problem
                continue
            for (lane, case, repeat), grade in found.items():
                grades[RunKey(lane, case, repeat)] = grade.to_dict()
        return StoredResults(title, questions, labels, Reading(self), verdicts, grades, source=self)

    def stream(self, events: bool) -> Iterator[Run]:
        """Every run's latest, in the order first recorded, a page at a time."""
        layers = self._layers()
        for number, layer in enumerate(layers):
            for page in layer.pages(events):
                keys = [result.key for result, _ in page]
                # Shown in place already, by an older layer that had it.
                earlier = {k for older in layers[:number] for k in older.lookup(keys, False)}
                fresh = [key for key in keys if key not in earlier]
                newer: dict[RunKey, Run] = {}
                for later in layers[number + 1 :]:
                    newer.update(later.lookup(fresh, events))
                for key, run in zip(keys, page, strict=True):
                    if key not in earlier:
                        yield newer.get(key, run)


@dataclass(frozen=True)
class StoredResults(EvalResults):
    """The panel's results as the exports read them: ``runs`` read from where they live as
    the export goes (each trace made a record, used and dropped); ``results`` without a
    trace. A database that cannot be read is the export's one line (ExportError)."""

    source: RunStore | None = None

    @property
    def results(self) -> list[EvalResult]:
        return [result for result, _ in _reading(self.source, events=False)]


class Reading(Iterable[Run]):
    """Every run with its record, read again each time it is gone through."""

    def __init__(self, source: RunStore) -> None:
        self._source = source

    def __iter__(self) -> Iterator[Run]:
        return _reading(self._source, events=True)


def _reading(source: RunStore | None, events: bool) -> Iterator[Run]:
    if source is None:
        return
    try:
        yield from source.stream(events)
    except HistoryError as err:
        raise ExportError(f"Cannot read the results back: {err}") from None
