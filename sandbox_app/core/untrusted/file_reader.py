"""The one reader for everything the app reads that it did not just make itself: scenarios,
recordings, evaluation results (``eval --resume``), response-cache entries, test-set imports,
and stored settings (prices, kept edits, replay pace, zoom).

Any of these may be damaged or hostile, so every one is read the same way:

- only a regular file: it is opened without blocking (a FIFO would otherwise wait for a writer
  forever) and checked with ``fstat`` on the open descriptor, so a device such as /dev/zero
  or a pipe is refused before a byte is read;
- a size limit counted while reading, never trusted from ``st_size`` (/dev/zero, /proc files
  and files still growing report a size that is not what a read returns);
- UTF-8 text, with or without a byte-order mark (Windows editors write one);
- JSON nesting measured before parsing: the json module recurses once per level, so 5,000
  brackets would be a RecursionError, and whatever walks the value afterwards recurses too;
- values checked against the types the app uses (:func:`typed`, :func:`check`), so nothing
  downstream meets a number where it expects text.

Every failure is a :class:`ReadError` whose message is one line naming the file (or row, or
line) and the field.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import stat
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, Literal, TypeVar, Union

from sandbox_app.core.untrusted.annotations import fields_of, plain_types, shape_of
from sandbox_app.core.untrusted.outside_text import clean_value, may_hold_surrogates

T = TypeVar("T")

# Far deeper than anything the app writes (a recording's request bodies with tool schemas are
# about 10 levels), far shallower than where the json module meets Python's recursion limit.
MAX_DEPTH = 100
_CHUNK = 1 << 20
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO opens at once instead of waiting for a writer
    | getattr(os, "O_NOCTTY", 0)  # a terminal device never becomes the controlling one
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)  # Windows: bytes as they are
)


class ReadError(ValueError):
    """Something read that cannot be used, in one line naming the file and the field."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line of at most ``limit`` characters (a message shown or printed)."""
    # splitlines() knows every line break (\r, \x85, \u2028, …), not only \n.
    flat = " ".join(text.splitlines())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def display_name(path: str | Path) -> str:
    path = Path(path)
    return one_line(path.name or str(path), 120)


def read_bytes(path: str | Path, limit: int, what: str) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; ``what`` names what it should
    be ("a scenario") in the messages."""
    return b"".join(_chunks(path, limit, what))


def read_text(path: str | Path, limit: int, what: str) -> str:
    return decode(read_bytes(path, limit, what), display_name(path))


def read_json(path: str | Path, limit: int, what: str) -> Any:
    return parse_json(read_text(path, limit, what), display_name(path), what)


def read_stream(stream: BinaryIO, limit: int, what: str, name: str) -> bytes:
    """The bytes of an open stream (standard input, ``-`` on the command line) up to its end,
    at most ``limit`` of them: counted as read, as for a file (a pipe has no size to check)."""
    chunks: list[bytes] = []
    total = 0
    try:
        while chunk := stream.read(min(_CHUNK, limit + 1 - total)):
            total += len(chunk)
            if total > limit:
                raise ReadError(
                    f"{name} is too large (over {_size(limit)}); {what} is at most {_size(limit)}."
                )
            chunks.append(chunk)
    except OSError as err:
        raise ReadError(f"Cannot read {name}: {err.strerror or err}.") from None
    return b"".join(chunks)


def iter_lines(path: str | Path, limit: int, what: str) -> Iterator[bytes]:
    """A file's lines as bytes (without the line end), read as they come, the whole file at
    most ``limit`` bytes. Decoding is per line (:func:`json_line`), so one damaged line (a
    process killed inside a character) spoils only itself."""
    partial: list[bytes] = []  # the line being read, in pieces (never copied chunk by chunk)
    for chunk in _chunks(path, limit, what):
        first, *lines = chunk.split(b"\n")
        partial.append(first)
        if lines:
            yield b"".join(partial)
            yield from lines[:-1]
            partial = [lines[-1]]
    if tail := b"".join(partial):
        yield tail


def decode(raw: bytes, name: str) -> str:
    try:
        # "utf-8-sig": a leading byte-order mark is dropped, not refused.
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ReadError(f"{name} is not a text (UTF-8) file (byte {err.start:,}).") from None


def json_line(raw: bytes, name: str, what: str) -> Any:
    """One line of a JSON-lines file; ``name`` says which ("results.jsonl line 3")."""
    return parse_json(decode(raw.rstrip(b"\r"), name), name, what)


def parse_json(text: str, name: str, what: str, max_depth: int = MAX_DEPTH) -> Any:
    """JSON text (a file's, a line's, a setting's, a server's) into Python values, never
    recursing deeper than ``max_depth`` levels; lone surrogates in strings as U+FFFD."""
    # Fewer brackets than the limit cannot nest past it: counted at C speed, this spares a
    # stream's every small chunk the scan.
    deep = text.count("[") + text.count("{") > max_depth and nesting(text, max_depth) > max_depth
    if deep:
        raise ReadError(f"{name} nests its JSON too deeply to be {what}.")
    try:
        value = json.loads(text)
        return clean_value(value) if may_hold_surrogates(text) else value
    except json.JSONDecodeError as err:
        raise ReadError(
            f"{name} is not valid JSON: {err.msg} at line {err.lineno}, column {err.colno}."
        ) from None
    except ValueError as err:  # e.g. an integer of more than 4,300 digits
        raise ReadError(f"{name} is not valid JSON: {err}.") from None
    except RecursionError:  # not reached after the depth check; kept as a last guard
        raise ReadError(f"{name} nests its JSON too deeply to be {what}.") from None


# A string (its escapes inside it, so \" is never its end; one never closed runs to the end,
# so every quote starts a match: linear), then any character but a bracket: what is left
# decides how deep JSON nests. At C speed: a 150 KB trace line took 24 ms token by token.
_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")


def nesting(text: str, stop_above: int = MAX_DEPTH) -> int:
    """How deeply ``text``'s brackets nest outside strings (stops counting past
    ``stop_above``); for broken JSON an estimate, which the parser then refuses anyway."""
    depth = deepest = 0
    for bracket in _NOT_BRACKETS.sub("", _STRINGS.sub("", text)):
        if bracket in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop_above:
                    break
        else:
            depth -= 1
    return deepest


def _chunks(path: str | Path, limit: int, what: str) -> Iterator[bytes]:
    name = display_name(path)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise ReadError(f"{name} does not exist.") from None
    except PermissionError:
        raise ReadError(f"Cannot read {name}: permission denied.") from None
    except IsADirectoryError:
        raise ReadError(f"{name} is a folder, not {what}.") from None
    except OSError as err:
        raise ReadError(f"Cannot read {name}: {err.strerror or err}.") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ReadError(f"{name} is a folder, not {what}.")
        if not stat.S_ISREG(info.st_mode):
            raise ReadError(f"{name} is not a regular file (a device, pipe or socket), not read.")
        if info.st_size > limit:  # refused at once; the count below is what holds
            raise ReadError(
                f"{name} is too large ({_size(info.st_size)}); {what} is at most {_size(limit)}."
            )
        total = 0
        while chunk := os.read(fd, min(_CHUNK, limit + 1 - total)):
            total += len(chunk)
            if total > limit:
                raise ReadError(
                    f"{name} is too large (over {_size(limit)}); {what} is at most {_size(limit)}."
                )
            yield chunk
    except OSError as err:
        raise ReadError(f"Cannot read {name}: {err.strerror or err}.") from None
    finally:
        os.close(fd)


def _size(count: int) -> str:
    return f"{count / 1e6:.1f} MB" if count >= 1_000_000 else f"{count:,} bytes"


# ---- typed values ----------------------------------------------------------------------


def typed(cls: type[T], data: Any, where: str) -> T:
    """The dataclass ``cls`` from a JSON object, every field checked against its annotation
    (keys it does not have are ignored; a missing field without a default is an error)."""
    if not isinstance(data, dict):
        raise ReadError(f'"{where}" must be an object (got {shown(data)}).')
    values: dict[str, Any] = {}
    for name, hint, required in fields_of(typing.cast(Any, cls)):
        if name in data:
            values[name] = check(data[name], hint, f"{where}.{name}")
        elif required:
            raise ReadError(f'"{where}.{name}" is missing.')
    return cls(**values)


def check(value: Any, kind: Any, where: str) -> Any:
    """``value`` if it is of the type annotation ``kind`` (as JSON gives it: a list for a
    tuple, which is returned as a tuple); else a ReadError naming ``where``."""
    if kind is Any or type(value) in plain_types(kind):  # a str, int, bool or None as it is
        return value
    origin, args = shape_of(kind)
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:  # the common case, without a failed try
            return None
        for option in args:
            try:
                return check(value, option, where)
            except ReadError:
                continue
    elif origin is Literal:
        if any(type(value) is type(a) and value == a for a in args):
            return value
    elif kind is type(None) or kind is None:
        if value is None:
            return None
    elif kind is bool:
        if isinstance(value, bool):
            return value
    elif kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif kind is float:
        # bool is an int in Python, and the json module reads NaN and Infinity.
        if isinstance(value, int | float) and not isinstance(value, bool):
            number = _finite(value)
            if number is not None:
                return number
    elif kind is str:
        if isinstance(value, str):
            return value
    elif kind is dict or origin is dict:
        if isinstance(value, dict):
            item = args[1] if args else Any
            if item is Any:  # nothing to check in each (a result line's 10 kB of events)
                return dict(value)
            return {k: check(v, item, f"{where}.{k}") for k, v in value.items()}
    elif origin in (tuple, list) or kind in (tuple, list):
        if isinstance(value, list):
            item = args[0] if args else Any
            if item is Any:
                items = list(value)
            else:
                items = [check(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
            return tuple(items) if tuple in (origin, kind) else items
    elif dataclasses.is_dataclass(kind):
        return typed(typing.cast(type[Any], kind), value, where)
    else:
        raise TypeError(f"check() does not know the annotation {kind!r}")
    raise ReadError(f'"{where}" must be {kind_name(kind)} (got {shown(value)}).')


def kind_name(kind: Any) -> str:
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (Union, types.UnionType):
        return " or ".join(kind_name(a) for a in args)
    if origin is Literal:
        return "one of " + ", ".join(json.dumps(a) for a in args)
    names = {
        bool: "true or false",
        int: "a whole number",
        float: "a number",
        str: "text",
        type(None): "null",
        None: "null",
        dict: "an object",
        tuple: "a list",
        list: "a list",
    }
    return names.get(origin or kind, "an object")


def shown(value: Any) -> str:
    """A value as it appears in a message: JSON, cut short."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    return one_line(text, 40)


MAX_TEXT_CHARS = 10_000_000


def parse_json_text(value: object, name: str, limit: int = MAX_TEXT_CHARS) -> Any:
    """JSON text held in memory by a file's rules: a setting (QSettings gives back whatever the
    settings file holds), a server's body, a judge's; anything but JSON text of at most
    ``limit`` characters is a ReadError."""
    if not isinstance(value, str):
        raise ReadError(f"{name} is not JSON text (got {type(value).__name__}).")
    if len(value) > limit:
        raise ReadError(f"{name} is too large ({len(value):,} characters).")
    return parse_json(value, name, name)


def _finite(value: float) -> float | None:
    try:  # an integer of 400 digits is too large for a float
        return number if math.isfinite(number := float(value)) else None
    except OverflowError:
        return None


def stored_number(value: object, default: float, low: float, high: float) -> float:
    """A number kept in settings (zoom, replay pace): QSettings gives back text, a number or
    anything a damaged file holds; whatever is not a finite number in range is ``default``."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    number = _finite(value)
    return number if number is not None and low <= number <= high else default
