"""A response cache for evaluations (``react-sandbox eval --cache``): a backend that answers a
request it has seen before from disk, streamed as it first came.

The key is the whole request (messages, model and every parameter) plus a salt that names
the lane and the repeat: repeats are never served one cached reply (each repeat is its own
sample), and a changed prompt, question or setting never hits an old entry. Only a reply
that streamed to its end (or that the engine cut on purpose) is kept; a failed one is asked
again next time. Entries are JSON
files written atomically, so a killed process leaves no half entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import asdict
from pathlib import Path
from typing import Any

from sandbox_app.core.running.backend import (
    Backend,
    Delta,
    Message,
    StreamParams,
    ToolCallPiece,
    Usage,
)
from sandbox_app.core.untrusted.file_reader import ReadError, check, read_json


class CachedBackend:
    """Wraps ``inner``; closing it leaves ``inner`` open (it may serve other runs)."""

    def __init__(self, inner: Backend, directory: Path, salt: str) -> None:
        self.inner = inner
        self.label = inner.label  # what is learnt about the model stays the model's
        self.directory = directory
        self.salt = salt
        self.hits = 0

    def key(self, messages: Sequence[Message], params: StreamParams) -> str:
        described = asdict(params)
        if not described["extra"]:  # as keys were before callers could add to a request
            del described["extra"]
        request = {"salt": self.salt, "messages": list(messages), "params": described}
        encoded = json.dumps(request, sort_keys=True, ensure_ascii=False).encode()
        return hashlib.sha256(encoded).hexdigest()

    async def stream(
        self, messages: Sequence[Message], params: StreamParams
    ) -> AsyncGenerator[Delta, None]:
        path = self.directory / f"{self.key(messages, params)}.json"
        stored = _read(path)
        if stored is not None:
            self.hits += 1
            for delta in stored:
                yield delta
            return
        kept: list[dict[str, Any]] = []
        async with aclosing(self.inner.stream(messages, params)) as stream:
            try:
                async for delta in stream:
                    if _part_of_reply(delta):
                        kept.append(_stored(delta))
                    yield delta
            except GeneratorExit:
                # The engine read what it needed (a fabricated observation was cut): a hit
                # replays the same text, so the same cut.
                _write(path, kept)
                raise
        _write(path, kept)  # a reply that failed on the way (BackendError) never gets here

    async def list_models(self) -> list[str]:
        return await self.inner.list_models()

    async def aclose(self) -> None:
        return None


def _part_of_reply(delta: Delta) -> bool:
    """What a hit replays: the reply's text, thinking, tool calls, usage and finish reason (not
    a notice, nor when this request was sent)."""
    return bool(
        delta.text or delta.reasoning or delta.tool_calls or delta.usage or delta.finish_reason
    )


def _stored(delta: Delta) -> dict[str, Any]:
    item: dict[str, Any] = {"text": delta.text, "reasoning": delta.reasoning}
    if delta.usage is not None:
        item["usage"] = asdict(delta.usage)
    if delta.finish_reason is not None:
        item["finish_reason"] = delta.finish_reason
    if delta.tool_calls:
        item["tool_calls"] = [asdict(piece) for piece in delta.tool_calls]
    return item


# What an entry may hold for each piece of a reply (what _stored writes), with its type; a
# piece with any other type makes the whole entry a miss.
_ENTRY_FIELDS: dict[str, Any] = {
    "text": str,
    "reasoning": str,
    "usage": Usage | None,
    "finish_reason": str | None,
    "tool_calls": tuple[ToolCallPiece, ...],
}
MAX_ENTRY_BYTES = 64 * 1024 * 1024


def _delta(item: Any, where: str) -> Delta:
    if not isinstance(item, dict):
        raise ReadError(f'"{where}" must be an object.')
    values = {
        k: check(item[k], kind, f"{where}.{k}") for k, kind in _ENTRY_FIELDS.items() if k in item
    }
    return Delta(**values)


def _read(path: Path) -> list[Delta] | None:
    """A stored reply, every piece checked; None (asked again) when there is none, or when
    it is damaged or not ours, whatever is wrong with it."""
    try:
        data = read_json(path, MAX_ENTRY_BYTES, "a cache entry")
        if not isinstance(data, list):
            return None
        return [_delta(item, f"[{i}]") for i, item in enumerate(data)]
    except ReadError:
        return None


def _write(path: Path, items: list[dict[str, Any]]) -> None:
    """Keep an entry if the folder lets us: the cache is a saving, and a full disk or a folder
    made read-only mid-evaluation costs later runs a request, never this run its result."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump(items, file, ensure_ascii=False)
        os.replace(temporary, path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)
