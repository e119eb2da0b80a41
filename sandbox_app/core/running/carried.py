"""A provider's reasoning items in the conversation: whose they are, who gets them back.

A backend yields what its reply must bring back in a tool-calling turn (``Delta.carry``: Claude's
signed ``thinking`` and ``redacted_thinking`` blocks, Gemini's ``thoughtSignature``s, DeepSeek's
and Kimi's ``reasoning_content``, OpenAI's encrypted reasoning items); the engine keeps it in the
assistant message under :data:`PROVIDER`, which every request's :class:`Exchange` records with the
engine's messages, so a recording, a stored run and a fork hold it byte for byte.

Such items are the provider's data, opaque and signed for one model: the engine stamps them
with who wrote them (:data:`FOR`: the backend kind, the server and the model), and a fork goes
on with them only on that same one; onto another kind, server or model they are dropped, and
its trace says so at step 0 (:func:`kept_for`). In a file each item keeps the live bound
(:data:`MAX_CARRIED`): a bigger one is refused with one line when the file is read
(:func:`check_carried`), never cut, since a cut signature is refused by its server.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sandbox_app.core.running.backend import MAX_CARRIED, PROVIDER, Message
from sandbox_app.core.untrusted.file_reader import ReadError

# Under PROVIDER: who wrote the items beside it ("anthropic https://api.anthropic.com
# claude-sonnet-4-5"), the only one they may be sent back to. Never sent: each backend reads
# its own keys alone.
FOR = "for"


def source_of(kind: str, base_url: str, model: str) -> str:
    """Who a run's model is, as its carried items are stamped: kind, server, model."""
    return " ".join(part for part in (kind, base_url.rstrip("/"), model) if part)


def stamped(carry: dict[str, Any] | None, source: str) -> dict[str, Any] | None:
    """``carry`` with who wrote it (None stays None: a reply that carried nothing)."""
    return {FOR: source, **carry} if carry else carry


def kept_for(messages: Sequence[Message], source: str) -> tuple[list[Message], str]:
    """``messages`` (a fork's conversation) as ``source`` may be sent them: each assistant
    message's provider items kept when ``source`` wrote them, else dropped; and the step-0
    notice saying what was dropped, or ""."""
    kept: list[Message] = []
    dropped: list[str] = []
    for message in messages:
        carry = message.get(PROVIDER)
        if isinstance(carry, dict) and carry.get(FOR) != source:
            dropped.append(str(carry.get(FOR) or "an unnamed model"))
            message = {k: v for k, v in message.items() if k != PROVIDER}
        kept.append(dict(message))
    if not dropped:
        return kept, ""
    writers = ", ".join(dict.fromkeys(dropped))
    return kept, (
        f"The reasoning items of {len(dropped)} earlier repl{'y' if len(dropped) == 1 else 'ies'} "
        f"(provider data of {writers}) are not sent to {source or 'this model'}: they go back "
        "only to the model that wrote them."
    )


def check_carried(messages: Sequence[Any], where: str) -> None:
    """A file's conversation: each provider item at most :data:`MAX_CARRIED` bytes of JSON,
    else a :class:`ReadError` in one line (the item is never cut: its server would refuse it)."""
    for i, message in enumerate(messages):
        carry = message.get(PROVIDER) if isinstance(message, dict) else None
        if not isinstance(carry, dict):
            continue
        for key, value in carry.items():
            for item in _items(value):
                size = len(json.dumps(item, ensure_ascii=False).encode())
                if size > MAX_CARRIED:
                    raise ReadError(
                        f'"{where}[{i}].{PROVIDER}.{key}" holds a reasoning item of {size:,} '
                        f"bytes, over {MAX_CARRIED // 1024} KB: refused, not cut (its server "
                        "rejects a cut one)."
                    )


def _items(value: Any) -> list[Any]:
    """A carry key's items (as ``bounded_carry`` counts them): a list's, an object's values,
    or the one value."""
    if isinstance(value, list):
        return value
    return list(value.values()) if isinstance(value, dict) else [value]
