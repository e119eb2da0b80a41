"""The Gemini kind, over real HTTP to the test server (tests/model_server/gemini.py); the models
list through the real google-genai SDK.

Three Brightgrid steps in ReAct text and in native function calling; thought summaries shown
as thinking and never acted on; each function call's thought signature sent back unchanged
(the server refuses the request without it, as Gemini 3 does); a MAX_TOKENS cut; 401 and 429
as one line; ``run --backend gemini``; and GEMINI_API_KEY never sent to another host.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.backends.catalogue.presets import Preset, ServerConfig
from sandbox_app.backends.gemini_api import gemini_contents
from sandbox_app.backends.gemini_api.gemini_kind import GEMINI, GeminiBackend, split_base_url
from sandbox_app.backends.registry import config_for, key_notice, make_backend
from sandbox_app.cli.main import main
from sandbox_app.core.running.backend import PROVIDER, BackendError, Delta, StreamParams
from sandbox_app.core.running.events import (
    ActionParsed,
    Event,
    Notice,
    Observation,
    ReasoningDelta,
)
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.scenarios.scenario_file import scenarios_dir
from tests.helpers import builtin, finished, model_text, of_type, replies_of, run_events
from tests.model_server import ModelScript, ModelServer
from tests.model_server.gemini import gemini_server, signature_of

__all__ = ["gemini_server"]  # the fixture, imported for pytest

SEARCHES = [
    ("search", "Brightgrid Pro price per developer"),
    ("calculator", "20 * 12 * 7"),
]
DECOY = "Maybe first: Action: calculator[999 * 999]"


def backend(server: ModelServer, key: str = "test-key") -> GeminiBackend:
    url = server.base_url
    return GeminiBackend(ServerConfig(url, key, Preset("custom", url, url), timeout_s=10))


def native(scenario: Scenario) -> Scenario:
    return scenario.with_changes(model=scenario.model.replace(tool_calling="native"))


def actions(events: list[Event]) -> list[tuple[str, str]]:
    return [(a.tool, a.input) for a in of_type(events, ActionParsed)]


def thinking(events: list[Event]) -> str:
    return "".join(e.text for e in of_type(events, ReasoningDelta))


def text_replies() -> ModelScript:
    first, second, third = replies_of("brightgrid")
    return ModelScript(
        replies=[
            f"<think>The user wants a yearly price. {DECOY}</think>{first}",
            f"<think>Twenty a month each.</think>{second}",
            third,
        ]
    )


SEARCH = {"query": "Brightgrid Pro price per developer"}
CALCULATE = {"expression": "20 * 12 * 7"}
SIGNED = [signature_of("search", SEARCH), signature_of("calculator", CALCULATE)]
NATIVE_REPLIES = ModelScript(
    replies=[
        f"<think>I need the price. {DECOY}</think>I need the price per developer first."
        f'<tool_call>{{"name": "search", "arguments": {json.dumps(SEARCH)}}}</tool_call>',
        "<think>Now the year for seven.</think>"
        f'<tool_call>{{"name": "calculator", "arguments": {json.dumps(CALCULATE)}}}</tool_call>',
        "$1,680 per year",
    ]
)


def test_three_react_text_steps_with_thoughts_shown_and_never_acted_on(
    gemini_server: ModelServer,
) -> None:
    gemini_server.set_model("gemini-3-flash", text_replies())
    events = run_events(builtin("brightgrid"), backend(gemini_server), model="gemini-3-flash")
    done = finished(events)
    assert (done.status, done.answer) == ("answered", "$1,680 per year"), events[-3:]
    assert actions(events) == SEARCHES
    assert DECOY in thinking(events)  # shown as thinking…
    assert "999" not in model_text(events)  # …never in the reply, never run
    assert not any("999" in o.message for o in of_type(events, Observation))
    first = gemini_server.requests[0]
    # The system prompt goes as the system instruction, the ReAct stop strings as stops.
    assert "Action:" in first["systemInstruction"]["parts"][0]["text"]
    assert first["generationConfig"]["stopSequences"] == ["\nObservation:", "\nObservation "]
    # Text ReAct sends the reply's text back and nothing else: no thought, no signature.
    sent = json.dumps(gemini_server.requests[2]["contents"])
    assert "The user wants" not in sent
    assert "thoughtSignature" not in sent
    assert done.metrics.reasoning_tokens is not None
    assert done.metrics.reasoning_tokens > 0


def test_three_native_steps_send_each_call_back_with_its_signature(
    gemini_server: ModelServer,
) -> None:
    gemini_server.set_model("gemini-3-pro", NATIVE_REPLIES)
    events = run_events(native(builtin("brightgrid")), backend(gemini_server), model="gemini-3-pro")
    done = finished(events)
    assert (done.status, done.answer) == ("answered", "$1,680 per year"), events[-3:]
    assert actions(events) == SEARCHES
    assert DECOY in thinking(events)
    first, second, third = gemini_server.requests
    declared = first["tools"][0]["functionDeclarations"]
    assert sorted(d["name"] for d in declared) == ["calculator", "search"]
    assert "stopSequences" not in first["generationConfig"]
    # Step 2 holds the model's call with the signature it came with, and its result.
    model_turn, result = second["contents"][1:]
    assert model_turn["role"] == "model"
    assert model_turn["parts"][-1] == {
        "functionCall": {
            "name": "search",
            "args": {"query": "Brightgrid Pro price per developer"},
        },
        "thoughtSignature": SIGNED[0],
    }
    (response,) = result["parts"]
    assert response["functionResponse"]["name"] == "search"
    assert "$20 per month" in json.dumps(response["functionResponse"]["response"])
    calls = [p for c in third["contents"] for p in c["parts"] if "functionCall" in p]
    assert [p["thoughtSignature"] for p in calls] == SIGNED


def test_the_server_refuses_a_call_sent_back_without_its_signature(
    gemini_server: ModelServer,
) -> None:
    gemini_server.set_model("gemini-3-pro", NATIVE_REPLIES)
    events = run_events(native(builtin("brightgrid")), backend(gemini_server), model="gemini-3-pro")
    assert finished(events).status == "answered"  # the signature was issued, and sent back

    def step_two(provider: dict[str, Any]) -> list[Delta]:
        call = {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{}"}}
        messages = [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": None, "tool_calls": [call], PROVIDER: provider},
            {"role": "tool", "tool_call_id": "c1", "content": "r"},
        ]

        async def read() -> list[Delta]:
            server = backend(gemini_server)
            try:
                return [
                    d async for d in server.stream(messages, StreamParams(model="gemini-3-pro"))
                ]
            finally:
                await server.aclose()

        return asyncio.run(read())

    kept = step_two({gemini_contents.CARRY_KEY: {"c1": SIGNED[0]}})
    assert any(d.tool_calls for d in kept)  # the next reply came
    with pytest.raises(BackendError) as lost:
        step_two({})
    assert "missing a thought_signature" in str(lost.value)
    assert "(400 INVALID_ARGUMENT)" in str(lost.value)
    assert "\n" not in str(lost.value)


def test_a_max_tokens_cut_is_the_cut_line(gemini_server: ModelServer) -> None:
    first = replies_of("brightgrid")[0]
    gemini_server.set_model("m", ModelScript(replies=[first[:30]], finish="MAX_TOKENS"))
    events = run_events(builtin("brightgrid"), backend(gemini_server), model="m")
    done = finished(events)
    assert done.status == "failed"
    assert done.reason.startswith("Cut at Max tokens"), done.reason


@pytest.mark.parametrize(
    ("code", "message", "expected"),
    [
        (401, "API key not valid. Please pass a valid API key.", "rejected the API key (401)"),
        (
            429,
            "You exceeded your current quota, please check your plan and billing details.\n"
            "For more information on this error, head to: https://ai.google.dev/…",
            "(429 RESOURCE_EXHAUSTED)",
        ),
    ],
)
def test_a_401_and_a_429_are_one_line(
    gemini_server: ModelServer, code: int, message: str, expected: str
) -> None:
    gemini_server.set_model("m", ModelScript(fail_status=code, fail_message=message))
    done = finished(run_events(builtin("brightgrid"), backend(gemini_server), model="m"))
    assert done.status == "failed"
    assert expected in done.reason, done.reason
    assert "\n" not in done.reason
    assert "Traceback" not in done.reason
    assert "{" not in done.reason


def test_a_closed_port_is_one_line() -> None:
    url = "http://127.0.0.1:9"
    closed = GeminiBackend(ServerConfig(url, "k", Preset("custom", url, url), timeout_s=5))
    done = finished(run_events(builtin("brightgrid"), closed, model="m"))
    assert done.reason == "Cannot connect to 127.0.0.1:9: is the server running?"


def test_the_model_list(gemini_server: ModelServer) -> None:
    gemini_server.set_model("gemini-3-pro", ModelScript())
    gemini_server.set_model("gemini-2.5-flash", ModelScript())

    async def listed() -> list[str]:
        server = backend(gemini_server)
        try:
            return await server.list_models()
        finally:
            await server.aclose()

    assert asyncio.run(listed()) == ["gemini-2.5-flash", "gemini-3-pro"]


def test_run_backend_gemini_with_a_thinking_budget(
    gemini_server: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    gemini_server.set_model("gemini-2.5-flash", text_replies())
    scenario = str(scenarios_dir() / "brightgrid.json")
    args = ["run", scenario, "--backend", "gemini", "--base-url", gemini_server.base_url]
    args += ["--model", "gemini-2.5-flash", "--thinking-budget", "2048", "--json"]
    code = main(args)
    document = json.loads(capsys.readouterr().out)
    assert (code, document["status"], document["answer"]) == (0, "answered", "$1,680 per year")
    assert "ReasoningDelta" in {e["type"] for e in document["events"]}
    thinking_config = gemini_server.requests[0]["generationConfig"]["thinkingConfig"]
    assert thinking_config == {"includeThoughts": True, "thinkingBudget": 2048}


def test_gemini_api_key_goes_only_to_gemini(
    gemini_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-secret")
    monkeypatch.setenv("GOOGLE_API_KEY", "google-secret")  # the SDK's own fallback
    monkeypatch.delenv("REACT_SANDBOX_API_KEY", raising=False)
    keys = KeyStore(keyring_open=False)
    own = config_for("gemini")
    assert own.url == GEMINI.base_url
    made = make_backend(own, builtin("brightgrid"), keys)
    assert made.config.api_key == "gemini-secret"  # type: ignore[attr-defined]
    other = config_for("gemini", gemini_server.base_url)
    assert "GEMINI_API_KEY goes only to" in key_notice(other, keys)
    gemini_server.set_model("m", text_replies())
    made = make_backend(other, builtin("brightgrid"), keys)
    assert finished(run_events(builtin("brightgrid"), made, model="m")).status == "answered"
    assert gemini_server.keys
    assert not {"gemini-secret", "google-secret"} & set(gemini_server.keys)


def test_thinking_settings_by_model() -> None:
    params = StreamParams
    level = gemini_contents.thinking_config(params(model="gemini-3-pro", reasoning_effort="low"))
    assert level == {"includeThoughts": True, "thinkingLevel": "low"}
    budget = gemini_contents.thinking_config(params(model="gemini-2.5-pro", reasoning_effort="low"))
    assert budget == {"includeThoughts": True, "thinkingBudget": 1024}
    both = params(model="gemini-3-pro", reasoning_effort="high", thinking_budget=64)
    assert gemini_contents.thinking_config(both) == {
        "includeThoughts": True,
        "thinkingBudget": 64,
    }
    assert split_base_url("https://h.example/v1/") == ("https://h.example", "v1")
    assert split_base_url("https://h.example") == ("https://h.example", "v1beta")


def test_safety_stop_is_a_notice(gemini_server: ModelServer) -> None:
    gemini_server.set_model("m", ModelScript(replies=["I can"], finish="SAFETY"))
    events = run_events(builtin("brightgrid"), backend(gemini_server), model="m")
    notices = [n.text for n in of_type(events, Notice)]
    assert any("Gemini stopped the reply (SAFETY)" in n for n in notices), notices
    assert finished(events).status != "answered"
