"""The train/held-out split of a test set: which cases the optimizer learns from, and which
it keeps back to judge the winner on.

Deterministic by the seed and each case's identity (its question as asked with its expected
answer, as core/comparing pairs cases), never by its position: reordering the test set or
adding a case moves no other case between the two halves' ranking. Each case's rank is the
sha256 of the seed and its identity; the first ``round(fraction × n)`` by rank are held out
(at least one on each side when there are two cases or more). The same seed gives the same
split on every machine.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_HELD_OUT = 0.5  # a verdict needs about 5 cases that all improve: half of 10 or more


@dataclass(frozen=True)
class Split:
    train: tuple[int, ...]  # case numbers (0-based), in test-set order
    held_out: tuple[int, ...]


def case_identity(question: str, expected: str) -> str:
    return f"{question}\x00{expected}"


def split_cases(identities: Sequence[str], fraction: float, seed: int) -> Split:
    """``identities``: each case's :func:`case_identity`, in test-set order."""
    if not 0 < fraction < 1:
        raise ValueError(f"the held-out share must be between 0 and 1, not {fraction}")
    n = len(identities)
    ranked = sorted(range(n), key=lambda i: (_rank(seed, identities[i]), i))
    held = round(fraction * n)
    if n >= 2:
        held = min(max(held, 1), n - 1)
    kept_back = set(ranked[:held])
    return Split(
        tuple(i for i in range(n) if i not in kept_back),
        tuple(i for i in range(n) if i in kept_back),
    )


def _rank(seed: int, identity: str) -> str:
    return hashlib.sha256(f"{seed}\x00{identity}".encode()).hexdigest()
