"""Servers that require a reply's reasoning back within a tool-calling turn, as the test server
plays them (ModelScript.passback), each answering 400 in its own words when it is missing.

- ``"deepseek"``: DeepSeek's thinking mode streams ``reasoning_content`` (both keys, the idle
  one null) and rejects an assistant message with tool_calls that lacks it: "The
  reasoning_content in the thinking mode must be passed back to the API." with ``param`` and
  ``code`` as DeepSeek sends them (JohnnyZ93/oai-compatible-copilot#215, Dais-Project/Dais#61;
  DeepSeek's guide api-docs.deepseek.com/guides/thinking_mode).
- ``"kimi"``: Kimi K2 thinking, the same field, its own words with the message's index:
  "thinking is enabled but reasoning_content is missing in assistant tool call message at
  index 2" and no code (bytedance/deer-flow#3043, continuedev/continue#11711).
- ``"gemini"``: Gemini's OpenAI-compatible endpoint: no thinking text, each tool call carries
  ``extra_content.google.thought_signature`` (ai.google.dev's thought-signatures guide, its
  OpenAI-compatibility example); a call sent back without its own signature gets Google's
  400, a JSON list as that endpoint answers (0xsline/OpenChatCut#6, theopenco/llmgateway#1267).
- ``"openrouter"``: ``reasoning`` and ``reasoning_details`` on every thinking chunk (the shape
  tests/model_server/chat.py's "openrouter" chunk style quotes), then a detail with the block's
  signature, as OpenRouter relays a Claude model's; the assistant message must bring the
  details back with the signature matching their text, else the upstream's 400 relayed in
  OpenRouter's error shape (the Anthropic wording: Kilo-Org/kilocode#5219).

- ``"vllm"``: a vLLM >= 0.11 reasoning parser: ``{"reasoning": …}`` chunks; it refuses nothing
  (it reads ``reasoning`` on input and silently drops ``reasoning_content``,
  vllm-project/vllm#38488): the tests check which field went out.

Signatures are a hash of what they sign, so a detail or a call sent back wrong (text joined
badly, a signature on the wrong call) is refused like a missing one; DeepSeek's and Kimi's
``reasoning_content`` must come back byte for byte as streamed (the test server's own
strictness: it is what a fork or a replayed run must keep).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from aiohttp import web

PassbackMode = Literal["deepseek", "kimi", "gemini", "openrouter", "vllm"]

DEEPSEEK_MISSING = "The reasoning_content in the thinking mode must be passed back to the API."
KIMI_MISSING = "thinking is enabled but reasoning_content is missing in assistant tool call message at index {index}"  # noqa: E501
GEMINI_MISSING = (
    "Function call is missing a thought_signature in functionCall parts. This is required for "
    "tools to work correctly, and missing thought_signature may lead to degraded model "
    "performance. Additional data, function call `default_api:{name}` , position {position}. "
    "Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)
ANTHROPIC_MISSING = (
    "messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
    "`tool_use`. When `thinking` is enabled, a final `assistant` message must start with a "
    "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We "
    "recommend you include thinking blocks from previous turns. To avoid this requirement, "
    "disable `thinking`. Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)


def signature(*parts: str) -> str:
    return "sig-" + hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:24]


def thinking_deltas(mode: PassbackMode, tokens: list[str]) -> list[dict[str, Any]]:
    """The chunks that stream a tool-calling reply's thinking in ``mode``'s shape."""
    if mode in ("deepseek", "kimi"):
        return [{"content": None, "reasoning_content": token} for token in tokens]
    if mode == "vllm":
        return [{"reasoning": token} for token in tokens]
    if mode == "openrouter" and tokens:
        detail = {"type": "reasoning.text", "format": "anthropic-claude-v1", "index": 0}
        deltas = [
            {
                "role": "assistant",
                "content": "",
                "reasoning": token,
                "reasoning_details": [detail | {"text": token}],
            }
            for token in tokens
        ]
        signed = detail | {"signature": signature("".join(tokens))}
        deltas.append({"role": "assistant", "content": "", "reasoning_details": [signed]})
        return deltas
    return []  # Gemini's endpoint shows no thoughts unless asked


def sign_calls(mode: PassbackMode, deltas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Gemini: each call's first piece (the one with its id) carries its signature."""
    if mode != "gemini":
        return deltas
    signed = []
    for delta in deltas:
        calls = []
        for call in delta.get("tool_calls") or ():
            if "id" in call:
                name = call.get("function", {}).get("name", "")
                google = {"thought_signature": signature(call["id"], name)}
                call = call | {"extra_content": {"google": google}}
            calls.append(call)
        signed.append(delta | {"tool_calls": calls} if calls else delta)
    return signed


def refusal(
    mode: PassbackMode, messages: list[Any], reasoning_sent: dict[str, str] | None = None
) -> web.Response | None:
    """The 400 ``mode``'s server answers when an assistant tool-call message lacks what it
    requires back; None when every one has it. ``reasoning_sent``: DeepSeek's and Kimi's
    reasoning as this server streamed it, by the id of the call its reply made: a message
    sending other bytes back for that call is refused like one sending none."""
    sent_by_call = reasoning_sent or {}
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        calls = message.get("tool_calls") or []
        if not calls:
            continue
        back = message.get("reasoning_content")
        streamed = [sent_by_call[c["id"]] for c in calls if c.get("id") in sent_by_call]
        exact = isinstance(back, str) and all(back == text for text in streamed)
        if mode == "deepseek" and not exact:
            return _openai_error(DEEPSEEK_MISSING, param=None, code="invalid_request_error")
        if mode == "kimi" and not exact:
            return web.json_response(
                {"error": {"message": KIMI_MISSING.format(index=index),
                           "type": "invalid_request_error"}},
                status=400,
            )  # fmt: skip
        if mode == "gemini":
            for call in calls:
                name = call.get("function", {}).get("name", "")
                google = (call.get("extra_content") or {}).get("google") or {}
                if google.get("thought_signature") != signature(call.get("id", ""), name):
                    text = GEMINI_MISSING.format(name=name, position=index + 1)
                    body = [{"error": {"code": 400, "message": text,
                                       "status": "INVALID_ARGUMENT"}}]  # fmt: skip
                    return web.json_response(body, status=400)
        if mode == "openrouter" and not _signed_details(message.get("reasoning_details")):
            raw = json.dumps(
                {"type": "error", "error": {"type": "invalid_request_error",
                                            "message": ANTHROPIC_MISSING.format(index=index)}}
            )  # fmt: skip
            return web.json_response(
                {"error": {"message": "Provider returned error", "code": 400,
                           "metadata": {"raw": raw, "provider_name": "Anthropic"}}},
                status=400,
            )  # fmt: skip
    return None


def _signed_details(details: Any) -> bool:
    if not isinstance(details, list) or not details:
        return False
    return all(
        isinstance(d, dict)
        and isinstance(d.get("text"), str)
        and d.get("signature") == signature(d["text"])
        for d in details
    )


def _openai_error(message: str, *, param: str | None, code: str) -> web.Response:
    body = {"error": {"message": message, "type": "invalid_request_error", "param": param,
                      "code": code}}  # fmt: skip
    return web.json_response(body, status=400)
