"""A large evaluation in a temporary history database, for the results matrix's tests and its
measurement: ``cases`` × four arms (two prompt versions × two models) × ``repeats``, written
through the database's own schema in one transaction (``HistoryStore.add_result`` is one
transaction a run: minutes for 40,000), with every column a stored result has (no traces:
the matrix never reads one). Built on top of it, the small evaluations the tests read."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.history.history_schema import now
from sandbox_app.core.results.eval_result import Arm, EvalResult

ARMS = tuple(
    (f"lane {i + 1}", version, model)
    for i, (version, model) in enumerate(
        [("v-brief", "good-7b"), ("v-brief", "small-1b"), ("v-grounded", "good-7b"),
         ("v-grounded", "small-1b")]
    )
)  # fmt: skip


def passes(case: int, arm: int, repeat: int) -> bool:
    """A pattern with every kind of cell: all pass, none, and some of the repeats."""
    return (case * 7 + arm * 3 + repeat * (case % 3)) % 5 < 3


FILLER = "because the figures given in the question add up that way once checked again"


def big_evaluation(
    path: Path, cases: int, repeats: int = 1, answer_chars: int = 0
) -> tuple[HistoryStore, int]:
    """``answer_chars``: each answer made that long with words (the benchmark's 240)."""
    store = HistoryStore(path)
    lanes = {label: model for label, _, model in ARMS}
    evaluation = store.begin_evaluation("Big", "/big.json", lanes, cases, repeats, "eval")
    store.close()
    rows = []
    for case in range(cases):
        for number, (lane, version, model) in enumerate(ARMS):
            arm = json.dumps(Arm(version, "openai", "http://h/v1", model).to_dict())
            for repeat in range(repeats):
                ok = passes(case, number, repeat)
                answer = f"answer {case + 1} from {model} on {version}, repeat {repeat + 1}"
                if answer_chars:
                    answer = (answer + f" {FILLER}" * (answer_chars // len(FILLER) + 1))[
                        :answer_chars
                    ]
                rows.append((evaluation, lane, case, repeat, version, model, int(ok), "done",
                             f"question {case + 1}", "yes", answer, "[]", None, arm, None,
                             None, now()))  # fmt: skip
    db = sqlite3.connect(path)
    with db:
        db.executemany(
            "INSERT INTO results (evaluation_id, lane, case_no, repeat, prompt_version, model, "
            "passed, status, question, expected, answer, checks, metrics, arm, reason, judge, "
            "recorded) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    db.close()
    store = HistoryStore(path)
    store.finish_evaluation(evaluation)
    return store, evaluation


def small_evaluation(
    path: Path, cells: dict[tuple[int, str], list[bool]]
) -> tuple[HistoryStore, int]:
    """``cells``: (case, prompt version) → each repeat's verdict; two lanes (one a version),
    every run through ``HistoryStore.add_result`` as the window and ``eval`` write them."""
    store = HistoryStore(path)
    versions = sorted({version for _, version in cells})
    cases = max(case for case, _ in cells) + 1
    lanes = {f"lane {version}": "good-7b" for version in versions}
    evaluation = store.begin_evaluation("Small", "/small.json", lanes, cases, 5, "window")
    for (case, version), verdicts in sorted(cells.items()):
        arm = Arm(version, "openai", "http://h/v1", "good-7b")
        for repeat, ok in enumerate(verdicts):
            store.add_result(
                evaluation, small_result(case, version, repeat, ok, arm), [], "good-7b"
            )
    store.finish_evaluation(evaluation)
    return store, evaluation


def small_result(case: int, version: str, repeat: int, ok: bool, arm: Arm) -> EvalResult:
    return EvalResult(
        f"lane {version}",
        case,
        repeat,
        ok,
        question=QUESTIONS[case % len(QUESTIONS)],
        expected="Paris",
        arm=arm,
        status="done",
        answer=f"{'Paris' if ok else 'Lyon'} (repeat {repeat + 1} of {version}), " + "x" * 300,
    )


QUESTIONS = ("What is the capital of France?", "Which city hosts the Louvre?", "<b>Bold</b> & co?")
