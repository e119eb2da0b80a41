"""Opening a trace from elsewhere: OTLP files written from REAL instrumentation (OpenInference's
and OpenTelemetry's own OpenAI instrumentations around an openai-SDK agent loop that talks to
the test server over HTTP) read back as the same steps, printed by ``open-trace`` as ``run``
prints a run, and forked live against the test server; damaged and hostile files one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.cli.main import main
from sandbox_app.core.otel.otel_import import open_trace
from sandbox_app.core.otel.otel_spans import TraceError
from sandbox_app.core.results.trace_text import TraceText
from sandbox_app.core.running import events as ev
from tests import otel_traces
from tests.model_server import ModelServer
from tests.model_server.script import prompt_tokens as _prompt_tokens

STEPS = [
    ("lookup", "Brightgrid Pro price", "Brightgrid Pro costs $20 per month per developer."),
    ("calculator", "20 * 12 * 7", "1680"),
]
ANSWER = "$1,680 per year"
CASES = [(loop, kind) for loop in ("react", "native") for kind in ("openinference", "genai")]


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str, str], Any]:
    """Each loop under each instrumentation, written as OTLP JSON and protobuf (made once),
    with the prompt tokens the test server counted for its requests."""
    folder = tmp_path_factory.mktemp("traces")
    made: dict[tuple[str, str, str], Any] = {}
    with ModelServer() as server:
        for loop, kind in CASES:
            server.reset()
            spans = otel_traces.run_agent(server, loop, kind)  # type: ignore[arg-type]
            counted = sum(_prompt_tokens(r["messages"]) for r in server.requests)
            stem = folder / f"{loop}-{kind}"
            made[(loop, kind, "json")] = otel_traces.write_json(spans, stem.with_suffix(".json"))
            made[(loop, kind, "pb")] = otel_traces.write_protobuf(spans, stem.with_suffix(".pb"))
            made[(loop, kind, "tokens")] = counted
    return made


def _steps(events: list[ev.Event]) -> list[tuple[str, str, str]]:
    actions = [e for e in events if isinstance(e, ev.ActionParsed)]
    results = [e for e in events if isinstance(e, ev.Observation)]
    return [(a.tool, a.input, o.text) for a, o in zip(actions, results, strict=True)]


def _text(events: list[ev.Event]) -> str:
    writer = TraceText()
    return "".join(text for e in events for _, text, _ in writer.written(e))


@pytest.mark.parametrize("form", ["json", "pb"])
@pytest.mark.parametrize(("loop", "kind"), CASES)
def test_a_real_instrumented_trace_opens_as_the_same_steps(
    traces: dict[Any, Any], loop: str, kind: str, form: str
) -> None:
    trace = open_trace(traces[(loop, kind, form)])
    events = [e for _, e in trace.lane.events]
    assert _steps(events) == STEPS
    finished = events[-1]
    assert isinstance(finished, ev.RunFinished)
    assert (finished.status, finished.answer) == ("answered", ANSWER)
    # The usage attributes are the server's own counts, step by step.
    assert finished.metrics.tokens_in == traces[(loop, kind, "tokens")]
    assert not finished.metrics.estimated
    assert finished.metrics.tool_calls == 2
    scenario = trace.recording.scenario
    assert scenario.question == otel_traces.QUESTION
    system = otel_traces.SYSTEM if loop == "react" else otel_traces.NATIVE_SYSTEM
    assert scenario.system_prompt == system
    assert scenario.model.tool_calling == ("native" if loop == "native" else "react")
    assert trace.lane.settings.model == otel_traces.MODEL
    # The tool the trace only names is a mock answering what it recorded; one notice each.
    (lookup,) = scenario.custom_tools
    assert (lookup.name, lookup.behaviour) == ("lookup", "canned")
    assert [(r.pattern, r.reply) for r in lookup.rules] == [STEPS[0][1:]]
    assert set(scenario.enabled_tools) == {"lookup", "calculator"}
    assert len(trace.notices) == 2
    assert all("\n" not in line for line in trace.notices)
    # Native calls read as the native-mode trace shows them; text ReAct as its reply.
    text = _text(events)
    if loop == "native":
        assert 'Action: lookup({"query": "Brightgrid Pro price"})' in text
        assert any(isinstance(e, ev.FinalAnswer) and e.was_thought for e in events)
    else:
        assert "Action: lookup[Brightgrid Pro price]" in text


@pytest.mark.parametrize("loop", ["react", "native"])
def test_both_instrumentations_and_both_formats_give_one_trace(
    traces: dict[Any, Any], loop: str
) -> None:
    texts = {  # all but the figures' line (each run took its own time)
        _text([e for _, e in open_trace(traces[(loop, kind, form)]).lane.events]).rsplit("\n", 2)[0]
        for kind in ("openinference", "genai")
        for form in ("json", "pb")
    }
    assert len(texts) == 1


def test_open_trace_prints_as_run_does(
    traces: dict[Any, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["open-trace", str(traces[("react", "openinference", "json")])]) == 0
    out = capsys.readouterr().out
    assert "── Step 1 ──" in out
    assert "Observation: 1680" in out
    assert f"Final answer: {ANSWER}" in out
    assert main(["open-trace", "--json", str(traces[("native", "genai", "pb")])]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["status"], document["answer"]) == ("answered", ANSWER)
    assert [e["tool"] for e in document["events"] if e["type"] == "ActionParsed"] == [
        "lookup",
        "calculator",
    ]


@pytest.mark.parametrize("loop", ["react", "native"])
def test_fork_from_step_1_runs_live_against_the_server(
    traces: dict[Any, Any],
    fake_server: ModelServer,
    capsys: pytest.CaptureFixture[str],
    loop: str,
) -> None:
    otel_traces.serve(fake_server)
    path = str(traces[(loop, "openinference", "json")])
    argv = ["open-trace", path, "--fork-from", "1", "--base-url", fake_server.base_url]
    assert main([*argv, "--model", otel_traces.MODEL, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["answer"] == ANSWER
    # Step 1 as the trace had it; steps 2 and 3 asked live, from the recorded conversation.
    assert len(fake_server.requests) == 2
    first = fake_server.requests[0]["messages"]
    assert first[1]["content"] == otel_traces.QUESTION
    assert len(first) == 4
    assert ("tools" in fake_server.requests[0]) == (loop == "native")
    observed = [e["text"] for e in document["events"] if e["type"] == "Observation"]
    assert observed == [STEPS[0][2], "1680"]


def test_fork_past_the_last_step_is_one_line(
    traces: dict[Any, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(traces[("react", "genai", "json")])
    assert main(["open-trace", path, "--fork-from", "3", "--base-url", "http://127.0.0.1:9"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "fork from 1 to 2" in err


def _deep_attribute(depth: int) -> bytes:
    value = "[" * depth + "]" * depth
    span = {
        "traceId": "ab" * 16,
        "spanId": "cd" * 8,
        "name": "chat",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.input.messages", "value": {"stringValue": value}},
        ],
    }
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    return json.dumps(doc).encode()


def _cycle() -> bytes:
    """Two model calls, each the other's parent (and a third below them)."""
    chat = [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}]
    asked = {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(
        [{"role": "user", "parts": [{"type": "text", "content": "Price?"}]}]
    )}}  # fmt: skip
    said = {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(
        [{"role": "assistant", "parts": [{"type": "text", "content": "Answer: $20"}]}]
    )}}  # fmt: skip
    spans = [
        {"traceId": "ab" * 16, "spanId": a, "parentSpanId": b, "name": "chat",
         "startTimeUnixNano": str(n), "endTimeUnixNano": str(n + 5),
         "attributes": [*chat, asked, said]}
        for n, (a, b) in enumerate([("a1" * 8, "b2" * 8), ("b2" * 8, "a1" * 8)], start=1)
    ]  # fmt: skip
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode()


def test_spans_whose_parents_form_a_cycle_are_read_as_far_as_they_go(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cycle.json"
    path.write_bytes(_cycle())
    trace = open_trace(path)  # each call in the cycle is a step: none wraps another
    (done,) = [e for _, e in trace.lane.events if isinstance(e, ev.RunFinished)]
    assert (done.status, done.answer) == ("answered", "$20")
    assert main(["open-trace", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "$20" in out
    assert "Traceback" not in err


HOSTILE: dict[str, bytes] = {
    "broken JSON": b'{"resourceSpans": [',
    "not a trace": b'{"hello": "world"}',
    "no spans": b'{"resourceSpans": []}',
    "no model calls": b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "x"}]}]}]}',
    "10,000-deep file": b"{" + b'"a":[' * 10_000 + b"]" * 10_000 + b"}",
    "10,000-deep attribute": _deep_attribute(10_000),
    "binary noise": bytes(range(256)) * 4,
    # A protobuf field that says 1 GB follows: 0x0a (resource_spans), then the length.
    "1 GB claim": b"\x0a\x80\x80\x80\x80\x04" + b"\x00" * 64,
    "control characters": b"\x1b[2J\x1b]0;pwned\x07\x00\x01",
    "empty": b"",
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_bad_trace_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    path = tmp_path / "trace.json"
    path.write_bytes(HOSTILE[name])
    with pytest.raises(TraceError) as caught:
        open_trace(path)
    assert "\n" not in str(caught.value)
    assert "trace.json" in str(caught.value)
    assert main(["open-trace", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("react-sandbox: ")
    assert "\x1b" not in err
    assert "Traceback" not in err


def test_a_huge_trace_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as f:  # sparse: 1 GB on paper, read only to the limit
        f.truncate(1 << 30)
    with pytest.raises(TraceError, match=r"huge\.json") as caught:
        open_trace(path)
    assert "\n" not in str(caught.value)


def test_model_text_with_control_characters_is_shown_as_marks(
    traces: dict[Any, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(Path(traces[("react", "openinference", "json")]).read_text())
    for resource in data["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for attribute in span["attributes"]:
                    if attribute["key"] == "llm.output_messages.0.message.content":
                        value = attribute["value"]["stringValue"]
                        attribute["value"]["stringValue"] = value + "\x1b]0;pwned\x07"
    path = tmp_path / "escapes.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert main(["open-trace", str(path)]) == 0
    assert "\x1b" not in capsys.readouterr().out
