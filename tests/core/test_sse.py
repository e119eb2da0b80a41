"""The stream decoder on its own: bytes → lines → payloads → deltas, with exact outputs.

Chunk shapes are real servers', copied from published captures: each sample names the server,
its version where known, and where the capture was published. Content, reasoning, tool-call
pieces, finish reason and usage are read; every other field a server adds is ignored.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable

import pytest

from sandbox_app.backends.transport.sse import (
    DONE,
    decode_chunk,
    gathered_reads,
    sse_data,
    sse_lines,
)
from sandbox_app.core.running.backend import BackendError, Delta, ToolCallPiece, Usage

# OpenAI o3-mini-2025-01-31, as recorded in Discourse's test "uses max_completion_tokens for
# reasoning models" in
# https://github.com/discourse/discourse/blob/main/plugins/discourse-ai/spec/lib/completions/endpoints/open_ai_spec.rb
# — the whole stream, first chunk to [DONE], usage in a last chunk with no choices.
OPENAI_O3_MINI = """\
data: {"id":"chatcmpl-B2VwlY6KzSDtHvg8pN1VAfRhhLFgn","object":"chat.completion.chunk","created":1739939159,"model":"o3-mini-2025-01-31","service_tier":"default","system_fingerprint":"fp_ef58bd3122","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-B2VwlY6KzSDtHvg8pN1VAfRhhLFgn","object":"chat.completion.chunk","created":1739939159,"model":"o3-mini-2025-01-31","service_tier":"default","system_fingerprint":"fp_ef58bd3122","choices":[{"index":0,"delta":{"content":"hello"},"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-B2VwlY6KzSDtHvg8pN1VAfRhhLFgn","object":"chat.completion.chunk","created":1739939159,"model":"o3-mini-2025-01-31","service_tier":"default","system_fingerprint":"fp_ef58bd3122","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}

data: {"id":"chatcmpl-B2VwlY6KzSDtHvg8pN1VAfRhhLFgn","object":"chat.completion.chunk","created":1739939159,"model":"o3-mini-2025-01-31","service_tier":"default","system_fingerprint":"fp_ef58bd3122","choices":[],"usage":{"prompt_tokens":22,"completion_tokens":203,"total_tokens":225,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":192,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}

data: [DONE]

"""  # noqa: E501

CHUNKS: dict[str, tuple[str, Delta]] = {
    # llama.cpp b6097 serving gpt-oss:20b, as logged in lua/ask-openai/rewrites/harmony/NOTES.md
    # (an earlier version) of https://github.com/g0t4/ask-openai.nvim: the first chunk, content
    # null.
    "llama.cpp first chunk": (
        '{"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],'
        '"created":1754523863,"id":"chatcmpl-X6urH4f6JOotPwco2EgcgeoM6ZWup59u",'
        '"model":"gpt-oss:20b","system_fingerprint":"b6097-9515c613",'
        '"object":"chat.completion.chunk"}',
        Delta(""),
    ),
    # llama.cpp b6097 (same): usage and timings ride on the finish chunk.
    "llama.cpp usage with timings": (
        '{"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"created":1754524122,'
        '"id":"chatcmpl-yPk7z9nC22CofOlh100qQdHVEDMNYCb1","model":"gpt-oss:20b",'
        '"system_fingerprint":"b6097-9515c613","object":"chat.completion.chunk",'
        '"usage":{"completion_tokens":247,"prompt_tokens":1085,"total_tokens":1332},'
        '"timings":{"prompt_n":1085,"prompt_ms":203.378,"prompt_per_token_ms":0.18744516129032257,'
        '"prompt_per_second":5334.893646313762,"predicted_n":247,"predicted_ms":933.63,'
        '"predicted_per_token_ms":3.7798785425101213,"predicted_per_second":264.5587652496171}}',
        Delta("", Usage(1085, 247), finish_reason="stop"),
    ),
    # llama.cpp b9554, Gemma-4, as posted in https://github.com/openai-php/client/issues/780:
    # reasoning_content only, timings on every chunk.
    "llama.cpp reasoning_content": (
        '{"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning_content":" if"}}],'
        '"created":1781492230,"id":"chatcmpl-qC6laQHbZ2CmxNvJ4NoB1L93LcVF7nfe",'
        '"model":"gemma-4-31B-it-UD-Q6_K_XL.gguf","system_fingerprint":"b9554-d403f00ec",'
        '"object":"chat.completion.chunk","timings":{"cache_n":7,"prompt_n":10,'
        '"prompt_ms":251.51,"predicted_n":18,"draft_n":18,"draft_n_accepted":8}}',
        Delta("", reasoning=" if"),
    ),
    # vLLM 0.17.0, Qwen3.5-27B, as posted in https://github.com/vllm-project/vllm-ascend/issues/10940:
    # the new "reasoning" field and token_ids.
    "vLLM reasoning": (
        '{"id":"chatcmpl-740c22ad-c984-49a4-9a78-b7bbdc69b3d2","object":"chat.completion.chunk",'
        '"created":1773161262,"model":"local-qwen3.5-27b","choices":[{"index":0,'
        '"delta":{"reasoning":"Thinking"},"logprobs":null,"finish_reason":null,'
        '"token_ids":null}]}',
        Delta("", reasoning="Thinking"),
    ),
    # vLLM (version not stated, April 2025), the test "vllm capture" in
    # https://github.com/g0t4/ask-openai.nvim/blob/01b2cc5de6c4e97540bfbbefc8644d8c28a5a371/lua/ask-openai/tools/tests/sse.lua
    # — the last chunk of a tool call, empty content and stop_reason.
    "vLLM tool-call finish": (
        '{"id":"chatcmpl-d0c68c86be0641129cffa5053c0c217e","object":"chat.completion.chunk",'
        '"created":1744513664,"model":"","choices":[{"index":0,"delta":{"content":""},'
        '"logprobs":null,"finish_reason":"tool_calls","stop_reason":null}]}',
        Delta("", finish_reason="tool_calls"),
    ),
    # Ollama, Aug 2025 build, gpt-oss:20b, from a code comment in
    # lua/ask-openai/prediction/backends/llama.lua (an earlier version) of https://github.com/g0t4/ask-openai.nvim:
    # role repeated on a content chunk. The capture shows only "choices"; the other keys are its
    # first line's.
    "Ollama content": (
        '{"id":"chatcmpl-900","object":"chat.completion.chunk","created":1754453131,'
        '"model":"gpt-oss:20b","system_fingerprint":"fp_ollama","choices":[{"index":0,'
        '"delta":{"role":"assistant","content":" }"},"finish_reason":null}]}',
        Delta(" }"),
    ),
    # Ollama, same capture: content "" beside reasoning.
    "Ollama reasoning": (
        '{"id":"chatcmpl-900","object":"chat.completion.chunk","created":1754453131,'
        '"model":"gpt-oss:20b","system_fingerprint":"fp_ollama","choices":[{"index":0,'
        '"delta":{"role":"assistant","content":"","reasoning":"?"},"finish_reason":null}]}',
        Delta("", reasoning="?"),
    ),
    # LM Studio 0.3.9b3, a DeepSeek-R1 distill, as posted in
    # https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/378: reasoning_content, no
    # content key.
    "LM Studio reasoning_content": (
        '{"id":"chatcmpl-ohpdozcvcgbgxq5y5y768","object":"chat.completion.chunk",'
        '"created":1738343241,"model":"deepseek-r1-distill-llama-8b",'
        '"system_fingerprint":"deepseek-r1-distill-llama-8b","choices":[{"index":0,'
        '"delta":{"role":"assistant","reasoning_content":"le"},"logprobs":null,'
        '"finish_reason":null}]}',
        Delta("", reasoning="le"),
    ),
    # OpenRouter, google/gemini-2.5-flash, from a client's console log (source not identified): a
    # plain model still sends the keys.
    "OpenRouter content with reasoning null": (
        '{"choices":[{"index":0,"delta":{"role":"assistant","content":"Salut",'
        '"reasoning":null,"reasoning_details":[]}}]}',
        Delta("Salut"),
    ),
    # OpenRouter, deepseek/deepseek-r1 via Azure (2025-07-31), as posted in
    # https://github.com/huggingface/responses.js/pull/19: reasoning and an empty
    # reasoning_details list.
    "OpenRouter reasoning": (
        '{"id":"gen-1753977105-kKgOdaMcUNYTUE8lwZD8","provider":"Azure",'
        '"model":"deepseek/deepseek-r1","object":"chat.completion.chunk","created":1753977105,'
        '"choices":[{"index":0,"delta":{"role":"assistant","content":"",'
        '"reasoning":", so I need","reasoning_details":[]},"finish_reason":null,'
        '"native_finish_reason":null,"logprobs":null}]}',
        Delta("", reasoning=", so I need"),
    ),
    # OpenRouter, z-ai/glm-4.7 via Parasail, from a client's test fixture (repository not
    # identified): usage with cost and details beside a choice.
    "OpenRouter usage with cost": (
        '{"id":"gen-1767661749-Ot82GxmBb3KHB9UFhSnd","provider":"Parasail",'
        '"model":"z-ai/glm-4.7","object":"chat.completion.chunk","created":1767661749,'
        '"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,'
        '"native_finish_reason":null,"logprobs":null}],"usage":{"prompt_tokens":8,'
        '"completion_tokens":174,"total_tokens":182,"cost":0.00036531,"is_byok":false,'
        '"prompt_tokens_details":{"cached_tokens":2,"audio_tokens":0,"video_tokens":0},'
        '"completion_tokens_details":{"reasoning_tokens":173,"image_tokens":0}}}',
        Delta("", Usage(8, 174, reasoning_tokens=173, cache_read_tokens=2)),
    ),
    # DeepSeek API, deepseek-reasoner (2025-10-01), as recorded in mockChatCompletionStreamResp in
    # https://github.com/neuraxes/neurouter/blob/main/internal/data/upstream/deepseek/deepseek_test.go:
    # content null while reasoning, reasoning_content null while answering, usage on the finish
    # chunk.
    "DeepSeek reasoning": (
        '{"id":"f802c271-d4da-4773-b8b3-b1e4dfbf14f3","object":"chat.completion.chunk",'
        '"created":1759299469,"model":"deepseek-reasoner","choices":[{"index":0,'
        '"delta":{"content":null,"reasoning_content":"Hmm, the user just said \\"Hello!\\""},'
        '"logprobs":null,"finish_reason":null}]}',
        Delta("", reasoning='Hmm, the user just said "Hello!"'),
    ),
    "DeepSeek answer": (
        '{"id":"f802c271-d4da-4773-b8b3-b1e4dfbf14f3","object":"chat.completion.chunk",'
        '"created":1759299469,"model":"deepseek-reasoner","choices":[{"index":0,'
        '"delta":{"content":"Hello","reasoning_content":null},"logprobs":null,'
        '"finish_reason":null}]}',
        Delta("Hello"),
    ),
    "DeepSeek usage on the finish chunk": (
        '{"id":"f802c271-d4da-4773-b8b3-b1e4dfbf14f3","object":"chat.completion.chunk",'
        '"created":1759299469,"model":"deepseek-reasoner","choices":[{"index":0,'
        '"delta":{"content":"","reasoning_content":null},"logprobs":null,'
        '"finish_reason":"stop"}],"usage":{"prompt_tokens":6,"completion_tokens":169,'
        '"total_tokens":175,"prompt_tokens_details":{"cached_tokens":0},'
        '"completion_tokens_details":{"reasoning_tokens":117},"prompt_cache_hit_tokens":1,'
        '"prompt_cache_miss_tokens":5}}',
        Delta("", Usage(6, 169, reasoning_tokens=117, cache_read_tokens=0), finish_reason="stop"),
    ),
    # OpenAI gpt-4o-2024-08-06, recorded from the live API in openai-python's snapshot
    # c6aa7e397b71….bin (test tests/lib/chat/test_completions_streaming.py), in
    # https://github.com/openai/openai-python/tree/main/.inline-snapshot/external: a tool call,
    # content null.
    "OpenAI tool call": (
        '{"id":"chatcmpl-ABfw8AOXnoa2kzy11vVTSjuQhHCQr","object":"chat.completion.chunk",'
        '"created":1727346176,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_7568d46099",'
        '"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{'
        '"index":0,"id":"call_c91SqDXlYFuETYv8mUHzz6pp","type":"function","function":{'
        '"name":"GetWeatherArgs","arguments":""}}],"refusal":null},"logprobs":null,'
        '"finish_reason":null}]}',
        Delta(
            "", tool_calls=(ToolCallPiece(0, "call_c91SqDXlYFuETYv8mUHzz6pp", "GetWeatherArgs"),)
        ),
    ),
    # OpenAI parallel calls, same model and folder, snapshot f82268f2fefd….bin: the second call
    # starts with its own index.
    "OpenAI second parallel call": (
        '{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_DNYT",'
        '"type":"function","function":{"name":"get_stock_price","arguments":""}}]},'
        '"finish_reason":null}]}',
        Delta("", tool_calls=(ToolCallPiece(1, "call_DNYT", "get_stock_price"),)),
    ),
    # vLLM, the same "vllm capture" as above: the name with no "arguments" key, then fragments.
    "vLLM tool-call name": (
        '{"id":"chatcmpl-d0c68c86be0641129cffa5053c0c217e","object":"chat.completion.chunk",'
        '"created":1744513664,"model":"","choices":[{"index":0,"delta":{"tool_calls":[{'
        '"id":"chatcmpl-tool-ca99dda515524c6abe47d1ea22813507","type":"function","index":0,'
        '"function":{"name":"run_command"}}]},"logprobs":null,"finish_reason":null}]}',
        Delta(
            "",
            tool_calls=(
                ToolCallPiece(0, "chatcmpl-tool-ca99dda515524c6abe47d1ea22813507", "run_command"),
            ),
        ),
    ),
    "vLLM tool-call arguments": (
        '{"id":"chatcmpl-d0c68c86be0641129cffa5053c0c217e","object":"chat.completion.chunk",'
        '"created":1744513664,"model":"","choices":[{"index":0,"delta":{"tool_calls":[{'
        '"index":0,"function":{"arguments":"{\\"command\\": \\""}}]},"logprobs":null,'
        '"finish_reason":null}]}',
        Delta("", tool_calls=(ToolCallPiece(0, arguments='{"command": "'),)),
    ),
    # Kimi-K2 on vLLM, as printed in https://github.com/vllm-project/vllm/pull/46344: arguments
    # null with the name, id "functions.…:0".
    "Kimi tool-call name": (
        '{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,'
        '"id":"functions.get_current_weather:0","type":"function","function":{'
        '"arguments":null,"name":"get_current_weather"}}]},"finish_reason":null}]}',
        Delta(
            "",
            tool_calls=(
                ToolCallPiece(0, "functions.get_current_weather:0", "get_current_weather"),
            ),
        ),
    ),
    # Ollama, qwen2.5-coder (April 2025), the test "parses ollama all-in-one tool_calls" in the
    # same sse.lua: the whole call, arguments included, in one delta.
    "Ollama tool call in one delta": (
        '{"id":"chatcmpl-304","object":"chat.completion.chunk","created":1744521962,'
        '"model":"qwen2.5-coder:7b-instruct-q8_0","system_fingerprint":"fp_ollama","choices":'
        '[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":'
        '"call_lbcjwr0u","index":0,"type":"function","function":{"name":"run_command",'
        '"arguments":"{\\"command\\":\\"ls -a\\"}"}}]},"finish_reason":null}]}',
        Delta(
            "",
            tool_calls=(ToolCallPiece(0, "call_lbcjwr0u", "run_command", '{"command":"ls -a"}'),),
        ),
    ),
    # Not a server's: arguments sent as an object are read as their JSON; no index: its place.
    "arguments as an object": (
        '{"choices":[{"delta":{"tool_calls":[{"function":{"name":"f","arguments":{"a":1}}}]}}]}',
        Delta("", tool_calls=(ToolCallPiece(0, "", "f", '{"a": 1}'),)),
    ),
    # Not a server's: usage with null counts reads as zero, not as an error.
    "usage with null counts": (
        '{"choices":[],"usage":{"prompt_tokens":null,"completion_tokens":null}}',
        Delta("", Usage(0, 0)),
    ),
    "error null is no error": (
        '{"choices":[{"delta":{"content":"ok"}}],"error":null}',
        Delta("ok"),
    ),
}


def run(make: Callable[[], AsyncGenerator[str | bytes, None]]) -> list[str | bytes]:
    async def collect() -> list[str | bytes]:
        return [item async for item in make()]

    return asyncio.run(collect())


async def feed(chunks: Iterable[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


def lines_of(*chunks: bytes) -> list[str | bytes]:
    return run(lambda: sse_lines(feed(chunks)))


# ---- decode_chunk ----------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CHUNKS))
def test_real_chunk_shapes_decode_to_their_text_and_usage(name: str) -> None:
    data, expected = CHUNKS[name]
    assert decode_chunk(data) == expected


def test_a_content_delta_is_its_text() -> None:
    data = '{"choices":[{"index":0,"delta":{"content":"Thought: I"},"finish_reason":null}]}'
    assert decode_chunk(data) == Delta("Thought: I")


def test_an_error_chunk_mid_stream_is_one_line_with_the_servers_message() -> None:
    # OpenAI's error body for gpt-5 (https://github.com/huggingface/smolagents/pull/1662), sent as
    # a data event the way servers report a failure after the 200 was sent.
    data = json.dumps(
        {
            "error": {
                "message": "Unsupported parameter: 'stop' is not supported with this model.",
                "type": "invalid_request_error",
                "param": "stop",
                "code": "unsupported_parameter",
            }
        }
    )
    with pytest.raises(BackendError) as caught:
        decode_chunk(data)
    assert str(caught.value) == (
        "The server reported an error mid-stream: "
        "Unsupported parameter: 'stop' is not supported with this model."
    )


def test_an_error_beside_a_choice_wins_and_only_its_first_line_is_kept() -> None:
    # OpenRouter's documented error shape ({"code": number, "message": string}) on a chunk.
    data = json.dumps(
        {
            "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
            "error": {"code": 502, "message": "Provider disconnected\nupstream trace …"},
        }
    )
    with pytest.raises(BackendError) as caught:
        decode_chunk(data)
    assert str(caught.value) == "The server reported an error mid-stream: Provider disconnected."


def test_an_error_that_is_a_plain_string() -> None:
    with pytest.raises(BackendError) as caught:
        decode_chunk('{"error": "model overloaded"}')
    assert str(caught.value) == "The server reported an error mid-stream: model overloaded."


def test_malformed_json_is_a_value_error() -> None:
    # A ValueError is what the backend reports as "not valid JSON".
    with pytest.raises(ValueError, match="column 38"):  # the end: the object was never closed
        decode_chunk('{"choices":[{"delta":{"content":"hi"}')


def test_a_chunk_nested_past_the_file_readers_limit_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="too deeply"):
        decode_chunk('{"choices":' + "[" * 100_000 + "]" * 100_000 + "}")


@pytest.mark.parametrize("data", ["[1, 2]", "null", '"hello"', "42", "true"])
def test_json_that_is_not_an_object_is_a_value_error(data: str) -> None:
    with pytest.raises(ValueError, match=r"^chunk is not a JSON object$"):
        decode_chunk(data)


# ---- sse_lines -------------------------------------------------------------------------


def test_lines_split_across_byte_chunks_are_joined() -> None:
    assert lines_of(b'data: {"choi', b'ces":[]}\n\nda', b"ta: [DONE]\n\n") == [
        'data: {"choices":[]}',
        "",
        "data: [DONE]",
        "",
    ]


def test_crlf_line_ends_are_removed_also_when_cr_and_lf_come_apart() -> None:
    assert lines_of(b"data: a\r\n\r\ndata: b\r", b"\n\r\n") == ["data: a", "", "data: b", ""]


def test_a_character_cut_between_two_reads_is_read_whole() -> None:
    assert lines_of(b"data: caf\xc3", b"\xa9\n") == ["data: café"]


def test_a_last_line_without_a_newline_still_comes_out() -> None:
    assert lines_of(b"data: [DO", b"NE]") == ["data: [DONE]"]


def test_invalid_utf8_becomes_replacement_characters_and_the_lines_go_on() -> None:
    """Text from outside is text: a bad byte is "�", never a stream that stops."""
    lines = lines_of(b"data: ok\n", b"data: \xff\xfe\n", b"data: after\n")
    assert lines == ["data: ok", "data: \ufffd\ufffd", "data: after"]


def test_invalid_utf8_in_an_unfinished_last_line_is_a_replacement_character() -> None:
    assert lines_of(b"data: \xc3") == ["data: \ufffd"]


# ---- sse_data and the whole pipeline -----------------------------------------------------


@pytest.mark.parametrize(
    ("line", "payload"),
    [
        ('data: {"a":1}', '{"a":1}'),
        ("data:[DONE]", DONE),
        ("data:   padded  ", "padded"),
        # OpenRouter's keep-alive comment (https://openrouter.ai/docs/api-reference/streaming).
        (": OPENROUTER PROCESSING", None),
        ("", None),
        ("event: message", None),
        ("id: 7", None),
    ],
)
def test_only_data_lines_have_a_payload(line: str, payload: str | None) -> None:
    assert sse_data(line) == payload


def test_a_recorded_stream_cut_into_odd_pieces_decodes_to_its_text_and_usage() -> None:
    raw = OPENAI_O3_MINI.encode()
    pieces = [raw[i : i + 7] for i in range(0, len(raw), 7)]

    async def decode() -> list[Delta]:
        deltas = []
        async for line in sse_lines(gathered_reads(feed(pieces))):
            data = sse_data(line)
            if data is None:
                continue
            if data == DONE:
                break
            deltas.append(decode_chunk(data))
        return deltas

    assert asyncio.run(decode()) == [
        Delta(""),
        Delta("hello"),
        Delta("", finish_reason="stop"),
        # o3-mini thinks without showing it: only the count says so.
        Delta("", Usage(22, 203, reasoning_tokens=192, cache_read_tokens=0)),
    ]


def test_gathered_reads_passes_every_chunk_on_in_order() -> None:
    chunks = [b"a", b"bc", b"", b"d"]
    assert run(lambda: gathered_reads(feed(chunks))) == chunks


def test_the_prompt_tokens_read_from_the_servers_cache_are_kept() -> None:
    # DeepSeek's deepseek-chat finish chunk (DeepSeek API docs, context caching):
    # prompt_tokens_details.cached_tokens and its own prompt_cache_hit_tokens agree.
    both = (
        '{"choices":[{"index":0,"delta":{"content":""},"finish_reason":"tool_calls"}],'
        '"usage":{"prompt_tokens":161,"completion_tokens":25,"total_tokens":186,'
        '"prompt_tokens_details":{"cached_tokens":128},"prompt_cache_hit_tokens":128,'
        '"prompt_cache_miss_tokens":33}}'
    )
    usage = decode_chunk(both).usage
    assert usage is not None
    assert usage.cache_read_tokens == 128
    # Only DeepSeek's own field (its older responses): read too.
    hit_only = (
        '{"choices":[],"usage":{"prompt_tokens":161,"completion_tokens":25,'
        '"prompt_cache_hit_tokens":64}}'
    )
    usage = decode_chunk(hit_only).usage
    assert usage is not None
    assert usage.cache_read_tokens == 64
    # A server that says nothing of a cache: not reported (the table shows a dash, not 0).
    plain = '{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}'
    usage = decode_chunk(plain).usage
    assert usage is not None
    assert usage.cache_read_tokens is None
