"""A JSON document read a value at a time: an object's keys and an array's items walked one
by one, each value parsed as it is reached, so a long file's first values are in use before
the rest is parsed (a 40 MB recording's first steps on screen in milliseconds, not after a
second of parsing, and each event's parsed dict let go as soon as it is turned into an event).

Each value is held to the file reader's rules (core/untrusted/file_reader.py) as a whole
document is: nesting no deeper than :data:`file_reader.MAX_DEPTH` counting the levels walked
to it, lone surrogates as U+FFFD, one-line :class:`ReadError` messages that name the file, line
and column, and no RecursionError ever escapes. Text after the document's end is refused.

    walk = JsonWalk(text, "run.json", "a recording")
    for key in walk.members():          # the caller reads each key's value before the next
        if key == "events":
            for _ in walk.items():      # likewise each item
                use(walk.value())
        else:
            other[key] = walk.value()
    walk.end()
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from sandbox_app.core.untrusted.file_reader import MAX_DEPTH, ReadError, nesting
from sandbox_app.core.untrusted.outside_text import clean_value, may_hold_surrogates

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


class JsonWalk:
    """``text`` (a whole JSON document) walked from its start; ``name`` and ``what`` say in
    the messages which file it is and what it should be."""

    def __init__(self, text: str, name: str, what: str) -> None:
        self.text, self.name, self.what = text, name, what
        self.pos = 0
        self.depth = 0  # containers the walk is inside

    def members(self) -> Iterator[str]:
        """The object here: each key in turn, the walk at its value (read it before asking
        for the next key)."""
        self._open("{")
        if self._at("}"):
            self._close()
            return
        while True:
            key = self.value()
            if not isinstance(key, str):
                raise self._error("Expecting property name enclosed in double quotes")
            self._expect(":")
            yield key
            if self._at("}"):
                self._close()
                return
            self._expect(",")

    def items(self) -> Iterator[int]:
        """The array here: each item's index in turn, the walk at the item (read it before
        asking for the next)."""
        self._open("[")
        if self._at("]"):
            self._close()
            return
        index = 0
        while True:
            yield index
            index += 1
            if self._at("]"):
                self._close()
                return
            self._expect(",")

    def value(self) -> Any:
        """The value here, parsed whole, the walk past it."""
        start = self._skip()
        text = self.text
        try:
            value, end = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError as err:
            raise self._error(err.msg, err.pos) from None
        except RecursionError:
            raise self._too_deep() from None
        except ValueError as err:  # e.g. an integer of more than 4,300 digits
            raise ReadError(f"{self.name} is not valid JSON: {err}.") from None
        self.pos = end
        room = MAX_DEPTH - self.depth
        brackets = text.count("[", start, end) + text.count("{", start, end)
        if brackets > room and nesting(text[start:end], room) > room:
            raise self._too_deep()
        return clean_value(value) if may_hold_surrogates(text, start, end) else value

    def peek(self) -> str:
        """The next character that is not white space ("" at the end)."""
        at = self._skip()
        return self.text[at : at + 1]

    def end(self) -> None:
        """The document is over: nothing but white space may follow."""
        if self._skip() < len(self.text):
            raise self._error("Extra data")

    def _open(self, bracket: str) -> None:
        self._expect(bracket)
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self._too_deep()

    def _close(self) -> None:
        self.pos += 1
        self.depth -= 1

    def _at(self, char: str) -> bool:
        return self.text.startswith(char, self._skip())

    def _expect(self, char: str) -> None:
        if not self._at(char):
            wanted = {":": "':' delimiter", ",": "',' delimiter"}.get(char, f"'{char}'")
            raise self._error(f"Expecting {wanted}")
        self.pos += 1

    def _skip(self) -> int:
        match = _SPACE.match(self.text, self.pos)
        self.pos = match.end() if match else self.pos
        return self.pos

    def _error(self, message: str, at: int | None = None) -> ReadError:
        at = self.pos if at is None else at
        line = self.text.count("\n", 0, at) + 1
        column = at - self.text.rfind("\n", 0, at)
        return ReadError(
            f"{self.name} is not valid JSON: {message} at line {line}, column {column}."
        )

    def _too_deep(self) -> ReadError:
        return ReadError(f"{self.name} nests its JSON too deeply to be {self.what}.")
