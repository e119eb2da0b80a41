"""What a comparison reads of the history database: each evaluation's runs counted per arm and
case (in SQL, from the ``results`` table: never a result read whole), each evaluation's and
lane's spread over its cases (its pass rate's interval by case), and which evaluation is a
scenario's baseline.

A row written before arms were kept (schema step 3) counts under the arm of its prompt
version and model alone (core/comparing/arms.py compares only what both arms know).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.history.history_rows import VERDICTS, WHOLE, counted, json_of, words
from sandbox_app.core.history.history_schema import HistoryError
from sandbox_app.core.results.eval_result import Arm
from sandbox_app.core.untrusted.file_reader import ReadError, one_line


@dataclass(frozen=True)
class CaseCount:
    """One arm's runs of one case in an evaluation."""

    arm: Arm
    case: int
    question: str | None
    expected: str | None
    runs: int
    passed: int
    lane: str  # a lane it ran on (its runs are found by lane, case and repeat)


# A run's verdict with its judge's check left out, where the run kept it (a judged run since
# schema step 7's app: ``JudgeUsage.passed_without_judge``), else its verdict.
_WITHOUT_JUDGE = (
    "CASE WHEN json_valid(judge) AND json_type(judge, '$.passed_without_judge') "
    "IN ('true', 'false') THEN json_extract(judge, '$.passed_without_judge') ELSE passed END"
)


def case_counts(
    store: HistoryStore, evaluation: int, without_judge: bool = False
) -> list[CaseCount]:
    """An evaluation's runs per arm and case, in the order the arms were first recorded;
    ``without_judge``: each run passed or failed as it would have without its judge's check."""
    store.evaluation(evaluation, tallied=False)  # HistoryError when there is none
    passed = _WITHOUT_JUDGE if without_judge else "passed"
    rows = store.read(
        "SELECT arm, prompt_version, model, case_no, question, expected, COUNT(*), "
        f"SUM({passed}), "
        f"MIN(lane), MIN(id) FROM results WHERE evaluation_id = ? AND {counted(columns=WHOLE)} "
        "GROUP BY arm, prompt_version, model, case_no, question, expected ORDER BY MIN(id)",
        (evaluation,),
    )
    arms: dict[tuple[str | None, str, str], Arm] = {}
    counted_: list[CaseCount] = []
    for text, version, model, case, question, expected, runs, passed, lane, first in rows:
        key = (text, version, model)
        try:
            arm = arms.get(key) or arm_of(text, version, model, evaluation)
            where = f"result {first} of evaluation {evaluation}"
            asked = words(question, f"{where}'s question", optional=True)
            wanted = words(expected, f"{where}'s expected answer", optional=True)
        except HistoryError as err:  # those runs left out, said; the others compared
            store.skip(f"result {first}", f"result {first} skipped: {err}")
            continue
        arms[key] = arm
        counted_.append(CaseCount(arm, case, asked, wanted, runs, passed, lane))
    store.skip_bad("AND evaluation_id = ?", (evaluation,), WHOLE)
    return counted_


CaseSpread = dict[tuple[int, int], int]  # a Spread (core/estimates/intervals.py) as read


class Reads(Protocol):
    """The store (:class:`HistoryStore`) or a second connection (``HistoryReader``)."""

    def read(self, sql: str, args: tuple[Any, ...] = ()) -> list[Any]: ...


def case_spreads(source: Reads, only: int | None = None) -> dict[tuple[int, str], CaseSpread]:
    """Each evaluation's spread over its cases (how many had each runs/passes count) by
    (evaluation, lane), and by (evaluation, "") over every lane (a case's runs in all lanes
    are one case's: its difficulty is the same in each). Read from the ``results_diff``
    index alone; a pass rate shown with its interval is the spread's own
    (``evaluation.rate_by_case``), so both count the same rows (those the store's
    ``skip_bad(…, VERDICTS)`` does not name). Seconds for a million results: the window
    asks it on a second connection, off its thread."""
    of, args = ("AND evaluation_id = ?", (only,)) if only is not None else ("", ())
    spreads: dict[tuple[int, str], CaseSpread] = {}
    for lane in ("lane", "''"):  # each lane's, then the whole evaluation's
        rows = source.read(
            "SELECT evaluation_id, lane, runs, passes, COUNT(*) FROM (SELECT evaluation_id, "
            f"{lane} AS lane, COUNT(*) AS runs, SUM(passed) AS passes FROM results WHERE "
            f"{counted(columns=VERDICTS)} {of} GROUP BY evaluation_id, {lane}, case_no) "
            "GROUP BY evaluation_id, lane, runs, passes",
            args,
        )
        for evaluation, name, runs, passes, cases in rows:
            spreads.setdefault((evaluation, name), {})[(runs, passes)] = cases
    return spreads


def arm_of(text: str | None, version: str, model: str, evaluation: int) -> Arm:
    """A row's arm from its ``arm`` column (a row before step 3: its version and model)."""
    where = f"evaluation {evaluation}'s arm"
    data = json_of(text, where) if text is not None else {"model": model}
    try:
        return Arm.from_dict(data, version, where)
    except ReadError as err:
        raise HistoryError(one_line(str(err))) from None


# An evaluation's scenario: its file; without one (standard input, an untitled scenario in
# the window) its title too, so that two untitled scenarios never share a baseline.
_SAME_SCENARIO = "scenario_path = ? AND (scenario_path != '' OR scenario_title = ?)"


def set_baseline(store: HistoryStore, evaluation: int) -> None:
    """``evaluation`` becomes its scenario's baseline (the one before it no longer is)."""
    row = store.evaluation(evaluation, tallied=False)
    store.execute(
        f"UPDATE evaluations SET baseline = (id = ?) WHERE ({_SAME_SCENARIO}) OR id = ?",
        (evaluation, row.scenario_path, row.scenario_title, evaluation),
    )


def marked_baseline(store: HistoryStore, evaluation: int) -> int | None:
    """The evaluation marked as the baseline of ``evaluation``'s scenario, unless none is
    or it is that one."""
    row = store.evaluation(evaluation, tallied=False)
    marked = store.read(
        f"SELECT id FROM evaluations WHERE {_SAME_SCENARIO} AND baseline = 1 AND id != ? "
        "ORDER BY id DESC LIMIT 1",
        (row.scenario_path, row.scenario_title, evaluation),
    )
    return int(marked[0][0]) if marked else None


def baseline_of(store: HistoryStore, scenario_path: str, before: int) -> int | None:
    """The evaluation a new one of ``scenario_path`` (id ``before``) is compared with: the
    one marked as its baseline, else the newest finished one before it (an optimization's
    runs aside: a search over candidates, not a measure of the prompt as it was)."""
    marked = store.read(
        "SELECT id FROM evaluations WHERE scenario_path = ? AND baseline = 1 AND id != ? "
        "ORDER BY id DESC LIMIT 1",
        (scenario_path, before),
    )
    if marked:
        return int(marked[0][0])
    latest = store.read(
        "SELECT id FROM evaluations WHERE scenario_path = ? AND id < ? AND finished IS NOT NULL "
        "AND source != 'optimize' ORDER BY id DESC LIMIT 1",
        (scenario_path, before),
    )
    return int(latest[0][0]) if latest else None


def baselines(store: HistoryStore) -> set[int]:
    return {int(row[0]) for row in store.read("SELECT id FROM evaluations WHERE baseline = 1")}
