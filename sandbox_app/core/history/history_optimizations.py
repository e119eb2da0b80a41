"""Optimizations in the history database: what ``optimize`` keeps so that it can stop at any
moment and go on (schema step 6, history_schema.py).

An optimization is its settings (a JSON object: the key a resume finds it by, with the
scenario file), the evaluation its runs are stored in (an ordinary evaluation: ``history
show`` and the matrix read it like any other), and, once finished, its outcome. Each
reflection is a row of ``candidates``: the parent it was asked about, the failing cases it
was shown, the reflection model and its whole reply. The candidate itself (a prompt version,
or the reason it was refused) is read from the reply again, by the same rules, so the
database holds the evidence and never a second copy of a decision. No Qt here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.history.history_rows import MAX_COUNT, json_of, whole, words
from sandbox_app.core.history.history_schema import HistoryError, now

MAX_REPLY = 200_000  # characters of a reflection's reply kept (a template and its reasons)


@dataclass(frozen=True)
class Reflection:
    """One reflection asked: of candidate ``parent``, shown ``failures`` (case numbers)."""

    number: int  # the candidate it made (1, 2, …; 0 is the version being improved)
    parent: int
    failures: tuple[int, ...]
    model: str  # the reflection model, as its lane is written
    reply: str
    tokens_in: int = 0
    tokens_out: int = 0


@dataclass(frozen=True)
class OptimizationRow:
    id: int
    evaluation: int | None
    settings: dict[str, Any]
    finished: bool
    outcome: dict[str, Any] | None


def settings_text(settings: dict[str, Any]) -> str:
    """The settings as stored: canonical JSON, so that equal settings are equal text."""
    return json.dumps(settings, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def begin(
    store: HistoryStore, title: str, place: str, settings: dict[str, Any], evaluation: int
) -> int:
    return store.execute(
        "INSERT INTO optimizations (started, scenario_title, scenario_path, evaluation_id, "
        "settings) VALUES (?, ?, ?, ?, ?)",
        (now(), title, place, evaluation, settings_text(settings)),
    )


def unfinished(store: HistoryStore, place: str, settings: dict[str, Any]) -> OptimizationRow | None:
    """The newest optimization of ``place`` with these very settings that has not finished."""
    rows = store.read(
        "SELECT id FROM optimizations WHERE scenario_path = ? AND settings = ? "
        "AND finished IS NULL ORDER BY id DESC LIMIT 1",
        (place, settings_text(settings)),
    )
    return optimization(store, int(rows[0][0])) if rows else None


def optimization(store: HistoryStore, number: int) -> OptimizationRow:
    rows = store.read(
        "SELECT id, evaluation_id, settings, finished, outcome FROM optimizations WHERE id = ?",
        (number,),
    )
    if not rows:
        raise HistoryError(f"no optimization {number} in {store.path}")
    key, evaluation, settings, finished, outcome = rows[0]
    where = f"optimization {number}"
    found = json_of(settings, f"{where}'s settings")
    if not isinstance(found, dict):
        raise HistoryError(f"{where}'s settings are not a JSON object")
    ended = json_of(outcome, f"{where}'s outcome") if outcome is not None else None
    return OptimizationRow(
        whole(key, where),
        None if evaluation is None else whole(evaluation, f"{where}'s evaluation"),
        found,
        finished is not None,
        ended if isinstance(ended, dict) else None,
    )


def add_reflection(store: HistoryStore, optimization_id: int, r: Reflection) -> None:
    store.execute(
        "INSERT OR REPLACE INTO candidates (optimization_id, number, parent, failures, "
        "reflection_model, reply, tokens_in, tokens_out, recorded) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            optimization_id,
            r.number,
            r.parent,
            json.dumps(list(r.failures)),
            r.model,
            r.reply[:MAX_REPLY],  # the caller cut it already: read back as it was read
            r.tokens_in,
            r.tokens_out,
            now(),
        ),
    )


def reflections(store: HistoryStore, optimization_id: int) -> dict[int, Reflection]:
    """Every reflection of an optimization by its candidate's number; a row that is not as
    the app wrote it is an error (a resume must not go on from evidence it cannot read)."""
    found: dict[int, Reflection] = {}
    for number, parent, failures, model, reply, tokens_in, tokens_out in store.read(
        "SELECT number, parent, failures, reflection_model, reply, tokens_in, tokens_out "
        "FROM candidates WHERE optimization_id = ? ORDER BY number",
        (optimization_id,),
    ):
        where = f"optimization {optimization_id}'s candidate {number}"
        cases = json_of(failures, f"{where}'s failures")
        if not isinstance(cases, list):
            raise HistoryError(f"{where}'s failures are not a list")
        key = whole(number, where, MAX_COUNT)
        found[key] = Reflection(
            key,
            whole(parent, f"{where}'s parent", MAX_COUNT),
            tuple(whole(c, f"{where}'s failures", MAX_COUNT) for c in cases),
            words(model, f"{where}'s model") or "",
            words(reply, f"{where}'s reply") or "",
            whole(tokens_in, f"{where}'s tokens"),
            whole(tokens_out, f"{where}'s tokens"),
        )
    return found


def finish(
    store: HistoryStore,
    optimization_id: int,
    outcome: dict[str, Any],
    evaluation: int,
    lanes: dict[str, str],
) -> None:
    """The outcome kept, and the evaluation's lanes named (each candidate that ran: its lane
    and its model), as ``history list`` shows an evaluation's."""
    lanes_json = json.dumps([{"label": k, "model": v} for k, v in lanes.items()])
    store.execute("UPDATE evaluations SET lanes = ? WHERE id = ?", (lanes_json, evaluation))
    store.execute(
        "UPDATE optimizations SET finished = ?, outcome = ? WHERE id = ?",
        (now(), json.dumps(outcome, ensure_ascii=False), optimization_id),
    )
