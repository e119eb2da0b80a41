"""Thinking models end to end: the real SDK over HTTP to the test server streaming reasoning the
ways real servers do (tests/core/test_sse.py quotes the captures). The thinking is shown,
counted, never acted on, never cut, never sent back; OpenAI's reasoning models get the
parameters they take."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from typing import Any

import pytest

from sandbox_app.backends.chat_completions import openai_compat
from sandbox_app.core.results.verdict import matches
from sandbox_app.core.running.engine import ReactEngine, drive
from sandbox_app.core.running.events import (
    ActionParsed,
    Event,
    FormatError,
    Notice,
    ReasoningDelta,
    RunFinished,
    ThinkingReclassified,
    TokenDelta,
)
from sandbox_app.core.running.model_traits import THINKING_MAX_TOKENS, traits_for
from sandbox_app.core.scenarios.scenario import LaneSettings, Scenario
from tests.helpers import builtin, finished, of_type, replies_of, run_events, server_backend
from tests.model_server import (
    OPENAI_REASONING_REJECTS,
    ModelScript,
    ModelServer,
    UnsupportedParam,
    split_every,
)

# What a thinking model considers before it acts: an action it decides against, an
# observation it imagines, and an answer it does not give. None of it may ever be used.
DECOY = (
    "The user wants a yearly price. Maybe I should guess:\n"
    "Action: calculator[99 * 99]\n"
    "Observation: 9801\n"
    "Answer: $9,801\n"
    "No: search first, then multiply."
)
SEARCHES = [("search", "Brightgrid Pro price per developer"), ("calculator", "20 * 12 * 7")]


def thinking_replies(template: str = "<think>{decoy}</think>\n\n{reply}") -> list[str]:
    return [template.format(decoy=DECOY, reply=reply) for reply in replies_of("brightgrid")]


def run_model(
    server: ModelServer,
    script: ModelScript,
    *,
    model: str = "thinker",
    scenario: Scenario | None = None,
) -> list[Event]:
    server.set_model(model, script)
    return run_events(
        scenario or builtin("brightgrid"), server_backend(server.base_url), model=model
    )


def actions(events: list[Event]) -> list[tuple[str, str]]:
    return [(a.tool, a.input) for a in of_type(events, ActionParsed)]


def thinking(events: list[Event]) -> str:
    return "".join(e.text for e in of_type(events, ReasoningDelta))


def assert_thought_but_acted_only_on_the_reply(server: ModelServer, events: list[Event]) -> None:
    done = finished(events)
    assert (done.status, done.answer) == ("answered", "$1,680 per year"), events[-3:]
    assert actions(events) == SEARCHES
    assert "calculator[99 * 99]" in thinking(events)
    # Nothing of the thinking goes back to the model (the guide: what is sent back and why).
    for request in server.requests:
        for message in request["messages"]:
            assert "99 * 99" not in message["content"], message
    scenario = builtin("brightgrid")
    assert matches(done.answer, scenario.expected)


@pytest.mark.parametrize(
    ("field", "style"),
    [
        ("reasoning_content", "deepseek"),  # DeepSeek; llama.cpp and LM Studio send it sparse
        ("reasoning_content", "sparse"),
        ("reasoning", "sparse"),  # vLLM >= 0.11, Ollama's /v1
        ("reasoning", "openrouter"),  # with reasoning_details repeating the text
    ],
)
def test_reasoning_fields_are_shown_and_never_acted_on(
    fake_server: ModelServer, field: Any, style: Any
) -> None:
    script = ModelScript(replies=thinking_replies(), reasoning_field=field, chunk_style=style)
    events = run_model(fake_server, script)
    assert_thought_but_acted_only_on_the_reply(fake_server, events)
    metrics = finished(events).metrics
    # The server counted the reasoning tokens (completion_tokens_details): not an estimate.
    assert metrics.reasoning_tokens > 0
    assert not metrics.reasoning_estimated
    assert all(step.thinking_s is not None for step in metrics.steps)
    assert metrics.tokens_out > metrics.reasoning_tokens  # cost counts both


def test_inline_tags_cut_at_awkward_chunk_boundaries(fake_server: ModelServer) -> None:
    # Three characters a chunk: "<th" + "ink" + ">", "</t" + "hin" + "k>".
    script = ModelScript(
        replies=thinking_replies(), tokenizer=split_every(3), report_reasoning_tokens=False
    )
    events = run_model(fake_server, script)
    assert_thought_but_acted_only_on_the_reply(fake_server, events)
    assert not any(
        "<think" in e.text or "</think" in e.text for e in of_type(events, ReasoningDelta)
    )
    # llama.cpp reports no reasoning count: it is estimated, and says so.
    assert finished(events).metrics.reasoning_estimated


def test_a_stop_sequence_inside_the_thinking_is_asked_again_without_stop(
    fake_server: ModelServer,
) -> None:
    # The server applies stop to the raw text: the decoy's "\nObservation:" ends the reply
    # inside <think> (vLLM V1, llama.cpp). The step is asked again without a stop sequence.
    events = run_model(fake_server, ModelScript(replies=thinking_replies()))
    assert_thought_but_acted_only_on_the_reply(fake_server, events)
    notices = [n.text for n in of_type(events, Notice)]
    assert len(notices) == 1, notices
    assert "stop sequence" in notices[0]
    stops = ["stop" in request for request in fake_server.requests]
    # First request with stop, then never again for this model.
    assert stops == [True, False, False, False], stops


def test_a_server_that_skips_stop_inside_thinking_is_not_asked_twice(
    fake_server: ModelServer,
) -> None:
    script = ModelScript(replies=thinking_replies(), stop_skips_reasoning=True)
    events = run_model(fake_server, script)
    assert_thought_but_acted_only_on_the_reply(fake_server, events)
    assert of_type(events, Notice) == []
    assert len(fake_server.requests) == 3


def test_a_template_that_opens_the_thinking_itself(fake_server: ModelServer) -> None:
    # Qwen3/QwQ templates end the prompt with "<think>": the reply only closes it.
    calm = DECOY.replace("Observation: 9801\n", "")  # a stop inside would go unseen: the guide
    replies = thinking_replies("{decoy}\n</think>\n\n{reply}".replace("{decoy}", calm))
    events = run_model(fake_server, ModelScript(replies=replies))
    assert_thought_but_acted_only_on_the_reply(fake_server, events)
    # What had already streamed as model text when "</think>" came (how much depends on how
    # the chunks fell) is moved to the thinking; the rest came as thinking.
    reclassified = of_type(events, ThinkingReclassified)
    assert [e.step for e in reclassified] in ([], [1])
    assert "Action: calculator[99 * 99]" in "".join(e.text for e in reclassified) + thinking(events)
    # Learnt once: later replies of the model are read as thinking from their first token.
    assert traits_for(server_backend(fake_server.base_url).label, "thinker").starts_inside


def test_a_final_answer_only_inside_the_thinking_is_no_answer(
    fake_server: ModelServer,
) -> None:
    script = ModelScript(
        replies=["<think>Final Answer: 1680</think>", *thinking_replies()],
        stop_skips_reasoning=True,
    )
    events = run_model(fake_server, script)
    errors = of_type(events, FormatError)
    assert [e.step for e in errors] == [1]
    assert finished(events).metrics.format_errors == 1


def test_a_reply_cut_by_max_tokens_inside_the_thinking_is_reported_as_such(
    fake_server: ModelServer,
) -> None:
    scenario = builtin("brightgrid").with_changes(model=LaneSettings(max_tokens=12))
    script = ModelScript(replies=thinking_replies(), stop_skips_reasoning=True)
    events = run_model(fake_server, script, scenario=scenario)
    done = finished(events)
    assert done.status == "failed"
    assert done.reason == (
        "Cut at Max tokens (12) inside the thinking (it used the whole budget): raise Max tokens."
    )
    assert of_type(events, FormatError) == []  # never a format error
    assert done.metrics.steps[0].cut_by_limit
    assert done.metrics.cuts_by_limit == 1
    assert len(fake_server.requests) == 1  # the user's own limit is kept: not asked again


def test_auto_max_tokens_gives_a_thinking_model_room(fake_server: ModelServer) -> None:
    long_thought = "<think>" + "consider " * 600 + "</think>\n\n{reply}"
    replies = [long_thought.replace("{reply}", r) for r in replies_of("brightgrid")]
    script = ModelScript(replies=replies, stop_skips_reasoning=True)
    events = run_model(fake_server, script)  # brightgrid's max_tokens is Auto
    assert finished(events).status == "answered"
    limits = [request["max_tokens"] for request in fake_server.requests]
    assert limits == [512, THINKING_MAX_TOKENS, THINKING_MAX_TOKENS, THINKING_MAX_TOKENS]
    assert of_type(events, Notice)[0].text.startswith("Cut at Max tokens (Auto, 512)")


def test_a_pre_opened_block_cut_by_auto_max_tokens_is_never_acted_on(
    fake_server: ModelServer,
) -> None:
    # No "<think>", and 512 tokens end the reply before "</think>": nothing in it says it
    # was thinking. A cut reply is never acted on; on Auto it is asked again with room.
    long_thought = "Action: calculator[99 * 99]\n" + "consider " * 600 + "\n</think>\n\n{reply}"
    replies = [long_thought.replace("{reply}", r) for r in replies_of("brightgrid")]
    events = run_model(fake_server, ModelScript(replies=replies, stop_skips_reasoning=True))
    assert (finished(events).status, actions(events)) == ("answered", SEARCHES)
    assert [r["max_tokens"] for r in fake_server.requests] == [512] + [THINKING_MAX_TOKENS] * 3


def test_a_model_read_as_pre_opened_that_closes_nothing_is_read_as_it_is(
    fake_server: ModelServer,
) -> None:
    # Step 1 closes a block it never opened; step 2 skips thinking (Qwen3's /no_think).
    first, second, third = replies_of("brightgrid")
    replies = [f"{DECOY.replace('Observation: 9801', '')}\n</think>\n\n{first}", second, third]
    events = run_model(fake_server, ModelScript(replies=replies, stop_skips_reasoning=True))
    assert (finished(events).status, actions(events)) == ("answered", SEARCHES)
    notices = [n.text for n in of_type(events, Notice)]
    assert len(notices) == 1
    assert notices[0].startswith("The reply closed no thinking block this time")


def test_a_value_out_of_range_is_not_taken_for_an_unsupported_parameter(
    fake_server: ModelServer,
) -> None:
    too_large = UnsupportedParam(
        "max_tokens",
        "max_tokens is too large: 200000. This model supports at most 16384 completion tokens.",
        code="invalid_value",
    )
    scenario = builtin("brightgrid").with_changes(model=LaneSettings(max_tokens=200_000))
    script = ModelScript(replies=replies_of("brightgrid"), reject_params=(too_large,))
    events = run_model(fake_server, script, model="gpt-4o", scenario=scenario)
    done = finished(events)
    assert done.status == "failed"
    assert "too large" in done.reason
    assert of_type(events, Notice) == []
    assert fake_server.stats["completions"] == 1  # the user's limit is not dropped


def test_thinking_time_is_never_negative(fake_server: ModelServer) -> None:
    # Content first, then a thinking block, then more content.
    replies = [
        r.replace("Thought:", "Thought:<think>hmm</think>", 1) for r in replies_of("brightgrid")
    ]
    events = run_model(fake_server, ModelScript(replies=replies, stop_skips_reasoning=True))
    steps = finished(events).metrics.steps
    assert all(s.thinking_s is not None and s.thinking_s >= 0 for s in steps), steps


def test_openai_reasoning_models_get_the_parameters_they_take(
    fake_server: ModelServer,
) -> None:
    scenario = builtin("brightgrid").with_changes(
        model=LaneSettings(temperature=0.0, reasoning_effort="low")
    )
    script = ModelScript(
        replies=replies_of("brightgrid"),
        reject_params=OPENAI_REASONING_REJECTS,
        hidden_reasoning_tokens=40,
    )
    events = run_model(fake_server, script, model="o3-mini", scenario=scenario)
    done = finished(events)
    assert (done.status, done.answer) == ("answered", "$1,680 per year")
    assert fake_server.stats["errors"] == 0
    for request in fake_server.requests:
        assert "max_tokens" not in request
        assert "stop" not in request
        assert "temperature" not in request
        assert request["max_completion_tokens"] == THINKING_MAX_TOKENS
        assert request["reasoning_effort"] == "low"
    # o-series thinking is hidden: only its count comes back, and it is not an estimate.
    assert done.metrics.reasoning_tokens == 3 * 40
    assert not done.metrics.reasoning_estimated
    assert thinking(events) == ""


def test_a_rejected_parameter_is_dropped_once_and_remembered(
    fake_server: ModelServer,
) -> None:
    stop_refused = (OPENAI_REASONING_REJECTS[1],)
    assert stop_refused[0].param == "stop"
    script = ModelScript(replies=replies_of("brightgrid"), reject_params=stop_refused)
    events = run_model(fake_server, script, model="local-model")
    assert finished(events).status == "answered"
    notices = [n.text for n in of_type(events, Notice)]
    assert notices == [
        "The server does not take 'stop' for local-model: sent again without it "
        "(remembered for this model while the app runs)."
    ]
    assert fake_server.stats["errors"] == 1
    # A second run of the same model: no refused request, no notice.
    again = run_events(
        builtin("brightgrid"), server_backend(fake_server.base_url), model="local-model"
    )
    assert of_type(again, Notice) == []
    assert fake_server.stats["errors"] == 1


def test_a_refusal_of_something_that_cannot_be_dropped_ends_the_run_once(
    fake_server: ModelServer,
) -> None:
    no_stream = (UnsupportedParam("stream", "Unsupported value: 'stream' does not support true."),)
    script = ModelScript(replies=replies_of("brightgrid"), reject_params=no_stream)
    events = run_model(fake_server, script, model="o1-old")
    done = finished(events)
    assert done.status == "failed"
    assert "stream" in done.reason
    assert fake_server.stats["completions"] == 1  # never a loop


def test_time_to_first_token_starts_when_the_request_is_sent(
    fake_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # When the client was ready, and when the first token reached the run: the request went
    # out after the first, so (first token − its time to first token) may not come before
    # it. Counted from before the client's start-up, it would.
    ready_at: list[float] = []
    real = openai_compat._new_client

    def noting_client(config: Any) -> Any:
        client = real(config)
        ready_at.append(time.perf_counter())
        return client

    monkeypatch.setattr(openai_compat, "_new_client", noting_client)
    fake_server.set_model("plain", ModelScript(replies=replies_of("brightgrid")))
    backend = server_backend(fake_server.base_url)
    engine = ReactEngine(builtin("brightgrid"), backend, model="plain")
    first_token_at: list[float] = []

    def emit(event: Event) -> None:
        if isinstance(event, TokenDelta) and not first_token_at:
            first_token_at.append(time.perf_counter())

    async def run() -> RunFinished:
        try:
            return await drive(engine, emit)
        finally:
            await backend.aclose()

    first = asyncio.run(run()).metrics.steps[0]
    assert first.ttft_s is not None
    assert first_token_at[0] - first.ttft_s >= ready_at[0]


def test_reasoning_streams_before_the_content(fake_server: ModelServer) -> None:
    script = ModelScript(replies=thinking_replies(), reasoning_field="reasoning", rate=400)
    events = run_model(fake_server, script)
    step_one = [e for e in events if getattr(e, "step", 0) == 1]
    kinds = [
        type(e).__name__ for e in step_one if type(e).__name__ in ("ReasoningDelta", "TokenDelta")
    ]
    # Streamed: several pieces of thinking arrive, all before the first piece of content.
    assert kinds.count("ReasoningDelta") > 1
    assert kinds.index("TokenDelta") > max(i for i, k in enumerate(kinds) if k == "ReasoningDelta")


@pytest.mark.latency
def test_a_local_servers_first_token_comes_within_50_ms_of_the_send(
    fake_server: ModelServer,
) -> None:
    # A fresh process: the SDK's import (~1 s) and the client's start-up happen in the first
    # step; counted as the model's latency, they made a local first token look like 1,000 ms.
    fake_server.set_model("m1", ModelScript(replies=replies_of("brightgrid")))
    command = ["run", "--base-url", fake_server.base_url, "--model", "m1", "--json"]
    result = subprocess.run(
        [sys.executable, "-m", "sandbox_app", *command],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    first = json.loads(result.stdout)["metrics"]["steps"][0]
    assert first["ttft_s"] < 0.05, first
