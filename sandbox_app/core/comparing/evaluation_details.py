"""What ``history show ID`` (cli/history_command.py) adds to an evaluation's lanes and failed
runs: the optimization whose runs it holds (each candidate, refused or run, and the outcome,
read from the tables ``optimize`` wrote: optimizations and candidates), the people's grades
of its runs, their blind pairwise choices with each pair's win rate, and the judge's
agreement with the grades of its scenario's runs. Each as lines and as a part of
``--json``'s document.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sandbox_app.core.comparing.agreement import Agreement, win_rate
from sandbox_app.core.history.history_db import EvaluationRow, HistoryStore
from sandbox_app.core.history.history_grades import (
    choices,
    evaluation_grades,
    evaluation_judge,
    judged_grades,
)
from sandbox_app.core.history.history_optimizations import (
    OptimizationRow,
    of_evaluation,
    reflections,
)


def details(store: HistoryStore, row: EvaluationRow) -> tuple[dict[str, Any], list[str]]:
    document: dict[str, Any] = {}
    lines: list[str] = []
    found = of_evaluation(store, row.id)
    if found is not None:
        document["optimization"] = _optimization_document(store, found)
        lines += _optimization_lines(document["optimization"])
    grades = evaluation_grades(store, row.id)
    if grades:
        document["grades"] = [
            {"lane": lane, "case": case + 1, "repeat": repeat + 1, **grade.to_dict()}
            for (lane, case, repeat), grade in sorted(grades.items())
        ]
        lines.append(f"human grades ({len(grades)}):")
        lines += [
            f"  case {case + 1} · {lane} · repeat {repeat + 1}: {grade.words()}"
            for (lane, case, repeat), grade in sorted(grades.items())
        ]
    picks = choices(store, row.id)
    pairs: dict[tuple[str, str], list[str]] = {}
    for pick in picks:
        pairs.setdefault((pick.first, pick.second), []).append(pick.choice)
    if pairs:
        document["pairwise"] = [_pair_document(f, s, c) for (f, s), c in pairs.items()]
        lines.append("blind pairwise review:")
        lines += [f"  {win_rate(c).words(f, s)}" for (f, s), c in pairs.items()]
    judge = evaluation_judge(store, row.id)  # the judge of its runs: its grades alone count
    agreement = Agreement.of(judged_grades(store, row.scenario_path, judge)) if judge else None
    if agreement is not None and agreement.labels:
        document["judge_agreement"] = agreement_document(agreement)
        lines.append(f"judge's agreement with the human grades: {agreement.words()}")
    return document, lines


def _optimization_document(store: HistoryStore, found: OptimizationRow) -> dict[str, Any]:
    """The outcome as ``optimize`` stored it; before it finished, the reflections so far."""
    asked = reflections(store, found.id)
    return {
        "id": found.id,
        "finished": found.finished,
        "settings": found.settings,
        "outcome": found.outcome,
        "reflections": [
            {"candidate": r.number, "parent": r.parent, "failures": [c + 1 for c in r.failures],
             "reflection_model": r.model, "tokens_in": r.tokens_in, "tokens_out": r.tokens_out}
            for r in asked.values()
        ],
    }  # fmt: skip


def _optimization_lines(document: Mapping[str, Any]) -> list[str]:
    outcome = document["outcome"]
    state = "finished" if document["finished"] else "not finished (optimize resumes it)"
    lines = [f"optimization {document['id']}: {state}"]
    if not isinstance(outcome, dict):
        lines += [
            f"  candidate {r['candidate']} (from {r['parent']}): asked "
            f"{r['reflection_model']}, shown failing cases "
            + ", ".join(str(c) for c in r["failures"])
            for r in document["reflections"]
        ]
        return lines
    lines.append(f"  stopped: {outcome.get('stopped', '?')}")
    for c in outcome.get("candidates") or ():
        if not isinstance(c, dict):
            continue
        name = "the version improved" if c.get("number") == 0 else f"candidate {c.get('number')}"
        if c.get("refused"):
            lines.append(f"  {name} (from {c.get('parent')}): refused: {c['refused']}")
            continue
        rate = c.get("training_pass_rate")
        said = "not run" if not isinstance(rate, int | float) else f"{rate:.0%} of training cases"
        version = str(c.get("version") or "")[:8]
        lines.append(f"  {name} {version}: {said} ({c.get('passes')}/{c.get('runs')} runs)")
    winner = outcome.get("winner")
    if winner is None:
        lines.append("  no candidate did better than the version improved on the training cases")
    else:
        held = "better" if outcome.get("better") else "not shown better"
        lines.append(f"  winner: candidate {winner}, on the held-out cases {held}")
    return lines


def _pair_document(first: str, second: str, picks: list[str]) -> dict[str, Any]:
    won = win_rate(picks)
    return {
        "first": first,
        "second": second,
        "first_wins": won.first_wins,
        "second_wins": won.second_wins,
        "ties": won.ties,
        "first_win_rate": won.rate,
        "ci95": list(won.interval) if won.decided else None,
    }


def agreement_document(agreement: Agreement) -> dict[str, Any]:
    """The judge's agreement as ``--json`` carries it (``history show``, ``eval``)."""
    return {
        "kappa": agreement.kappa,
        "true_pass_rate": agreement.true_pass,
        "true_fail_rate": agreement.true_fail,
        "labels": agreement.labels,
        "calibrated": agreement.calibrated,
    }
