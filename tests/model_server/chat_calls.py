"""Native tool calls as the test server streams them, in the shapes real servers send.

A scripted reply writes its calls the way Hermes-style models do, and vLLM's and llama.cpp's
tool parsers read them out of the model's text:

    I need the capacity first.
    <tool_call>{"name": "search", "arguments": {"query": "Brightgrid capacity"}}</tool_call>

With a tool parser (``style``) the text before the first block streams as ``content`` and each
block becomes ``delta.tool_calls`` pieces, as these captures show:

- ``"openai"``: id, type, name and ``"arguments": ""`` first, then argument fragments; the
  finish delta is ``{}`` (gpt-4o-2024-08-06, recorded from the live API in openai-python's
  snapshots, https://github.com/openai/openai-python/tree/main/.inline-snapshot/external).
- ``"vllm"``: id, type, index and the name with no ``arguments`` key, then fragments; the finish
  delta is ``{"content": ""}`` with ``"stop_reason": null`` (April 2025, the test "vllm
  capture" in https://github.com/g0t4/ask-openai.nvim/blob/01b2cc5de6c4e97540bfbbefc8644d8c28a5a371/lua/ask-openai/tools/tests/sse.lua).
- ``"ollama"``: the whole call, arguments included, in one delta (qwen2.5-coder, April 2025,
  the test "parses ollama all-in-one tool_calls" in the same file).

Without one (``None``: llama.cpp without ``--jinja``'s parser, a vLLM with no
``--tool-call-parser``) the blocks stay in the content, as those servers send them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Literal

ToolCallStyle = Literal["openai", "vllm", "ollama"]
_BLOCK = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)

# What servers answer to "tools" for a model or build that cannot call them (verbatim
# messages: ollama/ollama #6027 and #14795, ggml-org/llama.cpp via containers/ramalama #988,
# vllm-project/vllm #9986).
OLLAMA_NO_TOOLS = (400, "registry.ollama.ai/library/gemma3:4b does not support tools")
LLAMA_CPP_NO_JINJA = (500, "tools param requires --jinja flag")
VLLM_NO_TOOL_PARSER = (
    400,
    '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
)


def has_calls(reply: str) -> bool:
    return "<tool_call>" in reply


def split_calls(reply: str) -> tuple[str, list[tuple[str, str]]]:
    """The reply's text before its first call, and each call's (name, arguments JSON). An
    ``arguments`` string is sent as it is: a model's broken JSON, for tests."""
    content = reply.split("<tool_call>", 1)[0]
    calls = []
    for block in _BLOCK.findall(reply):
        call = json.loads(block)
        arguments = call.get("arguments", {})
        calls.append(
            (call["name"], arguments if isinstance(arguments, str) else json.dumps(arguments))
        )
    return content, calls


def call_deltas(
    style: ToolCallStyle,
    calls: list[tuple[str, str]],
    tokenizer: Callable[[str], list[str]],
    first_id: int,
) -> list[dict[str, Any]]:
    """The deltas that carry ``calls``, one per SSE chunk."""
    deltas: list[dict[str, Any]] = []
    for index, (name, arguments) in enumerate(calls):
        if style == "ollama":
            deltas.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": f"call_{first_id + index:08x}",
                            "index": index,
                            "type": "function",
                            "function": {"name": name, "arguments": arguments},
                        }
                    ],
                }
            )
            continue
        head: dict[str, Any] = {"index": index, "type": "function", "function": {"name": name}}
        if style == "openai":
            head["id"] = f"call_{first_id + index:024x}"
            head["function"]["arguments"] = ""
        else:
            head["id"] = f"chatcmpl-tool-{first_id + index:032x}"
        deltas.append({"tool_calls": [head]})
        deltas += [
            {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
            for piece in tokenizer(arguments)
        ]
    return deltas


def finish_choice(style: ToolCallStyle) -> dict[str, Any]:
    if style == "vllm":
        return {
            "index": 0,
            "delta": {"content": ""},
            "finish_reason": "tool_calls",
            "stop_reason": None,
        }
    return {"index": 0, "delta": {}, "finish_reason": "tool_calls"}


def unanswered_calls(messages: list[Any]) -> list[str]:
    """Ids of assistant tool calls no later ``tool`` message answers (OpenAI answers such a
    request with a 400)."""
    asked: list[str] = []
    answered: set[str] = set()
    for message in messages:
        if not isinstance(message, dict):
            continue
        for call in message.get("tool_calls") or ():
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                asked.append(call["id"])
        if message.get("role") == "tool":
            answered.add(str(message.get("tool_call_id")))
    return [call_id for call_id in asked if call_id not in answered]
