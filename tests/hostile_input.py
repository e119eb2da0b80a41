"""Hostile input for the fuzz tests, made from valid samples: the one set of strategies every
decoder, reader and parser is fed (streams, a judge's reply, trace files, history rows).

A sample (a recorded stream in tests/data/streams, a trace file, a judge's reply) is taken
as it is, cut short, or changed where it matters: a value swapped for one of the wrong type
(:data:`ATOMS`: lone surrogates, escapes such as ``\\u0000``, terminal escapes, control and
line-separator characters, huge, negative, fractional and non-finite numbers, 24-digit ids),
nested 10,000 deep, a 10 MB string, raw bytes that are not UTF-8. What a property then
asserts is the module's own business; :func:`encodes` is the check every output shares,
:func:`check_deltas` what every decoder's deltas must be.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from sandbox_app.backends.transport.sse import MAX_TOKENS_REPORTED
from sandbox_app.core.running.backend import Delta

DATA = Path(__file__).parent / "data"
MARKER = "# ---- the stream, byte for byte, from the next line ----\n"
DEEP = 10_000  # brackets: far past the one reader's limit and Python's recursion limit
BIG = 10 * 1024 * 1024  # characters: a 10 MB string
ID_24 = 123_456_789_012_345_678_901_234  # a 24-digit id, beyond SQLite's and int64's range

# Values a field could hold that it should not: each is legal JSON (or, for NaN and the
# infinities, what Python's json module reads and writes).
TEXTS = [
    "\ud800",  # a lone surrogate: legal JSON ("\\ud800"), not encodable as UTF-8
    "a\udfffb",
    "\x00",
    "\x1b[2J\x1b]0;pwned\x07",  # clear the screen, set the terminal's title
    "line\u2028break\u0085\r\x0bhere",  # line breaks str.splitlines() knows
    "\u202eevil",  # right-to-left override
    "\\u0000 \\ud800 \\n",  # escapes written out, as a model quotes them
    "",
]
NUMBERS = [ID_24, -ID_24, -1, 0, 2**63, 10**400, 1e308, -0.5, float("nan"), float("inf")]
ATOMS: list[Any] = [*TEXTS, *NUMBERS, True, False, None, [], {}, [None], {"": None}]
# Raw bytes that no JSON encoder writes: a lone surrogate as UTF-8 would spell it (CESU), a
# byte that is never UTF-8, a character cut in half, NUL, a terminal escape.
RAW = [b"\xed\xa0\x80", b"\xff\xfe", b"\xe2\x82", b"\x00", b"\x1b[31m", b"\r", b"\n\n"]

_PLACEHOLDER = "\x00hostile-placeholder\x00"  # a string no sample holds: swapped after dumps


def stream_sample(name: str) -> str:
    """A recorded stream's bytes as text: what follows its header's marker line."""
    text = (DATA / "streams" / name).read_text(encoding="utf-8")
    return text.split(MARKER, 1)[1] if MARKER in text else text


def sse_payloads(text: str) -> list[str]:
    """The ``data:`` payloads of an SSE text, in order (``[DONE]`` left out)."""
    lines = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    return [line for line in lines if line != "[DONE]"]


def nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every value inside ``value`` (itself first)."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += nodes(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += nodes(item, (*path, i))
    return found


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, *rest = path
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[head] = replaced(value[head], tuple(rest), new)
    return copy


# How often each is drawn: a 10 MB string costs ~0.1 s where it travels (an HTTP body, a
# file), so it is one draw in eleven, where wrong types are the most.
HOW = ["as is", "cut", "atom", "atom", "atom", "any json", "any json", "deep", "escape"]
HOW += ["escape", "huge"]


@st.composite
def hostile_json(draw: st.DrawFn, sample: Any) -> str:
    """JSON text made from the value ``sample``: as it is, cut short, or one of its values
    replaced by an atom, by any JSON, by 10,000 nested brackets or by a 10 MB string, or
    with an escape put inside one of its strings."""
    how = draw(st.sampled_from(HOW), label="how")
    paths = nodes(sample)
    path = paths[draw(st.integers(0, len(paths) - 1), label="where")]
    if how == "atom":
        return json.dumps(replaced(sample, path, draw(st.sampled_from(ATOMS), label="atom")))
    if how == "any json":
        return json.dumps(replaced(sample, path, draw(any_json(), label="value")))
    if how == "huge":
        return json.dumps(replaced(sample, path, "x" * BIG))
    if how == "escape":
        strings = [p for p in paths if isinstance(at(sample, p), str)] or [path]
        where = strings[draw(st.integers(0, len(strings) - 1))]
        old = at(sample, where)
        text = old if isinstance(old, str) else ""
        cut = draw(st.integers(0, len(text)))
        atom = draw(st.sampled_from(TEXTS))
        return json.dumps(replaced(sample, where, text[:cut] + atom + text[cut:]))
    text = json.dumps(sample, ensure_ascii=False)
    if how == "cut":
        return text[: draw(st.integers(0, max(len(text) - 1, 0)), label="cut at")]
    if how == "deep":
        deep = draw(st.sampled_from(["[", '{"a":']), label="bracket") * DEEP
        closing = ("]" if deep[0] == "[" else "}") * DEEP
        text = json.dumps(replaced(sample, path, _PLACEHOLDER))
        return text.replace(json.dumps(_PLACEHOLDER), deep + "1" + closing, 1)
    return text


def at(value: Any, path: tuple[Any, ...]) -> Any:
    """The value at ``path`` inside ``value``."""
    for key in path:
        value = value[key]
    return value


def any_json() -> st.SearchStrategy[Any]:
    """Small JSON values of every type, strings from the whole of Unicode (surrogates too)."""
    leaves = (
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats()
        | st.text(max_size=20)
        | st.sampled_from(ATOMS)
    )
    return st.recursive(
        leaves,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
        ),
        max_leaves=8,
    )


@st.composite
def hostile_payloads(draw: st.DrawFn, payloads: list[str]) -> list[str]:
    """A stream's payloads (JSON texts), damaged: each kept or made :func:`hostile_json`,
    some dropped or repeated, the stream ended early."""
    out: list[str] = []
    for payload in payloads:
        what = draw(st.sampled_from(["keep"] * 4 + ["damage", "drop", "twice"]))
        if what == "drop":
            continue
        text = draw(hostile_json(json.loads(payload))) if what == "damage" else payload
        out += [text, text] if what == "twice" else [text]
    if out and draw(st.booleans()):
        out = out[: draw(st.integers(0, len(out)))]
    return out


@st.composite
def hostile_bytes(draw: st.DrawFn, raw: bytes) -> bytes:
    """Bytes with :data:`RAW` pieces put in, or cut short anywhere (mid-character too)."""
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(st.sampled_from(RAW)) + raw[at:]
    if draw(st.booleans()):
        raw = raw[: draw(st.integers(0, len(raw)))]
    return raw


def encodes(*texts: str) -> None:
    """Each text can be written as UTF-8 (a terminal, a JSON or XML file): no lone surrogate."""
    for text in texts:
        text.encode("utf-8")


def check_deltas(deltas: list[Delta]) -> None:
    """What the engine, the records and every writer after them take as they are."""
    for delta in deltas:
        texts = [delta.text, delta.reasoning, delta.notice, delta.finish_reason or ""]
        texts += [t for call in delta.tool_calls for t in (call.id, call.name, call.arguments)]
        for text in texts:
            text.encode("utf-8")
        if delta.carry is not None:
            json.dumps(delta.carry, ensure_ascii=False).encode("utf-8")
        if delta.usage is not None:
            u = delta.usage
            counts = [u.prompt_tokens, u.completion_tokens, u.reasoning_tokens]
            counts += [u.cache_read_tokens, u.cache_write_tokens]
            assert all(0 <= c <= 2 * MAX_TOKENS_REPORTED for c in counts if c is not None), u


class Hung(Exception):
    """Work that went on past its bound: a hang, not a slow machine."""


@contextmanager
def bounded(seconds: float) -> Iterator[None]:
    """Raise :class:`Hung` in the work if it takes longer than ``seconds`` (main thread only;
    the regex engine and the json module both stop for the signal). The bound is many times
    what the work needs: it tells a hang from a busy machine, it measures nothing."""

    def stop(_signum: int, _frame: Any) -> None:
        raise Hung(f"still running after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
