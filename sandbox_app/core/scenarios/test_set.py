"""A scenario's test set: its cases in the scenario file, imported from CSV or JSONL, and the
scenario each case runs as.

A case is a question with an expected answer (the scenario's rules: exact, contains, number,
regex), optionally its own search documents and its own scripted replies (so the offline
model can answer every case). Import maps columns by header: ``question``, ``answer`` (or
``expected``), ``match``, ``tolerance``, ``documents`` (one per line, or `` | ``-separated in
CSV), ``replies`` (JSONL only), the trajectory checks (``checks``, a JSON object, and the
columns ``tools_called``, ``order``, ``never``, ``max_steps``), ``rubric`` (what a judge
grades the answer by) and ``judge_replies`` (the offline judge's verdicts, JSONL only); every
other column is one of the case's ``{{variables}}`` (core/react_format/variables.py). A bad
row is one line naming it.
"""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from pathlib import Path
from typing import Any

from sandbox_app.core.scenarios.scenario import MATCH_RULES, EvalCase, Scenario
from sandbox_app.core.scenarios.scenario_fields import Fields, ScenarioError, read_expected
from sandbox_app.core.scenarios.trajectory_spec import names_in
from sandbox_app.core.untrusted.file_reader import (
    MAX_DEPTH,
    ReadError,
    display_name,
    nesting,
    parse_json,
    read_text,
)

MAX_CASES = 10_000


def cases_to_list(cases: tuple[EvalCase, ...]) -> list[dict[str, Any]]:
    out = []
    for case in cases:
        item: dict[str, Any] = {
            "question": case.question,
            "expected": {
                "answer": case.expected.answer,
                "match": case.expected.match,
                "tolerance": case.expected.tolerance,
            },
        }
        if case.documents is not None:
            item["documents"] = list(case.documents)
        if case.replies:
            item["replies"] = list(case.replies)
        if case.variables:
            item["variables"] = dict(case.variables)
        if not case.checks.empty:
            item["checks"] = case.checks.to_dict()
        if case.rubric:  # judged answers: only when the case has its own
            item["rubric"] = case.rubric
        if case.judge_replies:
            item["judge_replies"] = list(case.judge_replies)
        out.append(item)
    return out


def cases_from_list(items: list[Any]) -> tuple[EvalCase, ...]:
    if len(items) > MAX_CASES:
        raise ScenarioError(f'"test_set" holds {len(items):,} cases; at most {MAX_CASES:,}.')
    return tuple(_case(item, f"test_set[{i}]") for i, item in enumerate(items))


def case_from_row(row: dict[str, Any], where: str) -> EvalCase:
    """One case from a flat row (an import's, a model's proposal) by the file's rules; a
    ScenarioError (one line naming ``where``) when it is not one."""
    return _case(_normalised(row), where)


def _case(data: Any, where: str) -> EvalCase:
    fields = Fields(data, where)
    question = fields.get("question", str, "").strip()
    if not question:
        raise ScenarioError(f'"{where}.question" is empty.')
    expected = read_expected(fields.get("expected", dict, {}), f"{where}.expected")
    assert expected is not None
    if not expected.answer:
        raise ScenarioError(f'"{where}.expected.answer" is empty.')
    documents = fields.strings("documents", []) if "documents" in data else None
    return EvalCase(
        question,
        expected,
        tuple(documents) if documents is not None else None,
        tuple(fields.strings("replies", [])),
        fields.variables(),
        fields.checks(),
        rubric=fields.get("rubric", str, "").strip(),
        judge_replies=tuple(fields.strings("judge_replies", [])),
    )


def scenario_for_case(scenario: Scenario, case: EvalCase) -> Scenario:
    """The scenario as it runs for ``case``: its question, expected answer, documents, replies."""
    # A case with replies of its own answers its own question; one without keeps the
    # scenario's script, which answers another question: the offline model says so.
    script = (
        replace(scenario.script, replies=case.replies, question=case.question, by_prompt=())
        if case.replies
        else scenario.script
    )
    return replace(
        scenario,
        question=case.question,
        expected=case.expected,
        documents=case.documents if case.documents is not None else scenario.documents,
        script=script,
        variables={**scenario.variables, **case.variables},  # the case's own win
    )


def asked_questions(scenario: Scenario) -> list[str]:
    """Each case's question as asked (its ``{{variables}}`` filled): the rows of a test set's
    grid and report, so two cases of one template stay apart."""
    return [scenario_for_case(scenario, case).asked_question for case in scenario.test_set]


def undefined_in_cases(scenario: Scenario) -> str | None:
    """One line naming the first case whose run would refuse an undefined ``{{variable}}``
    (``eval`` checks every case before the first run); None when none would."""
    for number, case in enumerate(scenario.test_set, start=1):
        problem = scenario_for_case(scenario, case).undefined_variables()
        if problem:
            return f"case {number}: {problem}"
    return None


MAX_IMPORT_BYTES = 50 * 1024 * 1024


def import_file(path: Path) -> tuple[EvalCase, ...]:
    """Cases from a CSV (by its suffix) or JSONL file, read as every file is
    (core/untrusted/file_reader.py); ScenarioError names the file and the row of a bad one."""
    kind = "csv" if path.suffix.lower() == ".csv" else "jsonl"
    try:
        text = read_text(path, MAX_IMPORT_BYTES, "a test set")
    except ReadError as err:
        raise ScenarioError(str(err)) from None
    try:
        return import_cases(text, kind)
    except ScenarioError as err:
        raise ScenarioError(f"{display_name(path)}, {err}") from None


def import_cases(text: str, kind: str) -> tuple[EvalCase, ...]:
    """Cases from a CSV or JSONL file's text; ScenarioError names the row of a bad one."""
    rows = _csv_rows(text) if kind == "csv" else _jsonl_rows(text)
    cases = []
    for number, row in rows:
        try:
            cases.append(_case(_normalised(row), "row"))
        except ScenarioError as err:
            detail = str(err).replace('"row.', '"')  # row 3: "question" is empty.
            raise ScenarioError(f"row {number}: {detail}") from None
    if not cases:
        raise ScenarioError("the file holds no cases (a header and at least one row).")
    return tuple(cases)


def _csv_rows(text: str) -> list[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    rows: list[tuple[int, dict[str, Any]]] = []
    reading = 1  # the row being read, for a csv.Error's message
    try:
        headers = [h.strip().lower() for h in reader.fieldnames or []]
        if "question" not in headers or not {"answer", "expected"} & set(headers):
            raise ScenarioError('the header must name a "question" and an "answer" column.')
        reading = 2
        for i, raw in enumerate(reader, start=2):  # row 1 is the header
            reading = i + 1
            row: dict[str, Any] = {_key(k): (v or "") for k, v in raw.items() if k}
            if "documents" in row:
                row["documents"] = [d.strip() for d in row["documents"].split("|") if d.strip()]
            rows.append((i, row))
    except csv.Error as err:  # e.g. a field over the csv module's 131,072 characters
        raise ScenarioError(f"row {reading}: {err}.") from None
    return rows


def _jsonl_rows(text: str) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    for i, line in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        if not line.strip():
            continue
        if nesting(line) > MAX_DEPTH:
            raise ScenarioError(f"row {i}: nests its JSON too deeply to be a case.")
        try:
            row = parse_json(line, f"row {i}", "a case")
        except ReadError:
            raise ScenarioError(f"row {i}: not a JSON object.") from None
        if not isinstance(row, dict):
            raise ScenarioError(f"row {i}: not a JSON object.")
        rows.append((i, {_key(str(k)): v for k, v in row.items()}))
    return rows


def _normalised(row: dict[str, Any]) -> dict[str, Any]:
    """A flat row (answer, match, tolerance columns) in the scenario file's case shape."""
    expected = row.get("expected")
    if not isinstance(expected, dict):
        answer = row.get("answer", expected if expected is not None else "")
        expected = {"answer": answer, "match": row.get("match") or "contains"}
        tolerance = row.get("tolerance")
        if tolerance not in (None, ""):
            try:
                expected["tolerance"] = float(tolerance)
            except (TypeError, ValueError):
                raise ScenarioError(f'"tolerance" must be a number (got {tolerance!r}).') from None
    if expected.get("match") not in MATCH_RULES:
        raise ScenarioError(f'"match" must be one of {", ".join(MATCH_RULES)}.')
    case = {"question": row.get("question", ""), "expected": expected}
    for key in ("documents", "replies", "rubric", "judge_replies"):
        if key in row:
            case[key] = row[key]
    checks = _checks(row)
    if checks:
        case["checks"] = checks
    # Every other column is a {{variable}} of the case; an empty CSV cell (or a JSON null)
    # gives none, so the scenario's value holds there.
    variables = row.get("variables")
    variables = dict(variables) if isinstance(variables, dict) else {}
    for key, value in row.items():
        if key not in _COLUMNS and value not in ("", None):
            variables[key] = value
    if variables:
        case["variables"] = variables
    return case


def _checks(row: dict[str, Any]) -> dict[str, Any]:
    """The row's trajectory checks: a ``checks`` object (JSON text in a CSV cell), then the
    flat columns over it — ``tools_called`` and ``never`` (lists, or names separated by commas,
    ``|`` or spaces), ``order``, ``max_steps``; an empty cell says nothing."""
    checks = row.get("checks")
    if isinstance(checks, str):
        if not checks.strip():
            checks = None
        else:
            try:
                checks = parse_json(checks, '"checks"', "trajectory checks")
            except ReadError:
                raise ScenarioError('"checks" must be a JSON object.') from None
    if checks is not None and not isinstance(checks, dict):
        raise ScenarioError('"checks" must be a JSON object.')
    out = dict(checks or {})
    for key in ("tools_called", "never"):
        value = row.get(key)
        if isinstance(value, str):
            value = names_in(value) or None
        if value is not None:
            out[key] = value
    if row.get("order") not in (None, ""):
        out["order"] = row["order"]
    steps = row.get("max_steps")
    if isinstance(steps, str) and steps.strip():
        if not steps.strip().isdigit():
            raise ScenarioError(f'"max_steps" must be a whole number (got {steps!r}).')
        steps = int(steps)
    if steps not in (None, ""):
        out["max_steps"] = steps
    return out


# The columns an import reads as the case itself (any case: "Question"); every other one is a
# variable, its name kept as written ({{City}} is not {{city}}).
_COLUMNS = (
    *("question", "answer", "expected", "match", "tolerance"),
    *("documents", "replies", "variables"),
    *("checks", "tools_called", "order", "never", "max_steps"),  # trajectory checks
    *("rubric", "judge_replies"),  # judged answers: the case's rubric, the offline verdicts
)


def _key(header: str) -> str:
    name = header.strip()
    return name.lower() if name.lower() in _COLUMNS else name
