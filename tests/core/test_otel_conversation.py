"""Each API's request as the GenAI conventions' conversation (core/otel/otel_conversation.py),
for the shapes a Brightgrid run does not send: cached system blocks, several tool results in
one turn, block content in a tool result, a Responses input given as text, a developer
message, reasoning summaries, a Gemini function's error, DeepSeek's and Ollama's fields."""

from __future__ import annotations

from typing import Any

from sandbox_app.core.otel.otel_conversation import conversation


def text(words: str) -> dict[str, Any]:
    return {"type": "text", "content": words}


def call(call_id: str | None, name: str, arguments: Any) -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}


def answer(call_id: str | None, response: Any) -> dict[str, Any]:
    return {"type": "tool_call_response", "id": call_id, "response": response}


def test_anthropic_blocks() -> None:
    request = {
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": "Price?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "redacted_thinking", "data": "EmwK…"},
                    {"type": "thinking", "thinking": "Two lookups.", "signature": "sig"},
                    {"type": "text", "text": "Looking both up."},
                    {"type": "tool_use", "id": "toolu_01", "name": "search", "input": {"q": "a"}},
                    {"type": "tool_use", "id": "toolu_02", "name": "search", "input": {"q": "b"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01", "content": "A is $1"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_02",
                        "content": [{"type": "text", "text": "B is $2"}],
                    },
                    {"type": "text", "text": "Now add them."},
                ],
            },
        ],
    }
    said = conversation(request)
    assert said.system == [text("Be brief.")]
    assert said.messages == [
        {"role": "user", "parts": [text("Price?")]},
        {
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "content": "Two lookups."},
                text("Looking both up."),
                call("toolu_01", "search", {"q": "a"}),
                call("toolu_02", "search", {"q": "b"}),
            ],
        },
        {"role": "tool", "parts": [answer("toolu_01", "A is $1")]},
        {"role": "tool", "parts": [answer("toolu_02", "B is $2")]},
        {"role": "user", "parts": [text("Now add them.")]},
    ]


def test_responses_items() -> None:
    assert conversation({"instructions": "Be brief.", "input": "Price?"}).messages == [
        {"role": "user", "parts": [text("Price?")]}
    ]
    request = {
        "input": [
            {"type": "message", "role": "developer", "content": "Use tools."},
            {"role": "user", "content": [{"type": "input_text", "text": "Price?"}]},
            {
                "type": "reasoning",
                "summary": [
                    {"type": "summary_text", "text": "First a."},
                    {"type": "summary_text", "text": "Then b."},
                ],
                "encrypted_content": "gAAAA…",
            },
            {"type": "function_call", "call_id": "call_a", "name": "search", "arguments": "{}"},
            {"type": "function_call", "call_id": "call_b", "name": "search", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_a", "output": "A"},
            {"type": "function_call_output", "call_id": "call_b", "output": "B"},
        ]
    }
    said = conversation(request)
    assert said.system == [text("Use tools.")]
    assert said.messages == [
        {"role": "user", "parts": [text("Price?")]},
        {
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "content": "First a.\n\nThen b."},
                call("call_a", "search", "{}"),
                call("call_b", "search", "{}"),
            ],
        },
        {"role": "tool", "parts": [answer("call_a", "A")]},
        {"role": "tool", "parts": [answer("call_b", "B")]},
    ]


def test_gemini_parts() -> None:
    request = {
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "Price?"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "Both, then add.", "thought": True},
                    {"functionCall": {"name": "search", "args": {"q": "a"}, "id": "g1"}},
                    {"functionCall": {"name": "search", "args": {"q": "b"}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "search", "id": "g1", "response": {"output": 1}}},
                    {"functionResponse": {"name": "search", "response": {"error": "no b"}}},
                    {"text": "Go on."},
                ],
            },
        ],
    }
    said = conversation(request)
    assert said.system == [text("Be brief.")]
    assert said.messages == [
        {"role": "user", "parts": [text("Price?")]},
        {
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "content": "Both, then add."},
                call("g1", "search", {"q": "a"}),
                call(None, "search", {"q": "b"}),
            ],
        },
        {"role": "tool", "parts": [answer("g1", 1)]},
        {"role": "tool", "parts": [answer(None, {"error": "no b"})]},
        {"role": "user", "parts": [text("Go on.")]},
    ]


def test_chat_completions_deepseek_and_ollama_fields() -> None:
    request = {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "developer", "content": "Use tools."},
            {"role": "user", "content": [{"type": "text", "text": "Price?"}]},
            {
                "role": "assistant",
                "content": None,
                "reasoning_content": "Look it up.",
                "tool_calls": [
                    {"id": "call_1", "function": {"name": "search", "arguments": '{"q": "a"}'}}
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "A is $1"},
            {
                "role": "assistant",
                "content": "",
                "thinking": "Now b.",
                "tool_calls": [{"function": {"name": "search", "arguments": {"q": "b"}}}],
            },
            {"role": "tool", "content": "B is $2", "tool_name": "search"},
        ]
    }
    said = conversation(request)
    assert said.system == [text("Be brief."), text("Use tools.")]
    assert said.messages == [
        {"role": "user", "parts": [text("Price?")]},
        {
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "content": "Look it up."},
                call("call_1", "search", '{"q": "a"}'),
            ],
        },
        {"role": "tool", "parts": [answer("call_1", "A is $1")]},
        {
            "role": "assistant",
            "parts": [{"type": "reasoning", "content": "Now b."}, call(None, "search", {"q": "b"})],
        },
        {"role": "tool", "parts": [answer(None, "B is $2")]},
    ]


def test_a_request_of_no_known_shape_is_an_empty_conversation() -> None:
    for request in ({}, {"messages": "oops"}, {"contents": [1, None]}, {"input": 3}):
        said = conversation(request)
        assert (said.system, said.messages) == ([], [])
