"""An evaluation as a prompt engineer reads it: a matrix of cases × arms, each cell the case's
k/N on that arm and its latest answer, read a page of cases at a time; and each arm's spread
(how many cases had each k/N: its pass rate, interval, pass@k and pass^k, case_spread.py).

Arms are columns by identity (arms.py): two lanes with the same arm are one column, and an
arm is named as everywhere else (``arm_name``), with what sets it apart when two share a name.

:class:`HistoryMatrix` reads the history database. The cells of a page of cases are one query
found through the ``results_diff`` index by evaluation, lane and case number (a SEARCH, never
a SCAN: ~2 ms for 100 cases × 4 arms at 200,000 results), made on the window's thread as the
view asks. The case numbers that pass a filter (text in the question, the expected answer or
an answer; only the cases that differ) and the spreads are counted in SQL over the whole
evaluation (40-120 ms at 40,000-200,000 results), never read into Python: they are asked of a
second connection (core/history/history_reader.py) from another thread, and :meth:`stop`
ends one whose answer is no longer wanted. A lane is one arm through an evaluation (its first
run's), as in the grid. :class:`CountedMatrix` is the same over results counted as they stream
by (a Test set panel whose runs are not all in one evaluation of the database). No Qt here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

from sandbox_app.core.comparing.arms import arm_name, differences, factors, identity
from sandbox_app.core.history.history_arms import arm_of
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.history.history_reader import HistoryReader
from sandbox_app.core.history.history_rows import lanes_of
from sandbox_app.core.history.history_schema import HistoryError
from sandbox_app.core.results.eval_result import Arm, EvalResult

TEXTS = ("question", "expected", "answer")  # what the text filter looks in
MAX_IN = 400  # case numbers in one query's IN list (SQLite's old limit is 999 parameters)


@dataclass(frozen=True)
class MatrixCell:
    """One case on one arm: its runs, how many passed, the latest run's answer."""

    runs: int
    passed: int
    answer: str = ""
    ended: str = ""  # without an answer: why the latest run ended ("Reached max steps…")

    @property
    def shown(self) -> str:
        """Its answer, else how it ended without one."""
        return self.answer or (f"no answer: {self.ended}" if self.ended else "")

    def text(self) -> str:
        return f"{self.passed}/{self.runs}"

    @property
    def rate(self) -> float:
        return self.passed / self.runs if self.runs else 0.0


@dataclass(frozen=True)
class MatrixRow:
    case: int  # 0-based
    question: str
    cells: tuple[MatrixCell | None, ...]  # one per arm; None: the arm has not run it
    expected: str = ""  # the expected answer: what tells apart cases asked alike


def differs(cells: Iterable[MatrixCell | None]) -> bool:
    """The case's pass rate is not the same on every arm that ran it (an arm that has not
    run it yet, mid-evaluation, is no difference)."""
    return len({Fraction(c.passed, c.runs) for c in cells if c is not None and c.runs}) > 1


def column_names(arms: Sequence[Arm], names: Mapping[str, str]) -> list[str]:
    """Each arm's name; arms that would share one get the factors they differ in
    (``brief · good-7b · temperature 0.7``), so no two columns read alike."""
    plain = [arm_name(arm, names) for arm in arms]
    named = []
    for i, arm in enumerate(arms):
        twins = [other for j, other in enumerate(arms) if j != i and plain[j] == plain[i]]
        apart = sorted({factor for other in twins for factor in differences(arm, other)})
        extra = [f"{factor.replace('_', ' ')} {factors(arm).get(factor)}" for factor in apart]
        named.append(" · ".join([plain[i], *extra]))
    return named


Spreads = list[dict[tuple[int, int], int]]  # each arm's: (runs, passes) → how many cases


class MatrixSource(Protocol):
    """What the matrix view reads: the arms, the cases that pass a filter and each arm's
    spread (both may be asked from another thread; ``stop`` ends them), a page's rows."""

    arms: list[Arm]

    def case_numbers(self, text: str = "", differing: bool = False) -> list[int]: ...

    def rows(self, cases: Sequence[int]) -> list[MatrixRow]: ...

    def spreads(self) -> Spreads: ...

    def stop(self) -> None: ...

    def close(self) -> None: ...


def _spread_of(rows: Iterable[tuple[int, int, int, int]], arms: int) -> Spreads:
    """(column, runs, passes, cases) rows as each arm's spread."""
    spreads: Spreads = [{} for _ in range(arms)]
    for column, runs, passes, cases in rows:
        if 0 <= column < arms:
            key = (int(runs), int(passes or 0))
            spreads[column][key] = spreads[column].get(key, 0) + int(cases)
    return spreads


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class HistoryMatrix:
    """One evaluation of the history database as a matrix. ``pages_read`` and ``rows_read``
    count the reads of cells (what a large evaluation must never read all of)."""

    def __init__(self, store: HistoryStore, evaluation: int) -> None:
        found = store.read("SELECT lanes FROM evaluations WHERE id = ?", (evaluation,))
        if not found:
            raise HistoryError(f"no evaluation {evaluation} in {store.path}")
        order = {
            label: i for i, label in enumerate(lanes_of(found[0][0], f"evaluation {evaluation}"))
        }
        self._store, self._evaluation = store, evaluation
        self._reader: HistoryReader | None = None
        self._closed = False
        self.pages_read = self.rows_read = 0
        # Each lane's arm, from its first run (the lanes from the results index alone, then
        # one row each): a lane is one arm through an evaluation, as the Test set grid has
        # it. Reading every row's arm instead took 0.47 s at 200,000 results.
        firsts = store.read(
            "SELECT lane, arm, prompt_version, model FROM results WHERE id IN "
            "(SELECT MIN(id) FROM results WHERE evaluation_id = ? GROUP BY lane) ORDER BY id",
            (evaluation,),
        )
        # In the evaluation's lane order (as its grid and summary), not the order runs ended.
        firsts.sort(key=lambda row: order.get(row[0], len(order)))
        self.arms: list[Arm] = []
        columns: dict[tuple[tuple[str, Any], ...], int] = {}
        self._lanes: list[str] = []
        self._column_args: list[Any] = []
        for lane, text, version, model in firsts:
            arm = arm_of(text, version or "", model or "", evaluation)
            column = columns.setdefault(identity(arm), len(columns))
            if column == len(self.arms):
                self.arms.append(arm)
            self._lanes.append(lane)
            self._column_args += [lane, column]
        # A row's column in SQL, by its lane (in the index: "only differing" and the tallies
        # are counted from it alone); two lanes of one arm are one column.
        whens = " ".join("WHEN ? THEN ?" for _ in self._lanes)
        self._column = f"CASE lane {whens} END" if whens else "0"

    def _read(self, query: str, args: tuple[Any, ...]) -> list[Any]:
        """A read over the whole evaluation, on the second connection (made at the first)."""
        if self._closed:
            raise HistoryError(f"{self._store.path}: the matrix was closed")
        if self._reader is None:
            self._reader = HistoryReader(self._store.path)
        return self._reader.read(query, args)

    def stop(self) -> None:
        if self._reader is not None:
            self._reader.stop()

    def close(self) -> None:
        self._closed = True
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def case_numbers(self, text: str = "", differing: bool = False) -> list[int]:
        within, args = "", ()  # type: tuple[str, tuple[Any, ...]]
        if text:  # a case whose question, expected answer or any run's answer holds it
            like = " OR ".join(f"{c} LIKE ? ESCAPE '\\'" for c in TEXTS)
            within, args = f"AND ({like})", (_like(text),) * len(TEXTS)
        if not differing:
            query = f"SELECT DISTINCT case_no FROM results WHERE evaluation_id = ? {within}"
            read = self._read(f"{query} ORDER BY case_no", (self._evaluation, *args))
            return [int(case) for (case,) in read]
        # Counted in SQL, per case and arm over all of a case's runs (of the cases the text
        # found); only the numbers of the cases that differ leave it.
        if within:
            within = (
                f"AND case_no IN (SELECT case_no FROM results WHERE evaluation_id = ? {within})"
            )
            args = (self._evaluation, *args)
        query = (
            f"SELECT case_no FROM (SELECT case_no, {self._column} AS col, "
            f"SUM(passed) * 1.0 / COUNT(*) AS share FROM results WHERE evaluation_id = ? {within} "
            "GROUP BY case_no, col) GROUP BY case_no HAVING MIN(share) < MAX(share) "
            "ORDER BY case_no"
        )
        rows = self._read(query, (*self._column_args, self._evaluation, *args))
        return [int(case) for (case,) in rows]

    def rows(self, cases: Sequence[int]) -> list[MatrixRow]:
        found: dict[int, MatrixRow] = {}
        for start in range(0, len(cases), MAX_IN):
            found.update(self._page(cases[start : start + MAX_IN]))
        return [found[case] for case in cases if case in found]

    def _page(self, cases: Sequence[int]) -> dict[int, MatrixRow]:
        lanes = ", ".join("?" for _ in self._lanes)
        numbers = ", ".join("?" for _ in cases)
        # SQLite takes a bare column (question, answer) from the row the one MAX() picked:
        # the latest recorded run of the cell (its row id breaks a tie within a second).
        query = (
            f"SELECT case_no, {self._column} AS col, COUNT(*), SUM(passed), question, expected, "
            "answer, COALESCE(NULLIF(reason, ''), status), "
            "MAX(recorded || printf('%020d', id)) FROM results "
            f"WHERE evaluation_id = ? AND lane IN ({lanes}) AND case_no IN ({numbers}) "
            "GROUP BY case_no, col"
        )
        args = (*self._column_args, self._evaluation, *self._lanes, *cases)
        read = self._store.read(query, args)
        self.pages_read += 1
        self.rows_read += len(read)
        cells: dict[int, list[MatrixCell | None]] = {}
        asked: dict[int, tuple[str, str]] = {}
        for case, column, runs, passed, question, expected, answer, ended, _ in read:
            row = cells.setdefault(case, [None] * len(self.arms))
            row[column] = MatrixCell(int(runs), int(passed or 0), answer or "", ended or "")
            asked[case] = (question or f"case {case + 1}", expected or "")
        return {
            case: MatrixRow(case, asked[case][0], tuple(row), asked[case][1])
            for case, row in cells.items()
        }

    def spreads(self) -> Spreads:
        rows = self._read(
            f"SELECT col, runs, passes, COUNT(*) FROM (SELECT {self._column} AS col, "
            "COUNT(*) AS runs, SUM(passed) AS passes FROM results WHERE evaluation_id = ? "
            "GROUP BY case_no, col) GROUP BY col, runs, passes",
            (*self._column_args, self._evaluation),
        )
        return _spread_of(rows, len(self.arms))


@dataclass
class _Counting:
    question: str
    expected: str
    cells: dict[int, MatrixCell] = field(default_factory=dict)


class CountedMatrix:
    """Results counted as they go by (each run's latest, in the order first recorded): a
    case's cell per arm and its last answer, no result kept."""

    def __init__(self, results: Iterable[EvalResult]) -> None:
        self.arms: list[Arm] = []
        columns: dict[tuple[tuple[str, Any], ...], int] = {}
        self._cases: dict[int, _Counting] = {}
        for result in results:
            column = columns.setdefault(identity(result.arm), len(columns))
            if column == len(self.arms):
                self.arms.append(result.arm)
            asked = _Counting(result.question or "", result.expected or "")
            case = self._cases.setdefault(result.case, asked)
            was = case.cells.get(column, MatrixCell(0, 0))
            ended = result.reason or result.status or ""
            runs, passed = was.runs + 1, was.passed + result.passed
            case.cells[column] = MatrixCell(runs, passed, result.answer or "", ended)

    def _row(self, case: int) -> MatrixRow:
        counting = self._cases[case]
        cells = tuple(counting.cells.get(column) for column in range(len(self.arms)))
        question = counting.question or f"case {case + 1}"
        return MatrixRow(case, question, cells, counting.expected)

    def _holds(self, case: int, wanted: str) -> bool:
        """The case's question, expected answer or a latest answer (the answers it keeps)
        holds ``wanted`` (casefolded)."""
        counting = self._cases[case]
        texts = (counting.question, counting.expected, *(c.answer for c in counting.cells.values()))
        return any(wanted in text.casefold() for text in texts)

    def case_numbers(self, text: str = "", differing: bool = False) -> list[int]:
        wanted = text.casefold()
        return [
            case
            for case in sorted(self._cases)
            if (not wanted or self._holds(case, wanted))
            and (not differing or differs(self._row(case).cells))
        ]

    def rows(self, cases: Sequence[int]) -> list[MatrixRow]:
        return [self._row(case) for case in cases if case in self._cases]

    def spreads(self) -> Spreads:
        counts: dict[tuple[int, int, int], int] = {}
        for counting in self._cases.values():
            for column, cell in counting.cells.items():
                key = (column, cell.runs, cell.passed)
                counts[key] = counts.get(key, 0) + 1
        return _spread_of(((*key, n) for key, n in counts.items()), len(self.arms))

    def stop(self) -> None:
        """Nothing to stop: its cases are in memory."""

    def close(self) -> None:
        """Nothing to close."""


@dataclass(frozen=True)
class TrendPoint:
    evaluation: int
    started: str
    runs: int
    passed: int


def arm_trends(store: HistoryStore, arms: Sequence[Arm]) -> list[tuple[int, list[TrendPoint]]]:
    """Pass rates evaluation by evaluation, by prompt version × model (``HistoryStore.trend``:
    what the history counts runs by across evaluations, an old row's included), one line
    for the arms that share both, given as the first of them: (its arm, its points)."""
    firsts: dict[tuple[str, str], int] = {}
    for i, arm in enumerate(arms):  # the model column holds the kind for the offline model
        firsts.setdefault((arm.prompt_version, arm.model or arm.backend), i)
    lines: dict[int, list[TrendPoint]] = {i: [] for i in firsts.values()}
    for version, model, evaluation, started, runs, passed in store.trend():
        first = firsts.get((version, model))
        if first is not None and runs:
            lines[first].append(TrendPoint(evaluation, started, runs, passed or 0))
    return [(arm, points) for arm, points in lines.items() if points]
