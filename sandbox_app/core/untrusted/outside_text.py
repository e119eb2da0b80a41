"""The one rule for text that came from outside the app (a server's reply or error, a judge's
verdict, a file's strings): made safe once, where it enters, so no writer meets it raw.

- Lone surrogates (``"\\ud800"`` is legal JSON, and a Python string may hold one) cannot be
  encoded as UTF-8: a terminal, a JSON file, an XML report or an OTLP file written with one
  fails half way. Each becomes U+FFFD, the replacement character, as a bad byte does.
- A key the app sent comes back when a server quotes its request ("invalid key Bearer
  sk-…"): every key sent is replaced by :data:`KEY_REMOVED` before the text is stored,
  shown, printed or exported.

Where text enters: backends/transport/server_text.py (every reply piece, error line and model name
of a
backend built on an SDK), the file reader's JSON (files, settings, servers' bodies and stream
chunks, a model's tool-call arguments), backends/transport/sse.py (bytes that are not UTF-8), the
judge's
parser (core/results/judging.py) and the tool router (every tool's result).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

KEY_REMOVED = "[key removed]"
# Shorter "keys" are placeholders ("x", "none"): replacing them would blank ordinary words.
MIN_KEY_CHARS = 6
REPLACEMENT = "\ufffd"

_SURROGATE = re.compile("[\ud800-\udfff]")
# A JSON escape that decodes to a surrogate: only such a text can parse into a lone one.
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def clean(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD."""
    return _SURROGATE.sub(REPLACEMENT, text) if _SURROGATE.search(text) else text


def may_hold_surrogates(json_text: str, start: int = 0, end: int | None = None) -> bool:
    """Whether JSON text (from ``start`` to ``end``) could parse into strings with lone
    surrogates (cheap: most cannot)."""
    stop = len(json_text) if end is None else end
    escaped = _ESCAPED_SURROGATE.search(json_text, start, stop)
    return bool(escaped or _SURROGATE.search(json_text, start, stop))


def clean_value(value: Any) -> Any:
    """A parsed JSON value with every string in it (keys too) :func:`clean`; the caller
    has bounded its depth."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list):
        return [clean_value(item) for item in value]
    if isinstance(value, dict):
        return {clean(key): clean_value(item) for key, item in value.items()}
    return value


def secrets_of(*keys: str) -> tuple[str, ...]:
    """The keys worth looking for, longest first (so one that holds another goes whole)."""
    return tuple(sorted({k for k in keys if len(k) >= MIN_KEY_CHARS}, key=len, reverse=True))


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` made safe: :func:`clean`, and every one of ``secrets`` (see
    :func:`secrets_of`) replaced by :data:`KEY_REMOVED`."""
    text = clean(text)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, KEY_REMOVED)
    return text
