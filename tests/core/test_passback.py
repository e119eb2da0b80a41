"""What goes back to an OpenAI-compatible server within a tool-calling turn
(backends/transport/passback.py):
through the real SDK to test servers that, as DeepSeek, Kimi, Gemini's OpenAI-compatible endpoint
and OpenRouter do, refuse the next request when the reply's reasoning or signature is missing
(tests/model_server/passback.py names each wording's source)."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.backends.catalogue.presets import CUSTOM, Preset, ServerConfig, preset_with_id
from sandbox_app.backends.chat_completions.openai_compat import OpenAICompatBackend
from sandbox_app.backends.transport.passback import (
    Gathered,
    passed_back,
    preset_fields,
    required_field,
)
from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.core.results.evaluation import read_results
from sandbox_app.core.running.backend import PROVIDER
from sandbox_app.core.running.events import (
    ActionParsed,
    Event,
    Exchange,
    Notice,
    ReasoningDelta,
)
from sandbox_app.core.running.fork import as_json, exchanges_of
from sandbox_app.core.scenarios.scenario import EvalCase, Scenario
from sandbox_app.core.scenarios.scenario_file import save_scenario
from tests.helpers import builtin, finished, of_type, replies_of, run_events
from tests.model_server import ModelScript, ModelServer
from tests.model_server.passback import GEMINI_MISSING, signature

SEARCHES = [("search", "Brightgrid Pro price per developer"), ("calculator", "20 * 12 * 7")]
FIRST_THOUGHT = "The price first. Not Action: calculator[99 * 99] yet."
SECOND_THOUGHT = "Twenty a month, seven developers, twelve months."


def call(name: str, **arguments: str) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def thinking_replies(final_thinking: bool = True) -> list[str]:
    last = "<think>All known.</think>$1,680 per year" if final_thinking else "$1,680 per year"
    return [
        f"<think>{FIRST_THOUGHT}</think>I need the price per developer first.\n"
        + call("search", query="Brightgrid Pro price per developer"),
        f"<think>{SECOND_THOUGHT}</think>20 dollars a month each: the calculator gives the year.\n"
        + call("calculator", expression="20 * 12 * 7"),
        last,
    ]


def script_for(mode: Any) -> ModelScript:
    """A thinking model behind ``mode``'s server, its final (call-free) reply's thinking in
    the same server's field."""
    if mode == "gemini":  # its endpoint shows no thoughts unless asked
        return ModelScript(replies=thinking_replies(False), passback=mode, tool_call_style="ollama")
    if mode == "openrouter":
        return ModelScript(
            replies=thinking_replies(),
            passback=mode,
            reasoning_field="reasoning",
            chunk_style="openrouter",
        )
    return ModelScript(
        replies=thinking_replies(), passback=mode, reasoning_field="reasoning_content"
    )


def native(scenario: Scenario) -> Scenario:
    return scenario.with_changes(model=scenario.model.replace(tool_calling="native"))


def run(
    server: ModelServer,
    model: str,
    preset: Preset = CUSTOM,
    *,
    text_react: bool = False,
) -> list[Event]:
    backend = OpenAICompatBackend(ServerConfig(server.base_url, "test-key", preset))
    scenario = builtin("brightgrid") if text_react else native(builtin("brightgrid"))
    return run_events(scenario, backend, model=model)


def assistant_calls(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["messages"] if m["role"] == "assistant" and m.get("tool_calls")]


def assert_three_steps(events: list[Event]) -> None:
    done = finished(events)
    assert (done.status, done.answer) == ("answered", "$1,680 per year"), events[-3:]
    assert [(a.tool, a.input) for a in of_type(events, ActionParsed)] == SEARCHES


# Known families, by model name or by the server's preset: nothing refused, ever.
PRESET_CASES = [
    ("deepseek", "deepseek-reasoner", CUSTOM),
    ("kimi", "kimi-k2-thinking", CUSTOM),
    ("gemini", "gemini-3-pro-preview", CUSTOM),
    ("openrouter", "anthropic/claude-sonnet-4.5", preset_with_id("openrouter")),
]


@pytest.mark.parametrize(("mode", "model", "preset"), PRESET_CASES)
def test_a_known_family_gets_back_what_it_requires(
    fake_server: ModelServer, mode: Any, model: str, preset: Preset
) -> None:
    fake_server.set_model(model, script_for(mode))
    events = run(fake_server, model, preset)
    assert_three_steps(events)
    assert fake_server.stats["errors"] == 0
    assert of_type(events, Notice) == []
    first, second, third = fake_server.requests
    assert assistant_calls(first) == []
    (step_1,) = assistant_calls(second)
    assert len(assistant_calls(third)) == 2
    for request in fake_server.requests:  # the app's own record never goes out as it is
        assert all(PROVIDER not in m for m in request["messages"])
    if mode in ("deepseek", "kimi"):
        assert step_1["reasoning_content"] == FIRST_THOUGHT
        assert assistant_calls(third)[1]["reasoning_content"] == SECOND_THOUGHT
        assert "reasoning" not in step_1
        assert "reasoning_details" not in step_1
    elif mode == "gemini":
        (sent,) = step_1["tool_calls"]
        google = sent["extra_content"]["google"]
        assert google["thought_signature"] == signature(sent["id"], "search")
        assert "reasoning_content" not in step_1
    else:
        (detail,) = step_1["reasoning_details"]
        assert detail["text"] == FIRST_THOUGHT  # the streamed fragments joined
        assert detail["signature"] == signature(FIRST_THOUGHT)
        assert "reasoning_content" not in step_1
        assert "reasoning" not in step_1
    if mode != "gemini":  # the thinking is shown, and only the calls are acted on
        shown = "".join(e.text for e in of_type(events, ReasoningDelta))
        assert FIRST_THOUGHT in shown
        assert SECOND_THOUGHT in shown


@pytest.mark.parametrize(
    ("mode", "wording"),
    [
        ("deepseek", "reasoning_content back with its tool calls"),
        ("kimi", "reasoning_content back with its tool calls"),
        ("gemini", "extra_content.google.thought_signature back on each tool call"),
    ],
)
def test_an_unknown_model_learns_the_rule_from_the_400_once(
    fake_server: ModelServer, mode: Any, wording: str
) -> None:
    fake_server.set_model("my-thinker", script_for(mode))
    events = run(fake_server, "my-thinker")
    assert_three_steps(events)
    notices = [n.text for n in of_type(events, Notice)]
    assert notices == [
        f"The server requires {wording} for my-thinker: sent again with it "
        "(remembered for this model while the app runs)."
    ]
    assert fake_server.stats["errors"] == 1
    # The request inspector shows what went out, what was sent back included.
    (exchange,) = exchanges_of(events, 2)
    assert exchange.request["messages"] == fake_server.requests[-2]["messages"]
    (step_1,) = assistant_calls(json.loads(as_json(exchange))["request"])
    if mode == "gemini":
        assert "thought_signature" in json.dumps(step_1["tool_calls"])
    else:
        assert step_1["reasoning_content"] == FIRST_THOUGHT
    # A second run of the same model: sent right away, no refused request, no notice.
    again = run(fake_server, "my-thinker")
    assert_three_steps(again)
    assert of_type(again, Notice) == []
    assert fake_server.stats["errors"] == 1


def test_text_react_sends_nothing_back(fake_server: ModelServer) -> None:
    replies = [f"<think>{FIRST_THOUGHT}</think>{r}" for r in replies_of("brightgrid")]
    script = ModelScript(replies=replies, passback="deepseek", reasoning_field="reasoning_content")
    fake_server.set_model("deepseek-reasoner", script)
    events = run(fake_server, "deepseek-reasoner", text_react=True)
    assert finished(events).status == "answered"
    for request in fake_server.requests:
        assert "tools" not in request
        for message in request["messages"]:
            assert set(message) == {"role", "content"}, message
            assert "99 * 99" not in message["content"]


def test_a_vllm_server_is_sent_reasoning_never_reasoning_content(
    fake_server: ModelServer,
) -> None:
    # vLLM reads "reasoning" and silently drops "reasoning_content" (vllm-project/vllm#38488).
    script = ModelScript(replies=thinking_replies(), passback="vllm", reasoning_field="reasoning")
    fake_server.set_model("Qwen/Qwen3-8B", script)
    assert_three_steps(run(fake_server, "Qwen/Qwen3-8B", preset_with_id("vllm")))
    (step_1,) = assistant_calls(fake_server.requests[1])
    assert step_1["reasoning"] == FIRST_THOUGHT
    assert "reasoning_content" not in step_1


def test_a_server_with_no_rule_is_sent_neither_field(fake_server: ModelServer) -> None:
    # The same vLLM-style stream from a custom URL: nothing says the server reads either
    # field, so neither is sent (some servers refuse a field they do not know).
    script = ModelScript(replies=thinking_replies(), passback="vllm", reasoning_field="reasoning")
    fake_server.set_model("local-thinker", script)
    events = run(fake_server, "local-thinker")
    assert_three_steps(events)
    assert FIRST_THOUGHT in "".join(e.text for e in of_type(events, ReasoningDelta))
    for request in fake_server.requests:
        for message in assistant_calls(request):
            assert set(message) == {"role", "content", "tool_calls"}, message


def test_the_exchange_is_what_the_server_received(fake_server: ModelServer) -> None:
    fake_server.set_model("deepseek-reasoner", script_for("deepseek"))
    events = run(fake_server, "deepseek-reasoner")
    for step, received in zip((1, 2, 3), fake_server.requests, strict=True):
        (exchange,) = exchanges_of(events, step)
        assert isinstance(exchange, Exchange)
        assert exchange.request["messages"] == received["messages"]


@pytest.mark.parametrize(
    ("message", "field"),
    [
        # DeepSeek, as quoted in Dais-Project/Dais#61 (with backticks) and
        # JohnnyZ93/oai-compatible-copilot#215 (without).
        ("The `reasoning_content` in the thinking mode must be passed back to the API.",
         "reasoning_content"),
        ("The reasoning_content in the thinking mode must be passed back to the API.",
         "reasoning_content"),
        # Kimi through SiliconFlow (hAcKlyc/MyAgents#69) and Moonshot (bytedance/deer-flow#3043).
        ("thinking is enabled but reasoning_content is missing in assistant tool call message "
         "at index 6", "reasoning_content"),
        (GEMINI_MISSING.format(name="search", position=2), "thought_signature"),
        # Not a passback: a limit, a refused parameter, another field's wording.
        ("max_tokens is too large: 200000.", None),
        ("Unsupported parameter: 'stop' is not supported with this model.", None),
        ("Invalid value for reasoning_content: expected a string.", None),
    ],
)  # fmt: skip
def test_the_400s_that_teach_a_rule(message: str, field: str | None) -> None:
    assert required_field(message) == field


def test_streamed_details_and_signatures_are_gathered_whole() -> None:
    gathered = Gathered()
    piece = {"type": "reasoning.text", "format": "unknown", "index": 0}
    gathered.add({"reasoning": "Twenty ", "reasoning_details": [piece | {"text": "Twenty "}]},
                 "Twenty ")  # fmt: skip
    gathered.add({"reasoning": "a month", "reasoning_details": [piece | {"text": "a month"}]},
                 "a month")  # fmt: skip
    gathered.add({"reasoning_details": [piece | {"signature": "s1"}]}, "")
    extra = {"google": {"thought_signature": "t1"}}
    gathered.add({"tool_calls": [{"index": 0, "id": "c1", "extra_content": extra}]}, "")
    carry = gathered.carry()
    assert carry is not None
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "s"}}],
        PROVIDER: carry,
    }
    sent = passed_back(message, {"reasoning_details", "thought_signature"})
    assert sent["reasoning_details"] == [piece | {"text": "Twenty a month", "signature": "s1"}]
    assert sent["tool_calls"][0]["extra_content"] == extra
    assert PROVIDER not in sent
    assert "reasoning" not in sent
    assert passed_back(message, set()) == {k: v for k, v in message.items() if k != PROVIDER}
    assert Gathered().carry() is None


@pytest.mark.parametrize(
    ("preset", "host", "model", "fields"),
    [
        ("custom", "api.deepseek.com", "deepseek-chat", {"reasoning_content"}),
        ("custom", "api.moonshot.ai", "kimi-k2-thinking", {"reasoning_content"}),
        ("custom", "api.together.xyz", "moonshotai/Kimi-K2-Thinking", {"reasoning_content"}),
        ("custom", "generativelanguage.googleapis.com", "gemini-3-pro-preview",
         {"thought_signature"}),
        ("openrouter", "openrouter.ai", "google/gemini-3-pro-preview", {"reasoning_details"}),
        ("vllm", "localhost:8000", "deepseek-ai/DeepSeek-V3.2", {"reasoning"}),
        # A local server's model family says nothing about what that server reads.
        ("ollama", "localhost:11434", "deepseek-r1:8b", set()),
        ("openai", "api.openai.com", "gpt-5", set()),
        ("custom", "127.0.0.1:8080", "qwen3-8b", set()),
    ],
)  # fmt: skip
def test_the_preset_rules(preset: str, host: str, model: str, fields: set[str]) -> None:
    assert preset_fields(preset, host, model) == fields


def test_runs_in_flight_when_another_learns_the_rule_are_sent_again_too(
    fake_server: ModelServer, tmp_path: Path
) -> None:
    # eval --concurrency 4: four runs' second requests are all out when the first 400 comes
    # back (the server holds the four refusals and answers them together). Each must be sent
    # again with reasoning_content, whichever of them learnt the rule first.
    script = script_for("deepseek")
    fake_server.set_model("my-thinker", replace(script, refusals_together=4))
    scenario = builtin("brightgrid")
    case = EvalCase(scenario.question, scenario.expected)
    path = tmp_path / "four.json"
    save_scenario(scenario.with_changes(test_set=(case,) * 4), path)
    out = tmp_path / "results.jsonl"
    lane = f"{fake_server.base_url}:my-thinker,tool_calling=native"
    args = [str(path), "--lane", lane, "--concurrency", "4", "--out", str(out)]
    assert eval_command(args, io.StringIO()) == 0
    results = read_results(out)
    assert [(r.status, r.answer) for r in results] == [("answered", "$1,680 per year")] * 4
    assert fake_server.stats["errors"] == 4  # all four were in flight, all four sent again
