"""Does a final answer match the scenario's expected answer? Four rules a scenario chooses from.

``exact`` (whitespace and case folded), ``contains`` (case-folded substring), ``number``
(the first number in the answer equals the expected number within a tolerance; ``$1,680 per
year`` is 1680) and ``regex`` (searched, case-insensitive, through
``core/untrusted/safe_regex.py``: a
search that runs past its time limit is stopped and the verdict is :data:`COULD_NOT_CHECK`,
which never counts as a pass).
"""

from __future__ import annotations

import functools
import math
import re
from typing import Final, Literal

from sandbox_app.core.scenarios.scenario import Expected
from sandbox_app.core.untrusted import safe_regex

COULD_NOT_CHECK: Final = "could not check"

_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+]?\.\d+")


def first_number(text: str) -> float | None:
    match = _NUMBER.search(text)
    return float(match.group().replace(",", "")) if match else None


def matches(answer: str | None, expected: Expected | None) -> bool | None:
    """True or False, or None when there is nothing to compare (no expected answer). An answer
    that could not be checked has not passed."""
    found = verdict(answer, expected)
    return False if found == COULD_NOT_CHECK else found


def run_verdict(answer: str | None, expected: Expected | None) -> bool | None:
    """A single run's verdict as its prompt version's pass rate counts it (the window's runs,
    ``run``'s): None with nothing to check, or with no answer (stopped, failed: not a wrong
    answer)."""
    return matches(answer, expected) if answer is not None else None


def verdict(
    answer: str | None, expected: Expected | None
) -> bool | Literal["could not check"] | None:
    """As :func:`matches`, but a ``regex`` search stopped at its time limit is
    :data:`COULD_NOT_CHECK` (what the comparison table shows), not a plain "no"."""
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
    found = _regex_found(expected.answer, answer)
    return COULD_NOT_CHECK if found is None else found


# The comparison table asks again for every repeat on every update: a pattern that runs to
# its time limit pays it once per answer, not once per redraw.
@functools.lru_cache(maxsize=1024)
def _regex_found(pattern: str, answer: str) -> bool | None:
    """Whether the pattern occurs; None if the search was stopped at its time limit."""
    try:
        return safe_regex.search(pattern, answer, ignore_case=True)
    except safe_regex.MatchTooSlow:
        return None
    except safe_regex.PatternError:  # a file's pattern is checked when read; this is code's
        return False


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()
