"""A trace file in which each model call is a trace of its own (an instrumentation with
nothing around the agent's loop) opens as one run: the traces of one conversation are joined
by their resource and their messages (core/otel/otel_joining.py), so ``open-trace`` prints
every step, exits 0 on the answer and forks from any step. A trace that ends without an
answer exits 8, never 3 (which ``--help`` gives to Ctrl+C)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.cli.main import main
from sandbox_app.core.otel import otel_import
from sandbox_app.core.otel.otel_import import open_trace
from sandbox_app.core.running import events as ev
from tests import otel_traces
from tests.model_server import ModelServer

SAMPLE = Path(__file__).parent.parent / "data" / "openinference_per_call.json"
STEPS = [
    ("lookup", "Brightgrid Pro price", "Brightgrid Pro costs $20 per month per developer."),
    ("calculator", "20 * 12 * 7", "1680"),
]
ANSWER = "$1,680 per year"


def steps(path: Path) -> list[tuple[str, str, str]]:
    events = [e for _, e in open_trace(path).lane.events]
    actions = [e for e in events if isinstance(e, ev.ActionParsed)]
    results = [e for e in events if isinstance(e, ev.Observation)]
    return [(a.tool, a.input, o.text) for a, o in zip(actions, results, strict=True)]


def finished(path: Path) -> ev.RunFinished:
    return next(e for _, e in open_trace(path).lane.events if isinstance(e, ev.RunFinished))


def resource_spans(path: Path) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["resourceSpans"]
    return data


def written(tmp_path: Path, groups: list[dict[str, Any]]) -> Path:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"resourceSpans": groups}), encoding="utf-8")
    return path


def one_span_a_group(path: Path) -> list[dict[str, Any]]:
    """Each span under its own copy of its resource, in the file's order (the sample's
    three calls, one trace each)."""
    groups = []
    for group in resource_spans(path):
        for scope in group["scopeSpans"]:
            for span in scope["spans"]:
                groups.append({**group, "scopeSpans": [{**scope, "spans": [span]}]})
    return groups


def test_the_sample_holds_a_trace_per_model_call() -> None:
    groups = one_span_a_group(SAMPLE)
    assert len({g["scopeSpans"][0]["spans"][0]["traceId"] for g in groups}) == 3
    assert not any(g["scopeSpans"][0]["spans"][0].get("parentSpanId") for g in groups)


def test_per_call_traces_of_one_conversation_open_as_one_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    trace = open_trace(SAMPLE)
    assert steps(SAMPLE) == STEPS
    done = finished(SAMPLE)
    assert (done.status, done.answer, len(done.metrics.steps)) == ("answered", ANSWER, 3)
    assert trace.recording.scenario.system_prompt == otel_traces.NATIVE_SYSTEM
    assert trace.recording.scenario.question == otel_traces.QUESTION
    assert trace.notices[0] == "The file holds 3 traces, each a step of one run: joined."
    assert main(["open-trace", str(SAMPLE)]) == 0
    out = capsys.readouterr().out
    assert "── Step 3 ──" in out
    assert f"Final answer: {ANSWER}" in out


@pytest.mark.parametrize("kind", ["openinference", "genai"])
@pytest.mark.parametrize("loop", ["react", "native"])
def test_each_instrumentation_unwrapped_opens_as_one_run(
    tmp_path: Path, fake_server: ModelServer, loop: Any, kind: Any
) -> None:
    spans = otel_traces.run_agent(fake_server, loop, kind, wrapped=False)
    assert len({s.context.trace_id for s in spans}) == 3  # a trace per call
    path = otel_traces.write_json(spans, tmp_path / "unwrapped.json")
    assert steps(path) == STEPS
    assert (finished(path).status, finished(path).answer) == ("answered", ANSWER)


def test_the_order_in_the_file_does_not_matter(tmp_path: Path) -> None:
    path = written(tmp_path, one_span_a_group(SAMPLE)[::-1])
    assert steps(path) == STEPS
    assert finished(path).answer == ANSWER


def test_two_runs_in_one_file_are_two_conversations(
    tmp_path: Path, fake_server: ModelServer
) -> None:
    """The same loop twice, one process: the same first request, each run's own steps."""
    first = otel_traces.run_agent(fake_server, "native", "openinference", wrapped=False)
    second = otel_traces.run_agent(fake_server, "native", "openinference", wrapped=False)
    path = otel_traces.write_json(first + second, tmp_path / "two.json")
    trace = open_trace(path)
    assert steps(path) == STEPS
    assert trace.notices[0].startswith("The file holds 6 traces: the 3 that are steps of")
    started = [e.step for _, e in trace.lane.events if isinstance(e, ev.StepStarted)]
    assert started == [1, 2, 3]  # the other run's calls were not mixed in


def test_calls_from_another_process_are_not_joined(tmp_path: Path) -> None:
    """Steps 2 and 3 under another resource (another service): step 1 stands alone, and the
    longer conversation (steps 2 and 3) is the one opened."""
    groups = one_span_a_group(SAMPLE)
    for group in groups[1:]:
        group["resource"] = {
            "attributes": [{"key": "service.name", "value": {"stringValue": "another"}}]
        }
    path = written(tmp_path, groups)
    assert steps(path) == STEPS[1:]
    assert finished(path).answer == ANSWER


def test_fork_from_step_2_of_per_call_traces_runs_live(
    fake_server: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    otel_traces.serve(fake_server)
    argv = ["open-trace", str(SAMPLE), "--fork-from", "2", "--base-url", fake_server.base_url]
    assert main([*argv, "--model", otel_traces.MODEL, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["answer"] == ANSWER
    (asked,) = fake_server.requests  # step 3 only: steps 1 and 2 as the traces had them
    assert [m["role"] for m in asked["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
    ]
    assert asked["messages"][-1]["content"] == "1680"


def test_a_trace_that_ends_without_an_answer_exits_8_as_help_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = written(tmp_path, one_span_a_group(SAMPLE)[:2])
    assert main(["open-trace", str(path)]) == 8
    assert "stopped: The trace ends after step 2 without an answer." in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["open-trace", "--help"])
    listed = capsys.readouterr().out
    assert "8  the trace ends without a final answer" in listed
    assert "3  stopped (Ctrl+C) during a fork" in listed


def _genai_span(trace: str, span: str, sent: list[str], reply: str) -> dict[str, Any]:
    """A GenAI chat span: ``sent`` alternates user and assistant messages."""

    def attribute(key: str, value: Any) -> dict[str, Any]:
        return {"key": key, "value": {"stringValue": value}}

    def message(role: str, words: str) -> dict[str, Any]:
        return {"role": role, "parts": [{"type": "text", "content": words}]}

    messages = [message(("user", "assistant")[i % 2], w) for i, w in enumerate(sent)]
    return {
        "traceId": trace * 16,
        "spanId": span * 8,
        "name": "chat",
        "attributes": [
            attribute("gen_ai.operation.name", "chat"),
            attribute("gen_ai.input.messages", json.dumps(messages)),
            attribute("gen_ai.output.messages", json.dumps([message("assistant", reply)])),
        ],
    }  # no times: every call starts at 0


def test_traces_that_would_continue_each_other_are_read_once(tmp_path: Path) -> None:
    """Two traces of two calls each, no times, each one's first call extending the other's
    last (only a hostile or broken file can): one run of the four calls, no loop."""
    a1, a2 = ["u", "Thought: x", "t"], ["v"]  # a1 extends b2's input and reply, b1 a2's
    b1, b2 = ["v", "Thought: y", "t"], ["u"]
    spans = [
        _genai_span("a1", "a1", a1, "Thought: p"),
        _genai_span("a1", "a2", a2, "Thought: y"),
        _genai_span("b2", "b1", b1, "Thought: q"),
        _genai_span("b2", "b2", b2, "Thought: x"),
    ]
    path = written(tmp_path, [{"scopeSpans": [{"spans": spans}]}])
    trace = open_trace(path)
    started = [e for _, e in trace.lane.events if isinstance(e, ev.StepStarted)]
    assert len(started) == 4
    assert trace.notices[0] == "The file holds 2 traces, each a step of one run: joined."


@pytest.mark.parametrize("order", [1, -1])
def test_per_call_traces_past_the_first_read_are_joined_in_any_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, order: int
) -> None:
    """A long file is shown from its first spans; when those are steps of one conversation
    in traces of their own, the rest of the file is read and joined before the run is shown:
    a later piece (or, the file reversed, an earlier one) is never left out."""
    monkeypatch.setattr(otel_import, "FIRST_SPANS", 2)  # the sample's 3 calls past it
    path = written(tmp_path, one_span_a_group(SAMPLE)[::order])
    stream = otel_import.TraceStream(path)
    assert stream.notices[0] == "The file holds 3 traces, each a step of one run: joined."
    events = [e for _, e in stream.timed()]
    started = [e.step for e in events if isinstance(e, ev.StepStarted)]
    assert started == [1, 2, 3]
    done = events[-1]
    assert isinstance(done, ev.RunFinished)
    assert (done.status, done.answer) == ("answered", ANSWER)
    assert steps(path) == STEPS
