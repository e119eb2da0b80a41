"""OpenTelemetry export (application/otel_export.py, core/otel/otel_attributes.py): a
three-step Brightgrid run becomes an invoke_agent span with chat and execute_tool spans,
read back with opentelemetry-proto from the OTLP JSON file and from a local OTLP/HTTP
receiver; message content only when asked; an unreachable endpoint is one line."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sandbox_app.application.otel_export import OtlpTarget, endpoint_url, export, file_contents
from sandbox_app.application.otel_live import LiveExport
from sandbox_app.cli.main import main
from sandbox_app.core.otel.otel_attributes import Tags, group_span, run_spans
from sandbox_app.core.otel.otel_subjects import comparison_spans, evaluation_spans
from sandbox_app.core.results.compare import LaneRecord
from sandbox_app.core.results.eval_result import Arm, EvalResult
from sandbox_app.core.results.exports import Comparison, EvalResults
from sandbox_app.core.running.engine import ReactEngine, drive
from sandbox_app.core.running.events import Event, Exchange
from sandbox_app.core.running.records import RunRecord, RunSettings
from tests.helpers import builtin, run_events, scripted
from tests.otlp_receiver import REJECTED, OtlpReceiver, otlp_receiver

__all__ = ["otlp_receiver"]

CONTENT_KEYS = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "input.value",
    "output.value",
)


def brightgrid_run() -> RunRecord:
    scenario = builtin("brightgrid")
    record = RunRecord(RunSettings(backend="scripted", model="scripted-1", prompt_version="v1"))
    record.add(run_events(scenario, scripted(scenario)))
    return record


def read_back(text: str) -> ExportTraceServiceRequest:
    """The OTLP JSON file as the protocol writes it (hex ids) into the proto message."""
    document = json.loads(text)
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        assert len(span[key]) in (16, 32), span[key]  # hex, as OTLP/JSON says
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return json_format.ParseDict(document, ExportTraceServiceRequest())


def spans_of(request: ExportTraceServiceRequest) -> list[Any]:
    return [s for r in request.resource_spans for sc in r.scope_spans for s in sc.spans]


def attrs(span: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in span.attributes:
        value = kv.value
        kind = value.WhichOneof("value")
        out[kv.key] = (
            list(v.string_value for v in value.array_value.values)
            if (kind == "array_value")
            else getattr(value, kind)
        )
    return out


def check_tree(spans: list[Any], *, content: bool) -> None:
    by_name = {s.name: s for s in spans}
    agent = by_name["invoke_agent Brightgrid"]
    chats = [s for s in spans if s.name.startswith("chat ")]
    tools = [s for s in spans if s.name.startswith("execute_tool ")]
    assert len(spans) == 6
    assert len(chats) == 3
    assert [s.name for s in tools] == ["execute_tool search", "execute_tool calculator"]
    assert {s.trace_id for s in spans} == {agent.trace_id}  # one trace for the run
    assert not agent.parent_span_id
    assert all(s.parent_span_id == agent.span_id for s in [*chats, *tools])
    a = attrs(agent)
    assert a["gen_ai.operation.name"] == "invoke_agent"
    assert a["openinference.span.kind"] == "AGENT"
    assert a["gen_ai.usage.input_tokens"] == 164 + 197 + 233
    assert a["react_sandbox.scenario"] == "Brightgrid"
    assert a["react_sandbox.prompt_version"] == "v1"
    firsts = [attrs(c) for c in chats]
    assert [c["gen_ai.usage.input_tokens"] for c in firsts] == [164, 197, 233]
    assert [c["gen_ai.usage.output_tokens"] for c in firsts] == [22, 33, 15]
    assert [c["llm.token_count.total"] for c in firsts] == [186, 230, 248]
    for c in firsts:
        assert c["gen_ai.operation.name"] == "chat"
        assert c["openinference.span.kind"] == "LLM"
        assert c["gen_ai.provider.name"] == "scripted"
        assert c["gen_ai.request.model"] == c["llm.model_name"] == "scripted"
        assert c["gen_ai.response.model"] == "scripted-1"
    calc = attrs(tools[1])
    assert calc["gen_ai.tool.name"] == calc["tool.name"] == "calculator"
    assert calc["openinference.span.kind"] == "TOOL"
    assert calc["gen_ai.tool.call.id"]
    # The times are the run's own: each step's request before its tool, inside the run.
    assert chats[0].start_time_unix_nano <= chats[0].end_time_unix_nano
    assert chats[0].end_time_unix_nano <= tools[0].start_time_unix_nano
    assert tools[0].end_time_unix_nano <= chats[1].start_time_unix_nano
    assert agent.start_time_unix_nano <= chats[0].start_time_unix_nano
    assert chats[2].end_time_unix_nano <= agent.end_time_unix_nano
    present = {key for s in spans for key in attrs(s) if key in CONTENT_KEYS}
    if content:
        assert calc["gen_ai.tool.call.arguments"] == "20 * 12 * 7"
        assert calc["gen_ai.tool.call.result"] == "1680"
        assert attrs(agent)["output.value"] == "$1,680 per year"
        assert "Brightgrid Pro" in firsts[0]["gen_ai.input.messages"]
    else:
        assert present == set()


def test_a_three_step_run_is_one_trace_of_agent_chat_and_tool_spans(tmp_path: Path) -> None:
    plans = [run_spans(brightgrid_run(), Tags("Brightgrid", "v1"), content=True)]
    sent = export(plans, OtlpTarget(file=tmp_path / "run.json"))
    assert sent.ok
    assert sent.spans == 6
    spans = spans_of(read_back((tmp_path / "run.json").read_text(encoding="utf-8")))
    check_tree(spans, content=True)


def test_content_off_leaves_every_message_out() -> None:
    record = brightgrid_run()
    text = file_contents([run_spans(record, Tags("Brightgrid", "v1"), content=False)])
    check_tree(spans_of(read_back(text)), content=False)
    # Not in any attribute under any name: the question, the system prompt, the tool result.
    assert "7 developers" not in text
    assert "helpful assistant" not in text
    assert "per month per" not in text


def test_usage_reasoning_finish_reason_and_settings_of_a_request() -> None:
    record = brightgrid_run()
    ask = Exchange(
        1,
        {"model": "m", "messages": [], "temperature": 0.2, "max_tokens": 300},
        "Answer: 4",
        "thought",
        "stop",
        {"prompt_tokens": 10, "completion_tokens": 7, "reasoning_tokens": 5},
        0.01,
        0.02,
    )
    record.add([ask])
    plan = run_spans(record, Tags(), content=False)
    chat = next(c for c in plan.children if c.attributes.get("gen_ai.request.model") == "m")
    assert chat.attributes["gen_ai.usage.reasoning.output_tokens"] == 5
    assert chat.attributes["gen_ai.response.finish_reasons"] == ["stop"]
    assert chat.attributes["gen_ai.request.temperature"] == 0.2
    assert chat.attributes["gen_ai.request.max_tokens"] == 300


def test_a_comparison_shares_one_trace_and_tags_its_lanes() -> None:
    runs = [
        run_spans(brightgrid_run(), Tags("Brightgrid", "v1", lane), content=False)
        for lane in ("A", "B")
    ]
    plan = group_span("compare Brightgrid", "compare", Tags("Brightgrid"), runs)
    spans = spans_of(read_back(file_contents([plan])))
    assert len({s.trace_id for s in spans}) == 1
    agents = [s for s in spans if s.name == "invoke_agent Brightgrid"]
    root = next(s for s in spans if s.name == "compare Brightgrid")
    assert [s.parent_span_id for s in agents] == [root.span_id] * 2
    assert sorted(attrs(s)["react_sandbox.lane"] for s in agents) == ["A", "B"]


def test_an_endpoint_gets_the_spans_and_the_headers(otlp_receiver: OtlpReceiver) -> None:
    plans = [run_spans(brightgrid_run(), Tags("Brightgrid", "v1"), content=False)]
    target = OtlpTarget(otlp_receiver.endpoint, headers={"x-api-key": "secret-1"})
    sent = export(plans, target)
    assert sent.ok, sent.line
    check_tree(otlp_receiver.spans(), content=False)
    assert otlp_receiver.headers[0]["x-api-key"] == "secret-1"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_run_otlp_unreachable_is_one_line_and_the_run_succeeds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["run", "--otlp", f"127.0.0.1:{_closed_port()}"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "Final answer: $1,680 per year" in out
    assert err.count("\n") == 1
    assert err.startswith("OpenTelemetry: could not send spans to")
    assert "Traceback" not in err


def test_run_otlp_sends_to_the_receiver_with_content_only_when_asked(
    otlp_receiver: OtlpReceiver, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "--otlp", otlp_receiver.endpoint, "--otlp-header", "Authorization=Bearer k"]
    assert main(argv) == 0
    assert "6 spans sent" in capsys.readouterr().err
    first = otlp_receiver.spans()
    assert not {k for s in first for k in attrs(s) if k in CONTENT_KEYS}
    assert otlp_receiver.headers[0]["Authorization"] == "Bearer k"
    assert main([*argv, "--otlp-content"]) == 0
    second = otlp_receiver.spans()[len(first) :]
    assert {k for s in second for k in attrs(s)} >= {"input.value", "gen_ai.tool.call.result"}


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--otlp", "ftp://host"], "not an http(s) URL"),
        (["--otlp", "localhost:4318", "--otlp-header", "novalue"], "a header is NAME=VALUE"),
        (["--otlp-content"], "go with --otlp ENDPOINT"),
        (["--otlp-file", "/nonexistent-folder/x.json"], "--otlp-file"),
    ],
)
def test_bad_otlp_flags_are_one_line_and_run_nothing(
    flags: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", *flags]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert says in err


def test_eval_otlp_file_is_one_trace_with_a_span_per_cell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sandbox_app.core.scenarios.scenario_file import scenarios_dir

    scenario, out = scenarios_dir() / "test_set.json", tmp_path / "eval.json"
    argv = ["eval", str(scenario), "--out", str(tmp_path / "r.jsonl"), "--otlp-file", str(out)]
    assert main(argv) in (0, 4)
    spans = spans_of(read_back(out.read_text(encoding="utf-8")))
    agents = [attrs(s) for s in spans if s.name.startswith("invoke_agent")]
    cases = json.loads(scenario.read_text(encoding="utf-8"))["test_set"]
    assert sorted(a["react_sandbox.case"] for a in agents) == list(range(len(cases)))
    assert {a["react_sandbox.lane"] for a in agents} == {"scripted"}
    assert len({s.trace_id for s in spans}) == 1
    assert "written to" in capsys.readouterr().err


def test_live_export_while_four_runs_stream(otlp_receiver: OtlpReceiver) -> None:
    """Spans go as the runs go (four at once, as four lanes), each run a trace of its own."""
    problems: list[str] = []
    live = LiveExport(OtlpTarget(otlp_receiver.endpoint), problems.append)
    scenario = builtin("brightgrid")

    async def lane(name: str) -> None:
        run = live.run(RunSettings(backend="scripted"), Tags("Brightgrid", lane=name))
        engine = ReactEngine(scenario, scripted(scenario))

        def emit(event: Event) -> None:
            run.feed([event])

        await drive(engine, emit)

    async def lanes() -> None:
        await asyncio.gather(*(lane(name) for name in "ABCD"))

    asyncio.run(lanes())
    live.close()
    spans = otlp_receiver.spans()
    assert problems == []
    assert len(spans) == 24
    assert len({s.trace_id for s in spans}) == 4
    agents = [attrs(s) for s in spans if s.name.startswith("invoke_agent")]
    assert sorted(a["react_sandbox.lane"] for a in agents) == list("ABCD")
    assert all(a["react_sandbox.status"] == "answered" for a in agents)


def test_live_export_to_nowhere_says_one_line(tmp_path: Path) -> None:
    problems: list[str] = []
    target = OtlpTarget(f"http://127.0.0.1:{_closed_port()}/v1/traces", timeout_s=1)
    live = LiveExport(target, problems.append)
    scenario = builtin("brightgrid")
    run = live.run(RunSettings(backend="scripted"), Tags("Brightgrid"))
    events = run_events(scenario, scripted(scenario))
    for event in events:
        run.feed([event])
    live.close()
    assert len(problems) == 1
    assert problems[0].startswith("OpenTelemetry: could not send")


@pytest.mark.parametrize(
    ("typed", "url"),
    [
        ("localhost:4318", "http://localhost:4318/v1/traces"),
        ("http://127.0.0.1:6006/", "http://127.0.0.1:6006/v1/traces"),
        (
            "https://cloud.example/api/public/otel",
            "https://cloud.example/api/public/otel/v1/traces",
        ),
        ("https://h/custom/traces", "https://h/custom/traces"),
    ],
)
def test_an_endpoint_as_typed_becomes_its_traces_url(typed: str, url: str) -> None:
    assert endpoint_url(typed) == url


def test_a_test_sets_cells_are_one_trace_tagged_with_lane_case_repeat_and_verdict() -> None:
    record = brightgrid_run()
    runs = [
        (EvalResult("A", 0, 1, True, arm=Arm("v1")), record),
        (EvalResult("A", 1, 0, False), None),  # no record: left out
    ]
    plans = evaluation_spans(EvalResults("Brightgrid", ["q"], ["A"], runs), content=False)
    spans = spans_of(read_back(file_contents(plans)))
    agent = next(attrs(s) for s in spans if s.name.startswith("invoke_agent"))
    assert len(spans) == 7
    assert (agent["react_sandbox.lane"], agent["react_sandbox.case"]) == ("A", 0)
    assert (agent["react_sandbox.repeat"], agent["react_sandbox.passed"]) == (1, True)
    lanes = [LaneRecord("B", "m")]
    lanes[0].history.add(record)
    compare = comparison_spans(Comparison("Brightgrid", "q", lanes, [{}]), content=False)
    assert compare[0].name == "compare Brightgrid"
    assert compare[0].children[0].attributes["react_sandbox.lane"] == "B"
    assert comparison_spans(Comparison("T", "q", [LaneRecord("C", "m")], [{}]), content=False) == []


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ("redirect", "the endpoint answered a redirect (HTTP 302 to /login?next=/v1/traces)"),
        ("html", "the endpoint answered text/html, not OTLP"),
        ("reject", f"the endpoint rejected 6 of 6 spans: {REJECTED}"),
        ("reject json", f"the endpoint rejected 6 of 6 spans: {REJECTED}"),
    ],
)
def test_run_otlp_says_what_the_endpoint_really_answered(
    otlp_receiver: OtlpReceiver, capsys: pytest.CaptureFixture[str], answer: str, says: str
) -> None:
    otlp_receiver.answer = answer
    assert main(["run", "--otlp", otlp_receiver.endpoint]) == 0
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"OpenTelemetry: could not send spans to 127.0.0.1:{otlp_receiver.port} ({says}); "
        "nothing else changed"
    ]
