"""Forks and replays keep the provider's reasoning items byte for byte (core/running/carried.py).

For each kind whose server refuses a tool-calling turn without them — Claude's signed thinking
and redacted blocks (tests/model_server/anthropic.py), Gemini's thought signatures
(tests/model_server/gemini.py and its OpenAI-compatible endpoint), OpenAI's encrypted reasoning
items (tests/model_server/responses.py), DeepSeek's and Kimi's ``reasoning_content``
(tests/model_server/passback.py), each taking back
only the bytes it sent — a native run is recorded to a file through the real SDK, read back,
and forked at step 2: the fork's next request is the original's, byte for byte, and the server
answers it. The same fork onto another model goes on without them, and says so at step 0.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.application.run_builder import RunSpec, build_run
from sandbox_app.backends.registry import config_for
from sandbox_app.core.running.backend import MAX_CARRIED, PROVIDER
from sandbox_app.core.running.events import Event, Exchange, Notice
from sandbox_app.core.running.fork import fork_point
from sandbox_app.core.running.recording import (
    RecordedLane,
    RecordingError,
    load_recording,
    recording_of,
    save_recording,
)
from tests.core.test_anthropic_kind import NATIVE_TURNS
from tests.core.test_gemini import NATIVE_REPLIES as GEMINI_REPLIES
from tests.core.test_passback import script_for
from tests.core.test_responses_kind import NATIVE_REPLIES as RESPONSES_REPLIES
from tests.helpers import builtin, collect, finished, of_type, replies_of
from tests.model_server import ModelScript, ModelServer
from tests.model_server.anthropic import fake_anthropic
from tests.model_server.gemini import gemini_server
from tests.model_server.responses import responses_server

__all__ = ["fake_anthropic", "gemini_server", "responses_server"]  # fixtures, for pytest

ANSWER = "$1,680 per year"
OTHER = "other-model"  # an OpenAI-compatible model that requires nothing back


@dataclass(frozen=True)
class Kind:
    """One kind's native run: its backend id, model, server fixture and lane settings."""

    backend: str
    model: str
    fixture: str
    settings: dict[str, Any]


KINDS = {
    "anthropic": Kind("anthropic", "claude-test", "fake_anthropic", {"thinking_budget": 2048}),
    "gemini": Kind("gemini", "gemini-3-pro", "gemini_server", {}),
    "responses": Kind("responses", "m", "responses_server", {"reasoning_effort": "medium"}),
    "deepseek": Kind("custom", "deepseek-reasoner", "fake_server", {}),
    "kimi": Kind("custom", "kimi-k2-thinking", "fake_server", {}),
    "gemini-openai": Kind("custom", "gemini-3-pro-preview", "fake_server", {}),
}


def serve(name: str, server: Any) -> None:
    """The kind's server scripted for three Brightgrid steps: two calls, then the answer."""
    kind = KINDS[name]
    if kind.backend == "anthropic":
        server.set_model(kind.model, ModelScript(replies=NATIVE_TURNS))
    elif kind.backend == "gemini":
        server.set_model(kind.model, GEMINI_REPLIES)
    elif kind.backend == "responses":
        server.set_model(kind.model, RESPONSES_REPLIES)
    else:
        server.set_model(kind.model, script_for(name.removesuffix("-openai")))


def requests_of(server: Any) -> list[dict[str, Any]]:
    return list(server.requests)


def spec_for(name: str, server: Any) -> RunSpec:
    kind = KINDS[name]
    scenario = builtin("brightgrid")
    scenario = scenario.with_changes(
        model=scenario.model.replace(tool_calling="native", **kind.settings)
    )
    config = config_for(kind.backend, server.base_url, kind.model, 10.0, "test-key")
    return RunSpec(scenario, config)


def run(spec: RunSpec) -> list[Event]:
    engine, backend = build_run(spec)
    return asyncio.run(collect(engine, backend))


def recorded(spec: RunSpec, events: list[Event], path: Path) -> list[Event]:
    """The run saved as a recording file and read back: what a replay plays and forks."""
    lane = RecordedLane(spec.record_settings(), tuple((0.0, e) for e in events))
    save_recording(recording_of(spec.scenario, [lane]), path)
    return [event for _, event in load_recording(path).lanes[0].events]


def other_model(server: ModelServer) -> RunSpec:
    """Another kind's model (an OpenAI-compatible one): the third reply is the answer."""
    server.set_model(OTHER, ModelScript(replies=["unused", "unused", ANSWER]))
    scenario = builtin("brightgrid")
    native = scenario.with_changes(model=scenario.model.replace(tool_calling="native"))
    return RunSpec(native, config_for("custom", server.base_url, OTHER, 10.0, "test-key"))


@pytest.mark.parametrize("name", list(KINDS))
def test_a_recorded_native_run_forked_at_step_2_goes_on_with_its_reasoning_items(
    name: str, request: pytest.FixtureRequest, fake_server: ModelServer, tmp_path: Path
) -> None:
    server = request.getfixturevalue(KINDS[name].fixture)
    serve(name, server)
    spec = spec_for(name, server)
    events = run(spec)
    assert (finished(events).status, finished(events).answer) == ("answered", ANSWER)
    original_third = requests_of(server)[2]
    path = tmp_path / "run.json"
    replayed = recorded(spec, events, path)
    # In the file, the items are the provider's data, named with who may get them back.
    text = path.read_text(encoding="utf-8")
    assert f'"{PROVIDER}": {{' in text
    assert f'"for": {json.dumps(spec.source())}' in text

    point = fork_point(replayed, 2)
    assert point is not None
    sent_before = len(requests_of(server))
    forked = run(replace(spec, fork=point))
    done = finished(forked)
    assert (done.status, done.answer) == ("answered", ANSWER), done.reason
    (fork_third,) = requests_of(server)[sent_before:]
    assert fork_third == original_third  # every signed byte sent back as it came
    assert not [n for n in of_type(forked, Notice) if "not sent" in n.text]

    # Onto another model: the items stay home, and the trace says so before step 1.
    elsewhere = run(replace(other_model(fake_server), fork=point))
    assert finished(elsewhere).answer == ANSWER
    (said,) = [n for n in of_type(elsewhere, Notice) if "not sent" in n.text]
    assert said.step == 0
    assert f"provider data of {spec.source()}" in said.text
    assert "2 earlier replies" in said.text
    (asked,) = [r for r in fake_server.requests if r["model"] == OTHER]
    for message in asked["messages"]:
        assert set(message) <= {"role", "content", "tool_calls", "tool_call_id"}, message
        for call in message.get("tool_calls") or ():
            assert set(call) == {"id", "type", "function"}, call
    # Its own record holds none of them either: a fork of it sends none back.
    (third,) = [e for e in elsewhere if isinstance(e, Exchange) and e.step == 3]
    assert all(PROVIDER not in m for m in third.messages or third.request["messages"])


def test_a_recording_holding_an_item_over_the_bound_is_refused_in_one_line(
    fake_anthropic: ModelServer, tmp_path: Path
) -> None:
    serve("anthropic", fake_anthropic)
    spec = spec_for("anthropic", fake_anthropic)
    events = run(spec)
    path = tmp_path / "run.json"
    recorded(spec, events, path)
    data = json.loads(path.read_text(encoding="utf-8"))
    exchanges = [e for e in data["lanes"][0]["events"] if e["type"] == "Exchange"]
    message = exchanges[-1]["messages"][2]
    block = message[PROVIDER]["anthropic"][0]
    block["signature"] = "s" * (MAX_CARRIED + 1)  # the file edited: no server made it
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(RecordingError) as refused:
        load_recording(path)
    said = str(refused.value)
    assert "\n" not in said
    assert "over 256 KB: refused, not cut" in said
    assert f"{len(json.dumps(block).encode()):,} bytes" in said


def test_a_request_that_is_the_engines_messages_is_recorded_once(
    fake_server: ModelServer,
) -> None:
    """An OpenAI-compatible run that carries nothing sends the engine's messages as they are:
    its Exchanges hold them once (the request's), and a fork starts from those."""
    fake_server.set_model("plain", ModelScript(replies=replies_of("brightgrid")))
    config = config_for("custom", fake_server.base_url, "plain", 10.0, "test-key")
    events = run(RunSpec(builtin("brightgrid"), config))
    exchanges = of_type(events, Exchange)
    assert len(exchanges) == 3
    assert all(e.messages == () for e in exchanges)
    point = fork_point(events, 1)
    assert point is not None
    assert point.history == exchanges[1].request["messages"]
