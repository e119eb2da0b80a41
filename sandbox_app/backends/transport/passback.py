"""What an OpenAI-compatible server requires back within a tool-calling turn, per model.

Some thinking models must see what they produced when the conversation goes on after their
tool calls, or the next request fails with a 400:

- DeepSeek's thinking mode: ``reasoning_content`` on the assistant message with tool_calls
  ("The reasoning_content in the thinking mode must be passed back to the API.": DeepSeek's
  thinking-mode guide, api-docs.deepseek.com/guides/thinking_mode).
- Kimi K2 thinking (Moonshot, and the hosts that serve it): the same field ("thinking is
  enabled but reasoning_content is missing in assistant tool call message at index 2",
  continuedev/continue#11711, MoonshotAI/kimi-agent-sdk#169).
- Gemini through its OpenAI-compatible endpoint: each tool call's
  ``extra_content.google.thought_signature`` ("Function call is missing a thought_signature in
  functionCall parts…", langgenius/dify-official-plugins#2088; ai.google.dev's
  thought-signatures guide, OpenAI compatibility).
- OpenRouter: the reply's ``reasoning_details`` array on the assistant message (OpenRouter's
  reasoning-tokens guide, "Preserving reasoning blocks").
- vLLM reads ``reasoning`` on input and silently drops ``reasoning_content``
  (vllm-project/vllm#38488), so a vLLM server is only ever sent ``reasoning``.

The backend gathers what a reply carried (:class:`Gathered`) and yields it as ``Delta.carry``
at the end of the stream; the engine keeps it in the assistant message under ``PROVIDER``;
request_body.py writes into each assistant message with tool calls exactly the fields the
model's rule names (:func:`preset_fields` by family, plus what a 400 taught:
:func:`required_field`). Text ReAct sends content only: its messages never hold tool calls.
"""

from __future__ import annotations

import re
from typing import Any

from sandbox_app.core.running.backend import PROVIDER, Message

REASONING_CONTENT = "reasoning_content"
REASONING = "reasoning"
REASONING_DETAILS = "reasoning_details"
THOUGHT_SIGNATURE = "thought_signature"  # sent as each tool call's extra_content

# The carry's keys (under the message's PROVIDER): only this module reads or writes them.
_TEXT = "reasoning_text"
_DETAILS = "reasoning_details"
_EXTRA = "tool_call_extra"  # call id (or position, as text) → that call's extra_content

# Local servers that take what they are sent as it is: a model's family says nothing about
# what they read (a DeepSeek distill on Ollama requires nothing back).
_LOCAL_PRESETS = frozenset({"ollama", "lmstudio", "llamacpp", "vllm"})


def preset_fields(preset_id: str, host: str, model: str) -> frozenset[str]:
    """What ``model`` at this server is known to require back, before any 400 says so."""
    host, name = host.lower(), model.lower()
    if preset_id == "openrouter" or host.endswith("openrouter.ai"):
        return frozenset({REASONING_DETAILS})
    if preset_id == "vllm":
        return frozenset({REASONING})
    if host.startswith("generativelanguage.googleapis.com"):
        return frozenset({THOUGHT_SIGNATURE})
    if preset_id in _LOCAL_PRESETS:
        return frozenset()
    if "deepseek" in host or "deepseek" in name:
        return frozenset({REASONING_CONTENT})
    if "moonshot" in host or "kimi" in name:
        return frozenset({REASONING_CONTENT})
    if name.rsplit("/", 1)[-1].startswith("gemini"):
        return frozenset({THOUGHT_SIGNATURE})
    return frozenset()


# A 400 that says what had to come back: DeepSeek's "The `reasoning_content` in the thinking
# mode must be passed back to the API.", Kimi's "… reasoning_content is missing in assistant
# tool call message at index 2", Gemini's "Function call is missing a thought_signature …".
_REQUIRED = (
    (re.compile(r"reasoning_content\W{0,3}[^.]{0,40}(?:must be passed back|is missing)", re.I),
     REASONING_CONTENT),
    (re.compile(r"missing (?:a |the )?thought_signature", re.I), THOUGHT_SIGNATURE),
    (re.compile(r"reasoning_details\W{0,3}[^.]{0,40}(?:must be passed back|is missing)", re.I),
     REASONING_DETAILS),
)  # fmt: skip


def required_field(message: str) -> str | None:
    """The field a 400's ``message`` says had to be passed back, if it says so."""
    for pattern, name in _REQUIRED:
        if pattern.search(message):
            return name
    return None


def learned_notice(name: str, model: str) -> str:
    where = "on each tool call" if name == THOUGHT_SIGNATURE else "with its tool calls"
    what = "extra_content.google.thought_signature" if name == THOUGHT_SIGNATURE else name
    return (
        f"The server requires {what} back {where} for {model or 'this model'}: sent again "
        "with it (remembered for this model while the app runs)."
    )


class Gathered:
    """What one streamed reply carried that a later request may have to send back."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._details: dict[int, dict[str, Any]] = {}
        self._ids: dict[int, str] = {}
        self._extra: dict[int, Any] = {}

    def add(self, delta: dict[str, Any], reasoning: str) -> None:
        """One chunk's ``delta`` and the reasoning text read from it."""
        if reasoning:
            self._text.append(reasoning)
        details = delta.get("reasoning_details")
        if isinstance(details, list):
            for position, piece in enumerate(details):
                if isinstance(piece, dict):
                    self._add_detail(piece, position)
        calls = delta.get("tool_calls")
        for position, call in enumerate(calls if isinstance(calls, list) else ()):
            if not isinstance(call, dict):
                continue
            index = call.get("index")
            index = index if isinstance(index, int) and not isinstance(index, bool) else position
            if isinstance(call.get("id"), str) and call["id"]:
                self._ids[index] = call["id"]
            if call.get("extra_content") is not None:
                self._extra[index] = call["extra_content"]

    def _add_detail(self, piece: dict[str, Any], position: int) -> None:
        # Streamed details are fragments of one entry per index: their text, summary or
        # data joined, their other fields (type, format, signature, id) kept as last sent.
        index = piece.get("index")
        index = index if isinstance(index, int) and not isinstance(index, bool) else position
        whole = self._details.setdefault(index, {})
        for key, value in piece.items():
            if key in ("text", "summary", "data") and isinstance(value, str):
                whole[key] = whole.get(key, "") + value
            elif value is not None:
                whole[key] = value

    def carry(self) -> dict[str, Any] | None:
        carry: dict[str, Any] = {}
        if self._text:
            carry[_TEXT] = "".join(self._text)
        if self._details:
            carry[_DETAILS] = [self._details[i] for i in sorted(self._details)]
        if self._extra:
            carry[_EXTRA] = {self._ids.get(i, str(i)): v for i, v in sorted(self._extra.items())}
        return carry or None


def passed_back(message: Message, fields: frozenset[str] | set[str]) -> Message:
    """``message`` as the server takes it: without PROVIDER, and, for an assistant message
    with tool calls, with what ``fields`` name of what its reply carried."""
    carry = message.get(PROVIDER)
    sent = {k: v for k, v in message.items() if k != PROVIDER} if carry is not None else message
    if not fields or not isinstance(carry, dict) or not message.get("tool_calls"):
        return sent
    sent = dict(sent)
    text = carry.get(_TEXT)
    for name in (REASONING_CONTENT, REASONING):
        if name in fields and isinstance(text, str):
            sent[name] = text
    if REASONING_DETAILS in fields and carry.get(_DETAILS):
        sent[REASONING_DETAILS] = carry[_DETAILS]
    extra = carry.get(_EXTRA)
    if THOUGHT_SIGNATURE in fields and isinstance(extra, dict):
        calls = []
        for position, call in enumerate(sent["tool_calls"]):
            found = extra.get(call.get("id")) if isinstance(call, dict) else None
            found = found if found is not None else extra.get(str(position))
            calls.append(call if found is None else {**call, "extra_content": found})
        sent["tool_calls"] = calls
    return sent
