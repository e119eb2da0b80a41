"""The history database's rows read back: one checked reader for each kind of row.

A history file is a file like any other: another program, a crash of a disk or a hand with
``sqlite3`` may leave rows that are not what the app wrote (text in an integer column, JSON
that is not JSON, a number of 24 digits). Every value the app reads of a row goes through
here: an evaluation's row (:func:`evaluation_row`), a result's (:func:`result_of`, through
``EvalResult.from_dict``, the results file's reader), a count or a tally summed in SQL over
the rows :func:`counted` lets through (the others named by :func:`bad_results`), an
arm, a trace. A bad row is a :class:`HistoryError` of one line naming it; its readers skip
it and say that line where the rest can still be shown. No Qt here.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from typing import Any

from sandbox_app.core.history.history_schema import HistoryError, now
from sandbox_app.core.results.eval_result import Arm, EvalResult
from sandbox_app.core.untrusted.file_reader import (
    ReadError,
    one_line,
    parse_json_text,
    shown,
)

MAX_ID = 2**63 - 1  # SQLite's largest integer: any id the app wrote, or is given, is below
MAX_COUNT = 2**31 - 1  # a case's number, a repeat, a count of cases or repeats
MAX_TRACE_BYTES = 64 * 1024 * 1024  # a trace unpacked (zlib can make much of little)


def whole(value: Any, where: str, high: int = MAX_ID) -> int:
    """An integer column's value, from 0 to ``high``; anything else is one line."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
        raise HistoryError(f"{where} is {shown(value)}, not a whole number from 0 to {high:,}")
    return value


def words(value: Any, where: str, optional: bool = False) -> str | None:
    """A text column's value (``None`` only when ``optional``)."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise HistoryError(f"{where} is {shown(value)}, not text")
    return value


def json_of(value: Any, where: str) -> Any:
    """A JSON column's value, by the file reader's rules for JSON held in memory (its size
    and nesting limits)."""
    try:
        return parse_json_text(value, where)
    except ReadError as err:
        raise HistoryError(one_line(str(err))) from None


def unpacked(blob: Any, where: str) -> Any:
    """A packed column (``history_schema.packed``: zlib JSON) read back, bounded."""
    if not isinstance(blob, bytes):
        raise HistoryError(f"{where} is {shown(type(blob).__name__)}, not packed JSON")
    try:
        inflater = zlib.decompressobj()
        raw = inflater.decompress(blob, MAX_TRACE_BYTES + 1)
    except zlib.error:
        raise HistoryError(f"{where} is not packed JSON (damaged)") from None
    if len(raw) > MAX_TRACE_BYTES or inflater.unconsumed_tail:
        raise HistoryError(f"{where} is larger than {MAX_TRACE_BYTES // 2**20} MB unpacked")
    try:
        text = raw.decode()
    except UnicodeDecodeError:
        raise HistoryError(f"{where} is not packed JSON (not UTF-8)") from None
    try:
        return parse_json_text(text, where, MAX_TRACE_BYTES)
    except ReadError as err:
        raise HistoryError(one_line(str(err))) from None


# ---- an evaluation's row ---------------------------------------------------------------


@dataclass(frozen=True)
class Tally:
    runs: int = 0
    passed: int = 0


@dataclass
class EvaluationRow:
    id: int
    started: str
    finished: str | None
    scenario_title: str
    scenario_path: str
    lanes: list[str]
    cases: int
    repeats: int
    source: str
    versions: list[str] = field(default_factory=list)  # prompt version ids, as first seen
    by_lane: dict[str, Tally] = field(default_factory=dict)

    @property
    def runs(self) -> int:
        return sum(t.runs for t in self.by_lane.values())

    @property
    def passed(self) -> int:
        return sum(t.passed for t in self.by_lane.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "started": self.started,
            "finished": self.finished,
            "scenario": self.scenario_title,
            "scenario_path": self.scenario_path,
            "lanes": self.lanes,
            "cases": self.cases,
            "repeats": self.repeats,
            "source": self.source,
            "prompt_versions": self.versions,
            "runs": self.runs,
            "passed": self.passed,
        }


EVALUATION_COLUMNS = (
    "id, started, finished, scenario_title, scenario_path, lanes, cases, repeats, source"
)


def evaluation_row(row: tuple[Any, ...]) -> EvaluationRow:
    """A row of :data:`EVALUATION_COLUMNS`, checked column by column."""
    number = whole(row[0], "an evaluation's id")
    where = f"evaluation {number}"
    return EvaluationRow(
        number,
        str(words(row[1], f"{where}'s start")),
        words(row[2], f"{where}'s end", optional=True),
        str(words(row[3], f"{where}'s scenario title")),
        str(words(row[4], f"{where}'s scenario path")),
        lanes_of(row[5], where),
        whole(row[6], f"{where}'s number of cases", MAX_COUNT),
        whole(row[7], f"{where}'s number of repeats", MAX_COUNT),
        str(words(row[8], f"{where}'s source")),
    )


def lanes_of(value: Any, where: str) -> list[str]:
    """An evaluation's ``lanes`` column: a JSON list of ``{"label": …, "model": …}``."""
    lanes = json_of(value, f"{where}'s lanes")
    if not isinstance(lanes, list) or not all(
        isinstance(lane, dict) and isinstance(lane.get("label"), str) for lane in lanes
    ):
        raise HistoryError(f"{where}'s lanes are {shown(lanes)}, not a list of labelled lanes")
    return [lane["label"] for lane in lanes]


# ---- results: counted in SQL over good rows, read whole through EvalResult -------------


# What each counted column of a ``results`` row holds when the app wrote it.
_COLUMN_RULES = {
    "passed": "typeof({a}passed) = 'integer' AND {a}passed IN (0, 1)",
    "lane": "typeof({a}lane) = 'text'",
    "prompt_version": "typeof({a}prompt_version) = 'text'",
    "model": "typeof({a}model) = 'text'",
    "case_no": f"typeof({{a}}case_no) = 'integer' AND {{a}}case_no BETWEEN 0 AND {MAX_COUNT}",
    "repeat": f"typeof({{a}}repeat) = 'integer' AND {{a}}repeat BETWEEN 0 AND {MAX_COUNT}",
}
TALLIED = ("passed", "lane", "prompt_version", "model")  # the results_trend index's
VERDICTS = ("passed", "lane", "case_no", "repeat")  # the results_diff index's
WHOLE = tuple(_COLUMN_RULES)


def counted(alias: str = "", columns: tuple[str, ...] = TALLIED) -> str:
    """The SQL condition a ``results`` row meets when the ``columns`` counted are what the
    app writes (``alias`` the table's, with its dot): what every count and tally sums over.
    A query names only the columns of the index it reads (``TALLIED``: ``results_trend``,
    ``VERDICTS``: ``results_diff``), so it is still answered from the index alone."""
    return "(" + " AND ".join(_COLUMN_RULES[c].format(a=alias) for c in columns) + ")"


def bad_results(rows: list[Any]) -> list[str]:
    """One line per result row left out of the counts (``rows``: its id, its evaluation's,
    as selected with ``NOT`` :func:`counted`)."""
    return [
        f"result {shown(result)} of evaluation {shown(evaluation)} skipped: its lane, case, "
        "repeat, prompt version, model or verdict is not what the app writes"
        for result, evaluation in rows
    ]


def select_results(events: bool) -> str:
    """A result's columns (its trace's too with ``events``), its row id last."""
    trace = "t.events" if events else "NULL"
    return (
        "SELECT r.lane, r.case_no, r.repeat, r.prompt_version, r.model, r.passed, r.status, "
        "r.question, r.expected, r.answer, r.checks, r.metrics, r.arm, r.reason, r.judge, "
        f"{trace}, r.id "
        "FROM results r "
        "LEFT JOIN traces t ON t.result_id = r.id"
    )


def result_of(row: tuple[Any, ...], events: bool) -> EvalResult:
    """A row of :func:`select_results` read as a results file's line is (EvalResult's one
    reader); a row from before arms were kept gets its model from its ``model`` column."""
    where = f"result {shown(row[-1])}"
    if row[5] not in (0, 1) or isinstance(row[5], float):
        raise HistoryError(f"{where}'s verdict is {shown(row[5])}, not 0 or 1")
    arm = json_of(row[12], f"{where}'s arm") if row[12] is not None else {"model": row[4]}
    data = {
        "lane": row[0],
        "case": row[1],
        "repeat": row[2],
        "prompt_version": row[3],
        "arm": arm,
        "passed": bool(row[5]),
        "status": row[6],
        "question": row[7],
        "expected": row[8],
        "answer": row[9],
        "checks": json_of(row[10], f"{where}'s checks"),
        "metrics": json_of(row[11], f"{where}'s metrics") if row[11] is not None else None,
        "reason": row[13],
        "judge": json_of(row[14], f"{where}'s judge") if row[14] is not None else None,
        **({"events": unpacked(row[15], f"{where}'s trace") if row[15] else []} if events else {}),
    }
    try:
        return EvalResult.from_dict(data, where)
    except ReadError as err:
        raise HistoryError(one_line(str(err))) from None


def result_row(
    evaluation: int, result: EvalResult, model: str, metrics: str | None = None
) -> tuple[Any, ...]:
    """A result's row in ``results``: its JSON columns as a results file's line has them
    (``metrics``: that column's text as the line held it, when the caller has it)."""
    if metrics is None and result.metrics.document is not None:
        metrics = json.dumps(dict(result.metrics.document), ensure_ascii=False)
    return (
        evaluation,
        result.lane,
        result.case,
        result.repeat,
        result.prompt_version,
        model,
        int(result.passed),
        result.status,
        result.question,
        result.expected,
        result.answer,
        json.dumps(result.checks_list(), ensure_ascii=False),
        metrics,
        _arm_json(result.arm),
        result.reason,
        None if result.judge is None else json.dumps(result.judge.to_dict()),
        now(),
    )


def _arm_json(arm: Arm) -> str | None:
    """An arm's column. An evaluation's 100,000 rows hold a handful of arms, each one object
    (``Arm.from_dict`` keeps them): its column is written once, found by the object itself
    (hashing an arm walks all its settings; the entry holds the arm, so its id is its own)."""
    known = _ARM_COLUMNS.get(id(arm))
    if known is None or known[0] is not arm:
        document = arm.document()
        text = None if document is None else json.dumps(document, ensure_ascii=False)
        if len(_ARM_COLUMNS) >= 64:
            _ARM_COLUMNS.clear()
        known = _ARM_COLUMNS[id(arm)] = (arm, text)
    return known[1]


_ARM_COLUMNS: dict[int, tuple[Arm, str | None]] = {}
