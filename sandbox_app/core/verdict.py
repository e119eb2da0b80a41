"""Does a final answer match the scenario's expected answer? Four rules a scenario chooses from.

``exact`` (whitespace and case folded), ``contains`` (case-folded substring), ``number``
(the first number in the answer equals the expected number within a tolerance; ``$1,680 per
year`` is 1680) and ``regex`` (searched, case-insensitive).
"""

from __future__ import annotations

import math
import re

from sandbox_app.core.scenario import Expected

_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+]?\.\d+")


def first_number(text: str) -> float | None:
    match = _NUMBER.search(text)
    return float(match.group().replace(",", "")) if match else None


def matches(answer: str | None, expected: Expected | None) -> bool | None:
    """True or False, or None when there is nothing to compare (no expected answer)."""
    if expected is None:
        return None
    if answer is None:
        return False
    if expected.match == "exact":
        return _fold(answer) == _fold(expected.answer)
    if expected.match == "contains":
        return _fold(expected.answer) in _fold(answer)
    if expected.match == "number":
        got, want = first_number(answer), first_number(expected.answer)
        if got is None or want is None:
            return False
        return math.isclose(got, want, rel_tol=0.0, abs_tol=expected.tolerance)
    try:
        return re.search(expected.answer, answer, re.IGNORECASE) is not None
    except re.error:
        return False


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()
