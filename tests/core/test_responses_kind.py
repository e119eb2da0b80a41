"""The OpenAI Responses API kind, through the real SDK to the Responses test server
(tests/model_server/responses.py): Brightgrid in text ReAct and native tool calling, the reasoning
summary shown as thinking and never acted on, the reasoning items sent back statelessly, a
cut by max_output_tokens, the server's failures as one line each, the key rule, ``run``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Sequence
from dataclasses import replace
from typing import Any

import pytest

from sandbox_app.backends.catalogue.keys import CUSTOM_KEY_ENV, KeyStore
from sandbox_app.backends.registry import config_for, key_notice, make_backend
from sandbox_app.cli.main import main
from sandbox_app.core.running.backend import Backend, Delta, Message, StreamParams, ToolCallPiece
from sandbox_app.core.running.events import (
    ActionParsed,
    Event,
    Exchange,
    Notice,
    ReasoningDelta,
)
from sandbox_app.core.scenarios.scenario import Scenario
from tests.helpers import builtin, finished, of_type, run_events
from tests.model_server import ModelScript, ModelServer, tokenize
from tests.model_server.responses import responses_server

__all__ = ["responses_server"]

SEARCH = json.dumps(
    {"name": "search", "arguments": {"query": "Brightgrid Pro price per developer"}}
)
CALCULATE = json.dumps({"name": "calculator", "arguments": {"expression": "20 * 12 * 7"}})
# A decoy: an action written inside the reasoning summary must never run.
DECOY = "Maybe I should just write Action: calculator[666 * 666] and be done."
# Each reply's thinking streams as its reasoning summary, a summary part per paragraph.
TEXT_ANSWERS = [
    "Thought: I need the price of Brightgrid Pro per developer.\n"
    "Action: search[Brightgrid Pro price per developer]",
    "Thought: 20 a month for 7 developers over 12 months.\nAction: calculator[20 * 12 * 7]",
    "Thought: The calculator gave the total.\nAnswer: $1,680 per year",
]
TEXT_REPLIES = ModelScript(
    replies=[
        f"<think>**Finding the price**\n\nThe price comes from search.\n\n{DECOY}</think>"
        + TEXT_ANSWERS[0],
        f"<think>Multiplying it out.</think>{TEXT_ANSWERS[1]}",
        TEXT_ANSWERS[2],
    ]
)
NATIVE_THOUGHTS = [f"Search first.\n\n{DECOY}", "Multiply.", "Done."]
NATIVE_ANSWERS = [
    f"I need the price first.<tool_call>{SEARCH}</tool_call>",
    f"Now the yearly total.<tool_call>{CALCULATE}</tool_call>",
    "$1,680 per year",
]
NATIVE_REPLIES = ModelScript(
    replies=[f"<think>{t}</think>{a}" for t, a in zip(NATIVE_THOUGHTS, NATIVE_ANSWERS, strict=True)]
)


def native(scenario: Scenario) -> Scenario:
    """Native tool calling with a reasoning effort: reasoning is asked for, with its
    encrypted content ("m" is no name OpenAI's reasoning models go by)."""
    model = scenario.model.replace(tool_calling="native", reasoning_effort="medium")
    return scenario.with_changes(model=model)


def backend_for(server: ModelServer, model: str = "m") -> Backend:
    config = config_for("responses", server.base_url, model, timeout_s=10.0)
    return make_backend(config, builtin("brightgrid"), KeyStore())


def run(server: ModelServer, scenario: Scenario, backend: Backend | None = None) -> list[Event]:
    return run_events(scenario, backend or backend_for(server), model="m")


def reasoning_text(events: list[Event]) -> str:
    return "".join(e.text for e in of_type(events, ReasoningDelta))


def actions(events: list[Event]) -> list[tuple[str, str]]:
    return [(a.tool, a.input) for a in of_type(events, ActionParsed)]


def test_a_text_react_run_shows_the_summary_as_thinking_and_never_acts_on_it(
    responses_server: ModelServer,
) -> None:
    responses_server.set_model("m", TEXT_REPLIES)
    events = run(responses_server, builtin("brightgrid"))
    done = finished(events)
    assert (done.status, done.answer) == ("answered", "$1,680 per year"), events[-3:]
    assert actions(events) == [
        ("search", "Brightgrid Pro price per developer"),
        ("calculator", "20 * 12 * 7"),
    ]  # the decoy in the summary was not run
    thinking = reasoning_text(events)
    # Two summary parts of one item: a blank line between them.
    assert "The price comes from search.\n\nMaybe I should just write Action:" in thinking
    first, second, third = responses_server.requests
    # The system prompt is the instructions, the question the one input message.
    assert "search" in first["instructions"]
    assert "Action" in first["instructions"]
    assert first["store"] is False
    assert first["stream"] is True
    assert "stop" not in first  # the Responses API has none: the client-side cut guards
    assert [i["role"] for i in first["input"]] == ["user"]
    # Text ReAct sends content only: the reply's text, then the observation as the user's.
    assert [i.get("role") for i in second["input"]] == ["user", "assistant", "user"]
    assert second["input"][1]["content"].startswith("Thought: I need the price")
    assert not any(i.get("type") == "reasoning" for r in (second, third) for i in r["input"])


def test_a_native_run_sends_each_reasoning_item_back_before_its_call(
    responses_server: ModelServer,
) -> None:
    responses_server.set_model("m", NATIVE_REPLIES)
    events = run(responses_server, native(builtin("brightgrid")))
    done = finished(events)
    assert (done.status, done.answer) == ("answered", "$1,680 per year"), events[-3:]
    assert actions(events) == [
        ("search", "Brightgrid Pro price per developer"),
        ("calculator", "20 * 12 * 7"),
    ]
    assert "Search first.\n\n" + DECOY in reasoning_text(events)
    first, second, third = responses_server.requests
    assert [t["name"] for t in first["tools"]] == ["calculator", "search"]
    assert first["tools"][0]["type"] == "function"
    assert "parameters" in first["tools"][0]
    types = [i.get("type") or i["role"] for i in second["input"]]
    assert types == ["user", "reasoning", "assistant", "function_call", "function_call_output"]
    reasoning, call, result = second["input"][1], second["input"][3], second["input"][4]
    assert reasoning["id"].startswith("rs_")
    assert reasoning["encrypted_content"].startswith("gAAAA-")  # asked for by include
    assert reasoning["summary"][1] == {"type": "summary_text", "text": DECOY}
    assert (call["name"], call["id"][:3]) == ("search", "fc_")
    assert json.loads(call["arguments"]) == {"query": "Brightgrid Pro price per developer"}
    assert result == {
        "type": "function_call_output",
        "call_id": call["call_id"],
        "output": "Brightgrid Pro costs $20 per month per developer.",
    }
    assert "provider" not in json.dumps(second)  # the engine's key never goes out
    assert sum(i.get("type") == "reasoning" for i in third["input"]) == 2


class _Forgetful:
    """The kind's backend with its carry dropped: the reasoning items are not sent back."""

    def __init__(self, backend: Backend) -> None:
        self.inner, self.label = backend, backend.label

    async def stream(
        self, messages: Sequence[Message], params: StreamParams
    ) -> AsyncGenerator[Delta, None]:
        async for delta in self.inner.stream(messages, params):
            yield replace(delta, carry=None)

    async def list_models(self) -> list[str]:
        return await self.inner.list_models()

    async def aclose(self) -> None:
        await self.inner.aclose()


def test_the_server_rejects_a_call_sent_back_without_its_reasoning_item(
    responses_server: ModelServer,
) -> None:
    responses_server.set_model("m", NATIVE_REPLIES)
    backend = _Forgetful(backend_for(responses_server))
    done = finished(run(responses_server, native(builtin("brightgrid")), backend))
    assert done.status == "failed"
    assert "\n" not in done.reason
    assert done.reason.startswith("127.0.0.1:")
    assert "(400): Item 'fc_" in done.reason
    # The server's message, cut at a word where it passes 160 characters (errors.clipped).
    assert "of type 'function_call' was provided without its required 'reasoning' item" in (
        done.reason
    )


def test_raw_reasoning_as_vllm_streams_it_is_thinking(
    responses_server: ModelServer,
) -> None:
    raw = [f"<think>Raw thought {i}.</think>{a}" for i, a in enumerate(NATIVE_ANSWERS)]
    responses_server.set_model("m", ModelScript(replies=raw, reasoning_field="reasoning"))
    events = run(responses_server, native(builtin("brightgrid")))
    assert finished(events).answer == "$1,680 per year"
    assert "Raw thought 0." in reasoning_text(events)
    sent = next(i for i in responses_server.requests[1]["input"] if i.get("type") == "reasoning")
    assert sent["content"] == [{"type": "reasoning_text", "text": "Raw thought 0."}]


def test_reasoning_is_asked_for_with_the_effort_and_a_summary(
    responses_server: ModelServer,
) -> None:
    responses_server.set_model("m", TEXT_REPLIES)
    scenario = builtin("brightgrid")
    scenario = scenario.with_changes(model=scenario.model.replace(reasoning_effort="low"))
    run(responses_server, scenario)
    first = responses_server.requests[0]
    assert first["reasoning"] == {"summary": "auto", "effort": "low"}
    assert first["include"] == ["reasoning.encrypted_content"]
    assert first["temperature"] == 0.0  # "m" is not one of OpenAI's reasoning models


def test_a_reasoning_model_gets_no_temperature_and_always_its_summary(
    responses_server: ModelServer,
) -> None:
    responses_server.set_model("gpt-5-mini", TEXT_REPLIES)
    scenario = builtin("brightgrid")
    run_events(scenario, backend_for(responses_server, "gpt-5-mini"), model="gpt-5-mini")
    first = responses_server.requests[0]
    assert "temperature" not in first
    assert "top_p" not in first
    assert first["reasoning"] == {"summary": "auto"}
    assert first["max_output_tokens"] == 8192  # Auto max tokens for a model that thinks


def test_a_cut_by_max_output_tokens_is_the_cut_line(
    responses_server: ModelServer,
) -> None:
    responses_server.set_model("m", ModelScript(replies=TEXT_ANSWERS))
    scenario = builtin("brightgrid")
    scenario = scenario.with_changes(model=scenario.model.replace(max_tokens=6))
    events = run(responses_server, scenario)
    done = finished(events)
    assert (done.status, done.reason) == ("failed", "Cut at Max tokens (6): raise Max tokens.")
    assert responses_server.requests[0]["max_output_tokens"] == 6
    assert actions(events) == []


def test_reasoning_and_cached_tokens_reach_the_metrics(
    responses_server: ModelServer,
) -> None:
    replies = replace(TEXT_REPLIES, hidden_reasoning_tokens=100, cached_tokens=64)
    responses_server.set_model("m", replies)
    events = run(responses_server, builtin("brightgrid"))
    metrics = finished(events).metrics
    # The hidden reasoning of every reply, plus the summary's tokens of the two that show it.
    shown = [len(tokenize(r.split("</think>")[0][7:])) for r in TEXT_REPLIES.replies[:2]]
    assert [s.reasoning_tokens for s in metrics.steps] == [100 + shown[0], 100 + shown[1], 100]
    assert not metrics.reasoning_estimated
    usages = [e.usage for e in of_type(events, Exchange)]
    assert [u["cache_read_tokens"] for u in usages if u] == [64, 64, 64]
    assert all(u and u["completion_tokens"] > u["reasoning_tokens"] for u in usages[:2])


@pytest.mark.parametrize(
    ("end", "line"),
    [
        ("failed", "The server reported an error mid-stream: The model failed to answer."),
        (
            "error",
            "The server reported an error mid-stream: The model had an error while generating.",
        ),
    ],
)
def test_a_failed_response_is_one_line(responses_server: ModelServer, end: Any, line: str) -> None:
    responses_server.set_model("m", replace(TEXT_REPLIES, finish=end))
    done = finished(run(responses_server, builtin("brightgrid")))
    assert (done.status, done.reason) == ("failed", line)


def test_a_401_is_one_line(responses_server: ModelServer) -> None:
    responses_server.set_model("m", replace(TEXT_REPLIES, fail_status=401))
    done = finished(run(responses_server, builtin("brightgrid")))
    host = responses_server.base_url.split("/")[2]
    assert (done.status, done.reason) == (
        "failed",
        f"{host} rejected the API key (401); check the API key.",
    )


def test_a_429_is_retried_then_one_line(responses_server: ModelServer) -> None:
    responses_server.set_model("m", replace(TEXT_REPLIES, fail_status=429, retry_after=0))
    events = run(responses_server, builtin("brightgrid"))
    done = finished(events)
    host = responses_server.base_url.split("/")[2]
    assert done.reason == (
        f"Rate limited (429) by {host}: gave up after 3 retries. Wait a minute or use another "
        "model."
    )
    assert [n.text for n in of_type(events, Notice)] == [
        f"Rate limited (429): retrying in 0 s ({i} of 3)" for i in (1, 2, 3)
    ]
    assert len(responses_server.requests) == 4


def test_out_of_quota_is_one_line_at_once(responses_server: ModelServer) -> None:
    responses_server.set_model("m", ModelScript(fail_status=429, fail_code="insufficient_quota"))
    done = finished(run(responses_server, builtin("brightgrid")))
    assert done.reason.endswith("(429, insufficient quota)")
    assert "\n" not in done.reason
    assert len(responses_server.requests) == 1


def test_the_models_come_from_the_servers_list(responses_server: ModelServer) -> None:
    responses_server.set_model("gpt-5-mini", ModelScript())
    responses_server.set_model("m", ModelScript())
    backend = backend_for(responses_server)

    async def listed() -> list[str]:
        try:
            return await backend.list_models()
        finally:
            await backend.aclose()

    assert asyncio.run(listed()) == ["gpt-5-mini", "m"]


def test_openais_key_goes_only_to_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    monkeypatch.setenv(CUSTOM_KEY_ENV, "custom-key")
    keys = KeyStore()
    own = config_for("responses", model="gpt-5")
    assert own.url == "https://api.openai.com/v1"
    assert (
        make_backend(own, builtin("brightgrid"), keys).label,
        key_notice(own, keys),
    ) == (
        "OpenAI",
        "",
    )
    from sandbox_app.backends.registry import key_decision

    assert key_decision(own, keys).key == "sk-openai"
    local = config_for("responses", "http://localhost:1234/v1", "openai/gpt-oss-20b")
    assert key_decision(local, keys).key == "custom-key"
    assert key_notice(local, keys) == (
        "OPENAI_API_KEY goes only to https://api.openai.com/v1; localhost:1234 gets "
        f"{CUSTOM_KEY_ENV} or a key typed for it"
    )


def test_run_backend_responses_runs_against_a_url(
    responses_server: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    responses_server.set_model("m", TEXT_REPLIES)
    args = ["run", "--backend", "responses", "--base-url", responses_server.base_url]
    assert main([*args, "--model", "m"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "$1,680 per year" in out
    assert len(responses_server.requests) == 3


def test_a_call_sent_whole_at_its_end_and_an_output_only_in_the_last_event_are_read() -> None:
    from sandbox_app.backends.responses_api.responses_stream import CARRY_KEY, ResponseEvents

    events = ResponseEvents()
    call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "c1",
        "name": "search",
        "arguments": '{"query": "x"}',
    }
    (piece,) = events.feed(json.dumps({"type": "response.output_item.done", "item": call}))
    assert piece.tool_calls[0] == ToolCallPiece(0, "c1", "search", '{"query": "x"}')
    # No reasoning item event came: the output listed in response.completed is carried.
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"}
    done = {"type": "response.completed", "response": {"output": [reasoning, call]}}
    fresh = ResponseEvents()
    called, end = fresh.feed(json.dumps(done))
    assert called.tool_calls == piece.tool_calls
    assert end.finish_reason == "tool_calls"
    assert end.carry == {
        CARRY_KEY: [reasoning, {"type": "function_call", "id": "fc_1", "call_id": "c1"}]
    }
    assert events.feed(json.dumps({"type": "response.new_kind_of_event"})) == []
