"""The Anthropic Messages kind, through the real ``anthropic`` SDK to the local Messages API
server (tests/model_server/anthropic.py): text ReAct and native tool use, extended thinking
shown and never acted on, the signed thinking blocks sent back as the API requires, stop
reasons, usage with the prompt cache's figures, one-line failures and the key rule."""

from __future__ import annotations

import asyncio
import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.backends.catalogue.keys import CUSTOM_KEY_ENV, KeyStore
from sandbox_app.backends.catalogue.presets import ServerConfig
from sandbox_app.backends.messages_api.anthropic_kind import AnthropicBackend
from sandbox_app.backends.registry import config_for, key_notice, make_backend
from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.cli.lane_spec import lane_from_spec
from sandbox_app.cli.main import main
from sandbox_app.core.results.evaluation import read_results
from sandbox_app.core.running.backend import Backend
from sandbox_app.core.running.events import (
    ActionParsed,
    Event,
    Notice,
    ReasoningDelta,
)
from sandbox_app.core.scenarios.lane_settings import LaneSettings
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.scenarios.scenario_file import scenarios_dir
from tests.helpers import builtin, finished, of_type, replies_of, run_events
from tests.model_server import ModelScript, ModelServer
from tests.model_server.anthropic import REDACTED, fake_anthropic, signature_of
from tests.model_server.replay import Recording

__all__ = ["fake_anthropic"]

SEARCHES = [("search", "Brightgrid Pro price per developer"), ("calculator", "20 * 12 * 7")]
# Inside the thinking: an action the engine must never run.
DECOY = "Maybe just guess.\nAction: calculator[25 * 12 * 7]\n"


UNSTARTED = {
    "type": "content_block_delta",
    "index": 3,
    "delta": {"type": "text_delta", "text": "Final Answer: 42"},
}
NAMELESS = {
    "type": "content_block_start",
    "index": 0,
    "content_block": {"type": "tool_use", "id": "toolu_01", "name": None, "input": {}},
}
INTO_THINKING = {**UNSTARTED, "index": 0}


def text_turns() -> list[str]:
    replies = replies_of("brightgrid")
    return [f"<think>{DECOY}step {i}</think>{r}" for i, r in enumerate(replies)]


SEARCH = json.dumps(
    {"name": "search", "arguments": {"query": "Brightgrid Pro price per developer"}}
)
CALCULATE = json.dumps({"name": "calculator", "arguments": {"expression": "20 * 12 * 7"}})
# A redacted block, then the thinking: blocks in the order Claude sends them.
NATIVE_TURNS = [
    f"<think>{DECOY}First the price.</think>I need the price per developer first."
    f"<tool_call>{SEARCH}</tool_call>",
    f"<redacted_thinking>{REDACTED}</redacted_thinking><think>Now the year.</think>"
    f"<tool_call>{CALCULATE}</tool_call>",
    "<think>Done.</think>$1,680 per year",
]


def stream_of(*events: dict[str, Any]) -> Recording:
    """A Messages stream written by hand (a broken or hostile one), each event by its type."""
    start = {"type": "message_start", "message": {"id": "msg_01", "type": "message",
             "role": "assistant", "model": "claude-test", "content": [], "stop_reason": None,
             "stop_sequence": None, "usage": {"input_tokens": 9, "output_tokens": 1}}}  # fmt: skip
    sent = [start, {"type": "ping"}, *events]
    return Recording.of(
        b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in sent)
    )


def thinking_x() -> list[dict[str, Any]]:
    """A thinking block "x", signed: four events."""
    block = {"type": "thinking", "thinking": "", "signature": ""}
    return [
        {"type": "content_block_start", "index": 0, "content_block": block},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "thinking_delta", "thinking": "x"}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "signature_delta", "signature": signature_of("x")}},
        {"type": "content_block_stop", "index": 0},
    ]  # fmt: skip


END = [
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
    {"type": "message_stop"},
]
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def backend_for(server: ModelServer, key: str = "test-key") -> AnthropicBackend:
    return AnthropicBackend(ServerConfig(server.base_url, key, timeout_s=10.0))


def brightgrid(**model: Any) -> Scenario:
    scenario = builtin("brightgrid")
    return scenario.with_changes(model=scenario.model.replace(**model))


def run(server: ModelServer, script: ModelScript, **model: Any) -> list[Event]:
    server.set_model("claude-test", script)
    return run_events(brightgrid(**model), backend_for(server), model="claude-test")


def actions(events: list[Event]) -> list[tuple[str, str]]:
    return [(a.tool, a.input) for a in of_type(events, ActionParsed)]


def thinking(events: list[Event]) -> str:
    return "".join(e.text for e in of_type(events, ReasoningDelta))


def test_text_react_three_steps_thinking_shown_never_acted_on(
    fake_anthropic: ModelServer,
) -> None:
    events = run(fake_anthropic, ModelScript(replies=text_turns()), thinking_budget=2048)
    done = finished(events)
    assert (done.status, done.answer) == ("answered", "$1,680 per year"), done.reason
    assert actions(events) == SEARCHES  # the decoy in the thinking was never run
    assert "Action: calculator[25 * 12 * 7]" in thinking(events)
    first, second, third = fake_anthropic.requests
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "temperature" not in first  # the API takes none but 1 with thinking on
    assert first["max_tokens"] > 2048  # the budget is counted inside max_tokens
    assert isinstance(first["system"], str)
    assert "Action" in first["system"]
    # Text ReAct sends the content only: the reply as the assistant's text.
    assert second["messages"][1] == {"role": "assistant", "content": replies_of("brightgrid")[0]}
    assert second["messages"][2]["role"] == "user"
    assert len(third["messages"]) == 5


def test_text_react_without_thinking_sends_stop_sequences_and_temperature(
    fake_anthropic: ModelServer,
) -> None:
    events = run(fake_anthropic, ModelScript(replies=replies_of("brightgrid")), temperature=0.3)
    assert finished(events).status == "answered"
    first = fake_anthropic.requests[0]
    assert first["stop_sequences"] == ["\nObservation:", "\nObservation "]
    assert first["temperature"] == 0.3
    assert "thinking" not in first


def test_native_tool_use_sends_the_signed_thinking_back_first(
    fake_anthropic: ModelServer,
) -> None:
    script = ModelScript(replies=NATIVE_TURNS)
    events = run(fake_anthropic, script, thinking_budget=2048, tool_calling="native")
    done = finished(events)
    assert (done.status, done.answer) == ("answered", "$1,680 per year"), done.reason
    assert actions(events) == SEARCHES
    assert "Action: calculator[25 * 12 * 7]" in thinking(events)
    first, second, third = fake_anthropic.requests
    assert [t["name"] for t in first["tools"]] == ["calculator", "search"]
    assert set(first["tools"][0]) == {"name", "description", "input_schema"}
    assert "stop_sequences" not in first
    assistant, results = second["messages"][1:]
    thought = DECOY + "First the price."
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": thought,
        "signature": signature_of(thought),
    }
    assert [b["type"] for b in assistant["content"]] == ["thinking", "text", "tool_use"]
    (call,) = [b for b in assistant["content"] if b["type"] == "tool_use"]
    assert call["input"] == {"query": "Brightgrid Pro price per developer"}
    (result,) = results["content"]
    assert result["type"] == "tool_result"
    assert result["tool_use_id"] == call["id"]
    assert "$20 per month" in result["content"]
    # The redacted block goes back too, unchanged and in its place.
    assert [b["type"] for b in third["messages"][3]["content"]] == [
        "redacted_thinking",
        "thinking",
        "tool_use",
    ]
    assert third["messages"][3]["content"][0]["data"] == REDACTED


@pytest.mark.parametrize("change", ["drop", "alter"])
def test_the_server_refuses_thinking_not_sent_back_as_it_was(
    fake_anthropic: ModelServer, change: str
) -> None:
    """What the real API does with a step-2 request that lost or changed its thinking block:
    the run above passes only because the block went back unchanged."""
    import anthropic

    script = ModelScript(replies=NATIVE_TURNS)
    run(fake_anthropic, script, thinking_budget=2048, tool_calling="native")
    body = copy.deepcopy(fake_anthropic.requests[1])
    blocks = body["messages"][1]["content"]
    if change == "drop":
        del blocks[0]
    else:
        blocks[0]["signature"] = "forged"

    async def send() -> None:
        client = anthropic.AsyncAnthropic(base_url=fake_anthropic.root, api_key="k")
        try:
            await client.messages.create(**{k: v for k, v in body.items() if k != "stream"})
        finally:
            await client.close()

    with pytest.raises(anthropic.BadRequestError) as refused:
        asyncio.run(send())
    message = refused.value.body["error"]["message"]  # type: ignore[index]
    if change == "drop":
        assert message.startswith(
            "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
            "`text`. When `thinking` is enabled, a final `assistant` message must start"
        )
    else:
        assert message == "messages.1.content.0: Invalid `signature` in `thinking` block"


def test_a_cut_by_max_tokens_is_reported_as_such(fake_anthropic: ModelServer) -> None:
    long = "Thought: " + "very " * 200
    events = run(fake_anthropic, ModelScript(replies=[long]), max_tokens=20)
    done = finished(events)
    assert done.status == "failed"
    assert done.reason == "Cut at Max tokens (20): raise Max tokens."
    assert done.metrics.cuts_by_limit == 1


def test_cache_figures_reach_the_metrics_and_the_system_prompt_is_marked(
    fake_anthropic: ModelServer,
) -> None:
    script = ModelScript(replies=text_turns(), cached_tokens=1000, cache_write_tokens=200)
    events = run(fake_anthropic, script, prompt_cache=True)
    metrics = finished(events).metrics
    assert (metrics.cache_read_tokens, metrics.cache_write_tokens) == (3000, 600)
    assert metrics.tokens_in >= 3 * 1200  # the cached part counts as tokens in
    (system,) = fake_anthropic.requests[0]["system"]
    assert system["cache_control"] == {"type": "ephemeral"}


@pytest.mark.parametrize(
    ("script", "line"),
    [
        (
            ModelScript(fail_status=401),
            "rejected the API key (401); check the API key.",
        ),
        (
            ModelScript(fail_status=429, retry_after=0),
            "gave up after 3 retries. Wait a minute or use another model.",
        ),
        (ModelScript(fail_status=529), "is overloaded (529): Overloaded. Try again"),
        (
            stream_of(*thinking_x(), OVERLOADED),
            "ended the stream with an error after 6 events (overloaded_error: Overloaded)",
        ),
        (
            ModelScript(replies=["I can't"], finish="refusal"),
            "The model refused to answer (stop_reason refusal)",
        ),
        (  # text for a block never started: not an answer
            stream_of(UNSTARTED, *END),
            "breaks the Messages API's rules after 2 events (a delta for content block 3, "
            "never started); the reply is not taken.",
        ),
        (
            stream_of(NAMELESS, *END),
            "(a tool_use block (content block 0) without a name or id)",
        ),
        (  # text into a thinking block
            stream_of(*thinking_x(), INTO_THINKING, *END),
            "(a text_delta for content block 0, a thinking)",
        ),
    ],
)
def test_failures_are_one_line(
    fake_anthropic: ModelServer, script: ModelScript | Recording, line: str
) -> None:
    if isinstance(script, Recording):  # a stream written by hand, replayed as it is
        fake_anthropic.replay(script)
        script = ModelScript()
    done = finished(run(fake_anthropic, script))
    assert done.status == "failed"
    assert line in done.reason, done.reason
    assert "\n" not in done.reason


def test_a_429_is_retried_after_its_wait(fake_anthropic: ModelServer) -> None:
    turns = replies_of("brightgrid")
    script = ModelScript(replies=turns, fail_status=429, fail_times=1, retry_after=0)
    events = run(fake_anthropic, script)
    assert finished(events).status == "answered"
    assert "Rate limited (429): retrying in 0 s (1 of 3)" in [
        n.text for n in of_type(events, Notice)
    ]


def test_a_connection_refused_is_one_line() -> None:
    backend = AnthropicBackend(ServerConfig("http://127.0.0.1:9", "k", timeout_s=5.0))
    done = finished(run_events(brightgrid(), backend, model="m"))
    assert done.reason == "Cannot connect to 127.0.0.1:9: is the server running?"


def test_the_model_list_comes_from_the_server(fake_anthropic: ModelServer) -> None:
    fake_anthropic.set_model("claude-b", ModelScript())
    fake_anthropic.set_model("claude-a", ModelScript())

    async def listed(backend: Backend) -> list[str]:
        try:
            return await backend.list_models()
        finally:
            await backend.aclose()

    assert asyncio.run(listed(backend_for(fake_anthropic))) == ["claude-a", "claude-b"]


def test_anthropic_key_goes_only_to_anthropic(
    fake_anthropic: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.delenv(CUSTOM_KEY_ENV, raising=False)
    keys = KeyStore(keyring_open=False)
    own = config_for("anthropic")
    assert own.url == "https://api.anthropic.com"
    assert own.kind.account is not None
    assert own.kind.account(own).env_var == "ANTHROPIC_API_KEY"
    config = config_for("anthropic", fake_anthropic.root, "claude-test", 10.0)
    assert "ANTHROPIC_API_KEY goes only to https://api.anthropic.com" in key_notice(config, keys)
    fake_anthropic.set_model("claude-test", ModelScript(replies=text_turns()))
    run_events(
        brightgrid(),
        make_backend(config, brightgrid(), keys),
        model="claude-test",
    )
    monkeypatch.setenv(CUSTOM_KEY_ENV, "local-key")
    run_events(
        brightgrid(),
        make_backend(config, brightgrid(), keys),
        model="claude-test",
    )
    assert fake_anthropic.keys[0] == "not-needed", fake_anthropic.keys
    assert fake_anthropic.keys[-1] == "local-key"
    assert "sk-ant-secret" not in fake_anthropic.keys


def test_no_key_for_anthropic_itself_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    backend = make_backend(config_for("anthropic", model="claude"), brightgrid(), KeyStore(False))
    done = finished(run_events(brightgrid(), backend, model="claude"))
    assert done.reason == (
        "No API key for Anthropic: set ANTHROPIC_API_KEY or enter a key in the backend settings."
    )


def test_run_backend_anthropic_with_a_thinking_budget(
    fake_anthropic: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_anthropic.set_model("claude-test", ModelScript(replies=text_turns()))
    flags = ["--backend", "anthropic", "--base-url", fake_anthropic.root]
    code = main(["run", *flags, "--model", "claude-test", "--thinking-budget", "4096"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "$1,680 per year" in out
    assert fake_anthropic.requests[0]["thinking"] == {"type": "enabled", "budget_tokens": 4096}


def test_eval_lane_kind_url_model(fake_anthropic: ModelServer, tmp_path: Path) -> None:
    base = LaneSettings()
    url = fake_anthropic.root
    lane = lane_from_spec(f"anthropic:{url}:claude:x,thinking_budget=2048", 60, base)
    assert (lane.config.backend_id, lane.config.url) == ("anthropic", url)
    assert lane.config.model == "claude:x"  # a model name may hold colons
    assert lane.settings.thinking_budget == 2048
    lane = lane_from_spec("ollama:http://gpu-box:11434/v1:qwen3:8b", 60, base)
    assert (lane.config.backend_id, lane.config.url) == ("ollama", "http://gpu-box:11434/v1")
    assert lane.config.model == "qwen3:8b"
    with pytest.raises(ValueError, match="scripted takes no URL"):
        lane_from_spec("scripted:http://h:1:m", 60, base)
    # The whole command, against the test server.
    data = json.loads((scenarios_dir() / "brightgrid.json").read_text(encoding="utf-8"))
    data["test_set"] = [{"question": data["question"], "expected": data["expected"]}]
    scenario = tmp_path / "one.json"
    scenario.write_text(json.dumps(data), encoding="utf-8")
    fake_anthropic.set_model("claude-test", ModelScript(replies=text_turns()))
    results = tmp_path / "results.jsonl"
    spec = f"anthropic:{url}:claude-test,thinking_budget=2048"
    code = eval_command([str(scenario), "--out", str(results), "--lane", spec], io.StringIO())
    assert code == 0
    (result,) = read_results(results)
    assert result.passed
    assert result.lane == f"anthropic:{url}:claude-test"
    assert fake_anthropic.requests[0]["thinking"]["budget_tokens"] == 2048


def test_a_reasoning_item_over_the_bound_is_dropped_said_and_never_sent_back(
    fake_anthropic: ModelServer,
) -> None:
    signature = "hostile-" + "s" * 2_000_000  # a signed thinking block of 2 MB
    redacted = "E" * 1_000_000  # an encrypted one of 1 MB
    turns = [
        f'<think>First the price.</think><think signature="{signature}">And then?</think>'
        f"<tool_call>{SEARCH}</tool_call>",
        f"<redacted_thinking>{redacted}</redacted_thinking><think>Now the year.</think>"
        f"<tool_call>{CALCULATE}</tool_call>",
        "<think>Done.</think>$1,680 per year",
    ]
    events = run(
        fake_anthropic,
        ModelScript(replies=turns),
        thinking_budget=2048,
        tool_calling="native",
    )
    done = finished(events)
    assert (done.status, done.answer) == ("answered", "$1,680 per year"), done.reason
    notices = [e.text for e in of_type(events, Notice) if "not kept" in e.text]
    assert notices == [
        "The server's signed thinking block is 2,000,017 bytes, over 256 KB: not kept, the next "
        "request goes without it.",
        "The server's reasoning item (anthropic) is 1,000,041 bytes, over 256 KB: not kept, the "
        "next request goes without it.",
    ]
    _, second, third = fake_anthropic.requests
    assert max(len(json.dumps(r)) for r in fake_anthropic.requests) < 20_000
    assert [b["type"] for b in second["messages"][1]["content"]] == ["thinking", "tool_use"]
    assert [b["type"] for b in third["messages"][3]["content"]] == ["thinking", "tool_use"]
