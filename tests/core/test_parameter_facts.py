"""Parameter facts of OpenAI-compatible servers (backends/chat_completions/request_body.py),
through the real SDK
to the test server answering each 400 in the words the real server uses (sources beside each)."""

from __future__ import annotations

import pytest

from sandbox_app.backends.chat_completions.request_body import request_body
from sandbox_app.core.running.backend import StreamParams
from sandbox_app.core.running.events import Event, Notice
from sandbox_app.core.scenarios.lane_settings import REASONING_EFFORTS
from sandbox_app.core.scenarios.scenario import LaneSettings
from tests.helpers import builtin, finished, of_type, replies_of, run_events, server_backend
from tests.model_server import (
    OPENAI_REASONING_REJECTS,
    ModelScript,
    ModelServer,
    UnsupportedParam,
)


def run(server: ModelServer, model: str, **settings: object) -> list[Event]:
    scenario = builtin("brightgrid").with_changes(model=LaneSettings(**settings))  # type: ignore[arg-type]
    return run_events(scenario, server_backend(server.base_url), model=model)


def effort_refusal(message: str, accepted: tuple[str, ...]) -> UnsupportedParam:
    return UnsupportedParam("reasoning_effort", message, code="unsupported_value", allowed=accepted)


# (model, asked, the 400's message as OpenAI words it, what it accepts, the nearest)
EFFORT_CASES = [
    (  # anomalyco/opencode#4451, openai/openai-agents-python#2089
        "gpt-5.1",
        "minimal",
        "Unsupported value: 'minimal' is not supported with the 'gpt-5.1' model. Supported "
        "values are: 'none', 'low', 'medium', and 'high'.",
        ("none", "low", "medium", "high"),
        "low",
    ),
    (  # kaitranntt/ccs#344
        "gpt-5-mini",
        "xhigh",
        "Unsupported value: 'reasoning_effort' does not support 'xhigh' with this model. "
        "Supported values are: 'minimal', 'low', 'medium', and 'high'.",
        ("minimal", "low", "medium", "high"),
        "high",
    ),
    (  # openai/codex#6647
        "gpt-5.1-codex",
        "none",
        "Unsupported value: 'none' is not supported with the 'gpt-5.1-codex' model. Supported "
        "values are: 'low', 'medium', and 'high'.",
        ("low", "medium", "high"),
        "low",
    ),
]


@pytest.mark.parametrize(("model", "asked", "message", "accepted", "nearest"), EFFORT_CASES)
def test_a_refused_effort_is_sent_again_as_the_nearest_accepted_once(
    fake_server: ModelServer,
    model: str,
    asked: str,
    message: str,
    accepted: tuple[str, ...],
    nearest: str,
) -> None:
    script = ModelScript(
        replies=replies_of("brightgrid"), reject_params=(effort_refusal(message, accepted),)
    )
    fake_server.set_model(model, script)
    events = run(fake_server, model, reasoning_effort=asked)
    assert finished(events).status == "answered"
    assert [n.text for n in of_type(events, Notice)] == [
        f"The server does not take reasoning_effort '{asked}' for {model}: sent again with "
        f"'{nearest}', the nearest it takes (remembered for this model while the app runs)."
    ]
    assert [r["reasoning_effort"] for r in fake_server.requests] == [asked] + [nearest] * 3
    # Remembered: the next run sends the nearest at once.
    again = run(fake_server, model, reasoning_effort=asked)
    assert of_type(again, Notice) == []
    assert fake_server.stats["errors"] == 1


def test_the_efforts_run_from_none_to_xhigh() -> None:
    assert REASONING_EFFORTS == ("none", "minimal", "low", "medium", "high", "xhigh")
    assert LaneSettings(reasoning_effort="xhigh").reasoning_effort == "xhigh"


def test_o_series_are_never_sent_parallel_tool_calls() -> None:
    # "Unsupported parameter: 'parallel_tool_calls' is not supported with this model." even
    # when false (langchain-ai/langchain#29416, run-llama/llama_index#20865).
    extra = (("parallel_tool_calls", False),)
    for model in ("o1", "o3-mini", "o4-mini", "openai/o3"):
        assert "parallel_tool_calls" not in request_body([], StreamParams(model, extra=extra))
    assert request_body([], StreamParams("gpt-4o", extra=extra))["parallel_tool_calls"] is False


def test_an_o_series_native_run_sends_nothing_it_refuses(fake_server: ModelServer) -> None:
    parallel = UnsupportedParam(
        "parallel_tool_calls",
        "Unsupported parameter: 'parallel_tool_calls' is not supported with this model.",
        allowed=(),
    )
    script = ModelScript(
        replies=replies_of("brightgrid"),
        reject_params=(*OPENAI_REASONING_REJECTS, parallel),
        tool_call_style=None,
    )
    fake_server.set_model("o3-mini", script)
    scenario = builtin("brightgrid")
    native = scenario.with_changes(model=scenario.model.replace(tool_calling="native"))
    events = run_events(native, server_backend(fake_server.base_url), model="o3-mini")
    assert fake_server.stats["errors"] == 0, events[-1]
    assert all("parallel_tool_calls" not in r for r in fake_server.requests)


def test_a_server_that_refuses_max_completion_tokens_gets_max_tokens(
    fake_server: ModelServer,
) -> None:
    # A server that checks its body with pydantic (vLLM's shape, voideditor/void#128) refuses
    # the key a gpt-5 name is sent: "[{'type': 'extra_forbidden', 'loc': ('body',
    # 'max_completion_tokens'), 'msg': 'Extra inputs are not permitted', 'input': 8192}]".
    strict = UnsupportedParam(
        "max_completion_tokens",
        "[{'type': 'extra_forbidden', 'loc': ('body', 'max_completion_tokens'), 'msg': "
        "'Extra inputs are not permitted', 'input': {value}}]",
        code="400",
    )
    script = ModelScript(replies=replies_of("brightgrid"), reject_params=(strict,))
    fake_server.set_model("openai/gpt-5-mini", script)
    events = run(fake_server, "openai/gpt-5-mini", max_tokens=300)
    assert finished(events).status == "answered", events[-1]
    assert [n.text for n in of_type(events, Notice)] == [
        "The server does not take 'max_completion_tokens' for openai/gpt-5-mini: sent again "
        "with max_tokens instead (remembered for this model while the app runs)."
    ]
    first, *rest = fake_server.requests
    assert first["max_completion_tokens"] == 300
    assert all(r["max_tokens"] == 300 and "max_completion_tokens" not in r for r in rest)


def test_a_server_that_refuses_both_limits_is_sent_neither_and_never_loops() -> None:
    params = StreamParams("gpt-5", max_tokens=100)
    both = {"max_tokens", "max_completion_tokens"}
    request = request_body([], params, both)
    assert "max_tokens" not in request
    assert "max_completion_tokens" not in request
