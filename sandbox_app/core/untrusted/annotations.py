"""What the one file reader (file_reader.py ``typed`` and ``check``) asks of a dataclass and
of a type annotation, worked out once: a results file's 100,000 lines are read by the same
few classes, and ``typing`` works the answers out anew at each call (a third of a line's
reading, measured)."""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Any


@functools.cache
def fields_of(cls: Any) -> tuple[tuple[str, Any, bool], ...]:
    """Each field of the dataclass ``cls``: its name, its annotation, whether it must be
    given (it has no default)."""
    hints, missing = typing.get_type_hints(cls), dataclasses.MISSING
    return tuple(
        (f.name, hints[f.name], f.default is missing and f.default_factory is missing)
        for f in dataclasses.fields(cls)
    )


@functools.cache
def shape_of(kind: Any) -> tuple[Any, tuple[Any, ...]]:
    """An annotation's origin and arguments (``list[int]`` → ``list``, ``(int,)``)."""
    return typing.get_origin(kind), typing.get_args(kind)


_PLAIN = (str, int, bool, type(None))  # JSON's values that a type annotation takes as they are


@functools.cache
def plain_types(kind: Any) -> frozenset[type]:
    """The value types ``kind`` takes as they are, with nothing to check inside: ``str | None``
    → str and None (a bool is never an ``int``: it is left to the whole check, which refuses
    it; a float is checked finite there, and an int where a float may be is left to it too)."""
    options = typing.get_args(kind) if shape_of(kind)[0] in (typing.Union, types.UnionType) else ()
    if float in options:
        return frozenset()
    return frozenset(k for k in options or (kind,) if k in _PLAIN)
