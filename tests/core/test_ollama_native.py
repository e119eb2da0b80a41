"""Ollama's own API as a backend kind: runs, settings sent, thinking, cuts, errors, the model
list and Pull, through the real ``ollama`` library to the test server
(tests/model_server/ollama.py)."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest

from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.backends.ollama_api.model_store import ModelStore, PullProgress
from sandbox_app.backends.ollama_api.ollama_kind import OllamaBackend
from sandbox_app.backends.registry import config_for, make_backend
from sandbox_app.cli.main import main
from sandbox_app.core.running.backend import BackendError
from sandbox_app.core.running.events import ActionParsed, ReasoningDelta
from sandbox_app.core.scenarios.scenario import Scenario
from tests.helpers import builtin, finished, model_text, of_type, replies_of, run_events
from tests.model_server import LocalModel, ModelScript, ModelServer
from tests.model_server.ollama import fake_ollama

__all__ = ["fake_ollama"]

SEARCHES = [("search", "Brightgrid Pro price per developer"), ("calculator", "20 * 12 * 7")]
# Thinking that holds an action: shown folded, never acted on.
THOUGHTS = "Maybe Action: calculator[999 * 999] would do. No: search first."


def scenario(tool_calling: str = "react", **settings: object) -> Scenario:
    chosen = builtin("brightgrid")
    model = chosen.model.replace(tool_calling=tool_calling, **settings)
    return chosen.with_changes(model=model)


def text_replies() -> ModelScript:
    first, *rest = replies_of("brightgrid")
    return ModelScript(replies=[f"<think>{THOUGHTS}</think>{first}", *rest])


def native_replies() -> ModelScript:
    search = {"name": "search", "arguments": {"query": "Brightgrid Pro price per developer"}}
    calculate = {"name": "calculator", "arguments": {"expression": "20 * 12 * 7"}}
    return ModelScript(
        replies=[
            f"<think>{THOUGHTS}</think>I need the price per developer first."
            f"<tool_call>{json.dumps(search)}</tool_call>",
            f"Now the year.<tool_call>{json.dumps(calculate)}</tool_call>",
            "$1,680 per year",
        ]
    )


def backend(server: ModelServer) -> OllamaBackend:
    made = make_backend(config_for("ollama-native", server.root), Scenario(), KeyStore())
    assert isinstance(made, OllamaBackend)
    return made


def test_a_text_react_run_sends_num_ctx_think_and_keep_alive(fake_ollama: ModelServer) -> None:
    fake_ollama.add(LocalModel("qwen3:8b", loaded=False), text_replies())
    chosen = scenario(context_window=8192, think="on", keep_alive="10m")
    events = run_events(chosen, backend(fake_ollama), model="qwen3:8b")
    done = finished(events)
    assert (done.status, done.answer) == ("answered", "$1,680 per year"), events[-3:]
    assert [(a.tool, a.input) for a in of_type(events, ActionParsed)] == SEARCHES
    first, second, third = fake_ollama.requests
    assert first["options"]["num_ctx"] == 8192
    assert first["options"]["num_predict"] > 0
    assert "\nObservation:" in first["options"]["stop"]
    assert (first["think"], first["keep_alive"]) == (True, "10m")
    assert not first.get("tools")  # the library sends [] for none
    # The thinking is shown apart, never parsed: the calculator in it never ran.
    assert "".join(e.text for e in of_type(events, ReasoningDelta)) == THOUGHTS
    assert "999" not in model_text(events)
    # A text ReAct reply goes back as its content only, never its thinking.
    assert second["messages"][2] == {"role": "assistant", "content": replies_of("brightgrid")[0]}
    assert len(third["messages"]) == 6
    # The counts are the final chunk's prompt_eval_count and eval_count, not estimates.
    step = done.metrics.steps[0]
    assert not step.estimated
    assert step.tokens_in == sum(len(m["content"]) for m in first["messages"]) // 4 + 1


def test_a_native_run_sends_calls_as_objects_and_results_by_tool_name(
    fake_ollama: ModelServer,
) -> None:
    fake_ollama.add(LocalModel("qwen3:8b", loaded=False), native_replies())
    events = run_events(scenario("native"), backend(fake_ollama), model="qwen3:8b")
    done = finished(events)
    assert (done.status, done.answer) == ("answered", "$1,680 per year"), events[-3:]
    assert [(a.tool, a.input) for a in of_type(events, ActionParsed)] == SEARCHES
    first, second, _ = fake_ollama.requests
    assert [t["function"]["name"] for t in first["tools"]] == ["calculator", "search"]
    assert "stop" not in first["options"]
    assert "think" not in first
    assistant, result = second["messages"][2:]
    assert assistant == {
        "role": "assistant",
        "content": "I need the price per developer first.",
        "tool_calls": [{"function": {"name": "search", "arguments": {"query": SEARCHES[0][1]}}}],
    }
    assert result == {
        "role": "tool",
        "content": "Brightgrid Pro costs $20 per month per developer.",
        "tool_name": "search",
    }
    assert "999" not in model_text(events)


@pytest.mark.parametrize(("think", "sent"), [("off", False), ("high", "high")])
def test_think_levels_reach_the_server(fake_ollama: ModelServer, think: str, sent: object) -> None:
    fake_ollama.add(LocalModel("m", loaded=False), ModelScript(replies=["Answer: 4"]))
    run_events(scenario(think=think), backend(fake_ollama), model="m")
    assert fake_ollama.requests[0]["think"] == sent


def test_done_reason_length_is_the_max_tokens_cut(fake_ollama: ModelServer) -> None:
    cut = ModelScript(replies=["Thought: I need the price of"], finish="length")
    fake_ollama.add(LocalModel("m", loaded=False), cut)
    events = run_events(scenario(max_tokens=7), backend(fake_ollama), model="m")
    assert fake_ollama.requests[0]["options"]["num_predict"] == 7
    done = finished(events)
    assert done.reason == "Cut at Max tokens (7): raise Max tokens."
    assert done.metrics.steps[0].cut_by_limit


def test_a_missing_model_says_to_pull_it(fake_ollama: ModelServer) -> None:
    done = finished(run_events(scenario(), backend(fake_ollama), model="llama3.2"))
    assert done.status == "failed"
    assert done.reason == (
        f"Ollama at {fake_ollama.host_port} does not have the model 'llama3.2': pull it "
        "(ollama pull llama3.2, or Pull in the model panel)."
    )


@pytest.mark.parametrize(
    ("fails", "line"),
    [
        (
            (500, "llama runner process has terminated: exit status 2"),
            "Ollama at {host} failed (500): llama runner process has terminated: exit status 2.",
        ),
        (
            (400, "registry.ollama.ai/library/gemma:2b does not support tools"),
            "m cannot take native tool calls on Ollama (registry.ollama.ai/library/gemma:2b "
            "does not support tools): set Tool calls to ReAct text for it.",
        ),
    ],
)
def test_an_error_status_is_one_line(
    fake_ollama: ModelServer, fails: tuple[int, str], line: str
) -> None:
    fake_ollama.add(LocalModel("m"), ModelScript(fail_status=fails[0], fail_message=fails[1]))
    done = finished(run_events(scenario("native"), backend(fake_ollama), model="m"))
    assert done.reason == line.format(host=fake_ollama.host_port)


def test_the_librarys_own_key_variable_goes_to_no_server(
    fake_ollama: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The library would send OLLAMA_API_KEY to any host; this kind takes no key.
    monkeypatch.setenv("OLLAMA_API_KEY", "sk-secret")
    fake_ollama.add(LocalModel("m", loaded=False), ModelScript(replies=["Answer: 4"]))
    assert finished(run_events(scenario(), backend(fake_ollama), model="m")).answer == "4"
    assert fake_ollama.requests
    assert not any(fake_ollama.authorizations)


def test_a_server_that_is_not_running_is_one_line() -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    down = OllamaBackend(f"http://127.0.0.1:{port}")
    done = finished(run_events(scenario(), down, model="m"))
    assert done.reason == f"Cannot connect to 127.0.0.1:{port} — is Ollama running (ollama serve)?"


def test_the_model_list_says_sizes_and_what_is_loaded(fake_ollama: ModelServer) -> None:
    fake_ollama.add(LocalModel("qwen3:8b", size=5_225_376_047))
    fake_ollama.add(LocalModel("gemma3:1b", loaded=False, size=815_319_791))
    ollama = backend(fake_ollama)

    async def listed() -> list[str]:
        try:
            return await ollama.list_models()
        finally:
            await ollama.aclose()

    assert asyncio.run(listed()) == ["gemma3:1b", "qwen3:8b"]
    assert ollama.model_notes == {"qwen3:8b": "5.2 GB, loaded", "gemma3:1b": "815 MB"}


def pulled(server: ModelServer, model: str) -> list[PullProgress]:
    store = backend(server)
    assert isinstance(store, ModelStore)

    async def pull() -> list[PullProgress]:
        try:
            return [line async for line in store.pull(model)]
        finally:
            await store.aclose()

    return asyncio.run(pull())


def test_pull_streams_progress_then_the_model_is_there(fake_ollama: ModelServer) -> None:
    fake_ollama.registry["qwen3:0.6b"] = 522_653_767
    lines = pulled(fake_ollama, "qwen3:0.6b")
    assert lines[0].status == "pulling manifest"
    fractions = [line.fraction for line in lines if line.fraction is not None]
    assert fractions == sorted(fractions)
    assert fractions[-1] == 1.0
    assert lines[-1].status == "success"
    assert fake_ollama.requests_to("/api/pull") == [
        {"model": "qwen3:0.6b", "insecure": False, "stream": True}
    ]
    assert "qwen3:0.6b" in fake_ollama.local


def test_pulling_a_name_the_registry_lacks_is_one_line(fake_ollama: ModelServer) -> None:
    with pytest.raises(BackendError) as caught:
        pulled(fake_ollama, "no-such-model")
    assert str(caught.value) == (
        f"Ollama at {fake_ollama.host_port} could not pull 'no-such-model': "
        "pull model manifest: file does not exist"
    )


def test_run_takes_the_kind_and_its_settings_as_flags(
    fake_ollama: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_ollama.add(LocalModel("qwen3:8b", loaded=False), text_replies())
    argv = ["run", "--backend", "ollama-native", "--base-url", fake_ollama.root]
    argv += ["--model", "qwen3:8b", "--context-window", "8192", "--think", "on", "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["answer"] == "$1,680 per year"
    first = fake_ollama.requests[0]
    assert (first["options"]["num_ctx"], first["think"]) == (8192, True)
