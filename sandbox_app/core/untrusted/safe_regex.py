"""Regular expressions a file supplies (a mock tool's ``regex`` rule, a ``regex`` expected
answer), compiled and matched so that no pattern can freeze the app.

Python's ``re`` backtracks: ``^(a+)+$`` on 34 characters runs for minutes, holding the GIL, and
ignores Ctrl+C. The third-party ``regex`` module matches the same syntax but takes a
``timeout``, checked while it matches (with the GIL released), so a match here ends within
:data:`MATCH_TIMEOUT_S` or raises :class:`MatchTooSlow`. Its compiler, though, expands counted
repetitions: ``(((a{100}){100}){100}){100}`` takes minutes to *compile*. So a pattern is first
read by Python's own parser (fast, and the syntax errors people know), and refused when it is
longer than :data:`MAX_PATTERN` or its repetitions multiply out past :data:`MAX_SIZE`.

Every file-supplied pattern goes through :func:`check` when the file is read and through
:func:`search` when it is matched; nothing else compiles one.
"""

from __future__ import annotations

import functools
import importlib
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported when a pattern is first compiled: ~15 ms kept off the start-up
    import regex

MAX_PATTERN = 1000  # characters; a rule or an answer pattern is a line, not a program
MAX_SIZE = 20_000  # pattern items with counted repetitions multiplied out (a{100} is 100)
MATCH_TIMEOUT_S = 0.1  # a sane pattern takes microseconds; a runaway one is cut here

# Python's regex parser: ``re._parser`` since 3.11 (its public alias ``sre_parse`` warns).
_parser: Any = importlib.import_module("re._parser")
_REPEATS = {_parser.MAX_REPEAT, _parser.MIN_REPEAT, getattr(_parser, "POSSESSIVE_REPEAT", None)}


class PatternError(ValueError):
    """A pattern that cannot be used; the message is one line saying why."""


class MatchTooSlow(Exception):
    """The match ran past :data:`MATCH_TIMEOUT_S` and was stopped."""


def check(pattern: str, ignore_case: bool = False) -> None:
    """Raise :class:`PatternError` (one line) if ``pattern`` cannot be used."""
    _compiled(pattern, ignore_case)


def search(pattern: str, text: str, ignore_case: bool = False) -> bool:
    """Whether ``pattern`` occurs in ``text``; :class:`PatternError` if it cannot be used,
    :class:`MatchTooSlow` if matching took longer than :data:`MATCH_TIMEOUT_S`."""
    try:
        return _compiled(pattern, ignore_case).search(text, timeout=MATCH_TIMEOUT_S) is not None
    except TimeoutError:
        raise MatchTooSlow(
            f"the pattern took longer than {MATCH_TIMEOUT_S:g} s on this text and was stopped"
        ) from None


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str, ignore_case: bool) -> regex.Pattern[str]:
    if len(pattern) > MAX_PATTERN:
        raise PatternError(f"is longer than {MAX_PATTERN:,} characters ({len(pattern):,})")
    flags = re.IGNORECASE if ignore_case else 0
    try:
        tree = _parser.parse(pattern, flags)
    except re.error as err:
        raise PatternError(f"is not a valid regex: {_one_line(err)}") from None
    if (size := _size(tree)) > MAX_SIZE:
        raise PatternError(
            f"repeats too much: its repetitions multiply out to {size:,} items "
            f"(at most {MAX_SIZE:,})"
        )
    import regex

    try:
        return regex.compile(pattern, regex.IGNORECASE if ignore_case else 0)
    except regex.error as err:  # a corner where the two dialects differ
        raise PatternError(f"is not a valid regex: {_one_line(err)}") from None


def _size(tree: Any) -> int:
    """The pattern's items with each counted repetition multiplied out (an open-ended one,
    ``*`` or ``{2,}``, counts its minimum: it is looped, not copied). Stops counting once
    past :data:`MAX_SIZE`, so a deep nest costs no more than a flat one."""
    total = 0
    for op, av in tree:
        if op in _REPEATS:
            low, high, inner = av
            times = low if high == _parser.MAXREPEAT else high
            total += max(times, 1) * _size(inner)
        else:
            total += 1 + sum(_size(sub) for sub in _subpatterns(av))
        if total > MAX_SIZE:
            return total
    return total


def _subpatterns(av: Any) -> list[Any]:
    """The nested patterns in an item's arguments (a group's body, a branch's arms, …)."""
    if isinstance(av, _parser.SubPattern):
        return [av]
    if isinstance(av, tuple | list):
        return [sub for part in av for sub in _subpatterns(part)]
    return []


def _one_line(err: Exception) -> str:
    return " ".join(str(err).split())
