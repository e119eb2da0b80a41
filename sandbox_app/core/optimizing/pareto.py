"""Which candidates survive and which is improved next: GEPA's Pareto idea (Agrawal et al.
2025, "GEPA: Reflective Prompt Evolution Can Outperform Reinforcement Learning").

Each candidate has a pass rate on each training case. A candidate is on the front when it is
the best (ties included) on at least one case and no other candidate is at least as good on
every case and better on one. The next parent is drawn from the front, each member weighted
by the number of cases it is best on, by a generator seeded with the optimization's seed and
the reflection's number: the same seed draws the same parents, and a resumed optimization
draws what an uninterrupted one would. Keeping a front rather than only the best on average
keeps a candidate that alone solved some case (a lesson the best one lacks) to learn from.

The winner is the candidate with the highest mean pass rate over the training cases (the
earlier on a tie: fewer edits), and only when it is above the version being improved.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

Scores = Mapping[int, Mapping[int, float]]  # candidate → training case → pass rate


def mean(rates: Mapping[int, float], cases: Sequence[int]) -> float:
    return sum(rates.get(case, 0.0) for case in cases) / len(cases) if cases else 0.0


def front(scores: Scores, cases: Sequence[int]) -> list[int]:
    """The candidates on the front, in number order."""
    best_on = _best_on(scores, cases)
    alive = [c for c in sorted(scores) if best_on[c]]
    return [c for c in alive if not any(_dominates(scores[o], scores[c], cases) for o in alive)]


def parent(scores: Scores, cases: Sequence[int], seed: int, number: int) -> int | None:
    """The candidate reflection ``number`` improves: drawn from the front's members that
    still fail a case; None when none does (every training case passes)."""
    best_on = _best_on(scores, cases)
    members = [c for c in front(scores, cases) if any(scores[c].get(k, 0.0) < 1.0 for k in cases)]
    if not members:
        return None
    weights = [max(1, best_on[c]) for c in members]
    return random.Random(f"{seed}:{number}").choices(members, weights)[0]


def winner(scores: Scores, cases: Sequence[int]) -> int:
    """The candidate with the highest mean training pass rate, the earliest on a tie."""
    return max(sorted(scores), key=lambda c: (mean(scores[c], cases), -c))


def _best_on(scores: Scores, cases: Sequence[int]) -> dict[int, int]:
    """For each candidate, the number of cases it is best on (ties count for each)."""
    counts = dict.fromkeys(scores, 0)
    for case in cases:
        top = max(rates.get(case, 0.0) for rates in scores.values())
        for c, rates in scores.items():
            counts[c] += rates.get(case, 0.0) == top
    return counts


def _dominates(a: Mapping[int, float], b: Mapping[int, float], cases: Sequence[int]) -> bool:
    pairs = [(a.get(k, 0.0), b.get(k, 0.0)) for k in cases]
    return all(x >= y for x, y in pairs) and any(x > y for x, y in pairs)
