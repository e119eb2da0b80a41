"""Human grades and blind pairwise choices in the history database (schema step 7).

A grade is a 👍 or 👎 and a note on one run as the history stores it: a single run (the
Run tab's, a lane's, ``run``'s: a row of ``runs``) or a test set's run (a row of
``results``, found by its evaluation, lane, case and repeat). A run has one grade at most:
grading it again replaces it. A pairwise choice is a person's pick between two lanes' answers
to one case of an evaluation, shown blind on random sides: stored by lane (``first`` /
``second`` in the order the pair was named, ``tie``), the side each was on and the seed kept
beside it. The judge's verdicts on the graded runs are read here too, for its agreement with
the people (core/comparing/agreement.py). Every value read is checked (history_rows.py);
every failure a HistoryError of one line. No Qt here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.history.history_rows import MAX_COUNT, whole, words
from sandbox_app.core.history.history_schema import HistoryError, now

Place = Literal["run", "result"]  # which table the graded run is a row of
Choice = Literal["first", "second", "tie"]
CHOICES: tuple[Choice, ...] = ("first", "second", "tie")
MAX_NOTE = 2_000  # characters: a note is a sentence or two, not a document


@dataclass(frozen=True)
class RunRef:
    """A run as the history stores it: its row in ``runs`` or in ``results``."""

    place: Place
    id: int

    @property
    def column(self) -> str:
        return "run_id" if self.place == "run" else "result_id"


@dataclass(frozen=True)
class Grade:
    good: bool
    note: str = ""

    def words(self) -> str:
        said = "👍" if self.good else "👎"
        return f"{said} {self.note}".rstrip()

    def to_dict(self) -> dict[str, object]:
        return {"good": self.good, "note": self.note}


@dataclass(frozen=True)
class PairChoice:
    case: int
    first: str  # lane labels, as the evaluation named them
    second: str
    first_left: bool  # the side the first lane's answer was shown on
    seed: int
    choice: Choice


def set_grade(store: HistoryStore, ref: RunRef, grade: Grade) -> None:
    """``ref``'s grade, replacing the one it had (HistoryError: no such run)."""
    table = "runs" if ref.place == "run" else "results"
    if not store.read(f"SELECT 1 FROM {table} WHERE id = ?", (ref.id,)):
        raise HistoryError(f"no {ref.place} {ref.id} in {store.path}")
    store.execute(
        f"INSERT INTO grades ({ref.column}, good, note, recorded) VALUES (?, ?, ?, ?) "
        f"ON CONFLICT ({ref.column}) DO UPDATE SET good = excluded.good, "
        "note = excluded.note, recorded = excluded.recorded",
        (ref.id, int(grade.good), grade.note[:MAX_NOTE], now()),
    )


def clear_grade(store: HistoryStore, ref: RunRef) -> None:
    store.execute(f"DELETE FROM grades WHERE {ref.column} = ?", (ref.id,))


def grade_of(store: HistoryStore, ref: RunRef) -> Grade | None:
    rows = store.read(f"SELECT good, note FROM grades WHERE {ref.column} = ?", (ref.id,))
    return _grade(rows[0], f"the grade of {ref.place} {ref.id}") if rows else None


def result_ref(store: HistoryStore, evaluation: int, lane: str, case: int, repeat: int) -> RunRef:
    """A test set's run by its key (HistoryError: the history has no such run)."""
    rows = store.read(
        "SELECT id FROM results WHERE evaluation_id = ? AND lane = ? AND case_no = ? "
        "AND repeat = ?",
        (evaluation, lane, case, repeat),
    )
    if not rows:
        raise HistoryError(f"evaluation {evaluation} has no run {lane} · case {case + 1}")
    return RunRef("result", whole(rows[0][0], "a result's id"))


def evaluation_grades(store: HistoryStore, evaluation: int) -> dict[tuple[str, int, int], Grade]:
    """Each graded run of an evaluation by its key (lane, case, repeat): what exports carry."""
    found: dict[tuple[str, int, int], Grade] = {}
    for lane, case, repeat, good, note in store.read(
        "SELECT r.lane, r.case_no, r.repeat, g.good, g.note FROM grades g "
        "JOIN results r ON r.id = g.result_id WHERE r.evaluation_id = ?",
        (evaluation,),
    ):
        try:
            key = (
                str(words(lane, "a graded run's lane")),
                whole(case, "a graded run's case", MAX_COUNT),
                whole(repeat, "a graded run's repeat", MAX_COUNT),
            )
            found[key] = _grade((good, note), f"a grade in evaluation {evaluation}")
        except HistoryError as err:
            store.skip(f"grade of {lane} {case} {repeat}", err)
    return found


def judged_grades(
    store: HistoryStore, scenario_path: str, judge_id: str | None = None
) -> list[tuple[bool, bool]]:
    """(the person's 👍, the judge's pass) for each graded run of the scenario's evaluations
    that the judge decided: the labels its agreement is counted from (an unjudged run, or one
    with no judge, is no label); ``judge_id``: of that judge only (judge_spec.judge_identity,
    kept in each judged result; None: any judge)."""
    which = (
        "" if judge_id is None
        else "AND json_valid(r.judge) AND json_extract(r.judge, '$.judge_id') = ? "
    )  # fmt: skip
    rows = store.read(
        "SELECT g.good, json_extract(c.value, '$.passed') FROM grades g "
        "JOIN results r ON r.id = g.result_id JOIN evaluations e ON e.id = r.evaluation_id, "
        "json_each(CASE WHEN json_valid(r.checks) AND json_type(r.checks) = 'array' "
        "THEN r.checks ELSE '[]' END) c "
        "WHERE e.scenario_path = ? AND json_type(c.value) = 'object' "
        "AND json_extract(c.value, '$.name') = 'judge' "
        f"AND json_type(c.value, '$.passed') IN ('true', 'false') {which}",
        (scenario_path,) if judge_id is None else (scenario_path, judge_id),
    )
    return [(bool(good), bool(passed)) for good, passed in rows if good in (0, 1)]


def evaluation_judge(store: HistoryStore, evaluation: int) -> str | None:
    """The judge that judged an evaluation's runs (its identity), if it kept one."""
    rows = store.read(
        "SELECT json_extract(judge, '$.judge_id') FROM results WHERE evaluation_id = ? "
        "AND json_valid(judge) AND json_type(judge, '$.judge_id') = 'text' LIMIT 1",
        (evaluation,),
    )
    return str(rows[0][0]) if rows else None


def choose(store: HistoryStore, evaluation: int, pick: PairChoice) -> None:
    """A pairwise choice, replacing the one made before for the same case and lanes."""
    if pick.choice not in CHOICES:
        raise HistoryError(f"a pairwise choice is first, second or tie (not {pick.choice})")
    store.execute(
        "INSERT INTO pairwise (evaluation_id, case_no, first, second, first_left, seed, choice, "
        "recorded) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (evaluation_id, case_no, first, second) DO UPDATE SET "
        "first_left = excluded.first_left, seed = excluded.seed, choice = excluded.choice, "
        "recorded = excluded.recorded",
        (evaluation, pick.case, pick.first, pick.second, int(pick.first_left), pick.seed,
         pick.choice, now()),
    )  # fmt: skip


def choices(store: HistoryStore, evaluation: int) -> list[PairChoice]:
    """An evaluation's pairwise choices, by case (a bad row skipped and said)."""
    found: list[PairChoice] = []
    for row in store.read(
        "SELECT case_no, first, second, first_left, seed, choice FROM pairwise "
        "WHERE evaluation_id = ? ORDER BY first, second, case_no",
        (evaluation,),
    ):
        try:
            case, first, second, left, seed, choice = row
            if choice not in CHOICES or left not in (0, 1):
                raise HistoryError(f"a pairwise choice of evaluation {evaluation} is not one")
            found.append(
                PairChoice(
                    whole(case, "a pairwise choice's case", MAX_COUNT),
                    str(words(first, "a pairwise choice's lane")),
                    str(words(second, "a pairwise choice's lane")),
                    bool(left),
                    whole(seed, "a pairwise choice's seed"),
                    choice,
                )
            )
        except HistoryError as err:
            store.skip(f"pairwise {evaluation} {row[0]!r}", err)
    return found


def _grade(row: tuple[object, object], where: str) -> Grade:
    good, note = row
    if good not in (0, 1):
        raise HistoryError(f"{where} is neither 👍 nor 👎")
    return Grade(bool(good), str(words(note, f"{where}'s note")))
