"""Traces made by real instrumentation, for the import tests: a plain ``openai``-SDK agent
loop run against the test server under OpenInference's or OpenTelemetry's own OpenAI
instrumentation, its spans caught in memory and written as OTLP files (JSON as an OTLP/HTTP
collector takes it, and protobuf), the way a team's traces reach a file.

Two loops, as agents are written: ``react`` (text ReAct: the tools described in the system
prompt, ``Action: tool[input]`` parsed from the reply, the result sent back as an
``Observation:`` user message) and ``native`` (the API's ``tools``, streamed, each result a
``tool`` message). Each also opens an agent span and a tool span per call, as agent
frameworks do, with the conventions' attributes.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import openai
from google.protobuf import json_format  # type: ignore[import-untyped]
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.model_server import ModelScript, ModelServer

Loop = Literal["react", "native"]
Instrumentation = Literal["openinference", "genai"]
MODEL = "trace-model"
QUESTION = "How much does Brightgrid Pro cost per year for a team of 7 developers?"
SYSTEM = (
    "Answer with the tools.\n\nTools:\n- lookup[query]: Looks a fact up in the team's notes.\n"
    "- calculator[expression]: Exact arithmetic.\n\nWrite Thought: then Action: tool[input], "
    "or Thought: then Answer: the answer."
)
NATIVE_SYSTEM = "Answer with the tools. When you know the answer, reply with it alone."
REACT_REPLIES = [
    "Thought: I need the price.\nAction: lookup[Brightgrid Pro price]",
    "Thought: 20 a month for 7 developers.\nAction: calculator[20 * 12 * 7]",
    "Thought: The calculator gave the total.\nAnswer: $1,680 per year",
]
NATIVE_REPLIES = [
    'I need the price.\n<tool_call>{"name": "lookup", "arguments": {"query": "Brightgrid Pro '
    'price"}}</tool_call>',
    '20 a month for 7 developers.\n<tool_call>{"name": "calculator", "arguments": '
    '{"expression": "20 * 12 * 7"}}</tool_call>',
    "$1,680 per year",
]
RESULTS = {"lookup": "Brightgrid Pro costs $20 per month per developer.", "calculator": "1680"}
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Looks a fact up in the team's notes.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "calculator",
            "description": "Exact arithmetic.",
            "parameters": {
                "type": "object",
                "properties": {"expression": {"type": "string"}},
                "required": ["expression"],
            },
        },
    },
]
_ACTION = re.compile(r"Action:\s*(\w+)\[(.*)\]")


def serve(server: ModelServer) -> None:
    """The test server's model for both loops (and for a fork's live steps)."""
    server.set_model(MODEL, ModelScript(replies=REACT_REPLIES, native_replies=NATIVE_REPLIES))


@contextmanager
def _instrumented(kind: Instrumentation) -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    if kind == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor

        instrumentor: Any = OpenAIInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
    else:
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor as GenAI

        # The latest GenAI conventions, content on the span (gen_ai.input.messages…):
        # without both, this instrumentation records no message content on spans.
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "span_only"
        instrumentor = GenAI()  # type: ignore[no-untyped-call]
        instrumentor.instrument(tracer_provider=provider)
    try:
        yield provider, exporter
    finally:
        instrumentor.uninstrument()
        os.environ.pop("OTEL_SEMCONV_STABILITY_OPT_IN", None)
        os.environ.pop("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", None)


def run_agent(
    server: ModelServer, loop: Loop, kind: Instrumentation, *, wrapped: bool = True
) -> list[ReadableSpan]:
    """Run one loop against the test server under ``kind``; the spans it made. ``wrapped``:
    inside an agent span, with a span per tool call, as agent frameworks do; unwrapped, a
    plain loop whose only spans are the instrumentation's, each model call a trace of its
    own."""
    serve(server)
    with _instrumented(kind) as (provider, exporter):
        tracer = provider.get_tracer("tests.otel_traces") if wrapped else None
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        run = _react if loop == "react" else _native
        if tracer is None:
            run(client, None)
        else:
            with tracer.start_as_current_span("invoke_agent brightgrid") as agent:
                agent.set_attribute("gen_ai.operation.name", "invoke_agent")
                agent.set_attribute("openinference.span.kind", "AGENT")
                agent.set_attribute("input.value", QUESTION)
                agent.set_attribute("output.value", run(client, tracer))
        client.close()
        provider.force_flush()
        return list(exporter.get_finished_spans())


def _tool(tracer: Any, name: str, arguments: str) -> str:
    if tracer is None:
        return RESULTS[name]
    with tracer.start_as_current_span(f"execute_tool {name}") as span:
        result = RESULTS[name]
        span.set_attribute("gen_ai.operation.name", "execute_tool")
        span.set_attribute("gen_ai.tool.name", name)
        span.set_attribute("openinference.span.kind", "TOOL")
        span.set_attribute("tool.name", name)
        span.set_attribute("input.value", arguments)
        span.set_attribute("output.value", result)
        return result


def _react(client: openai.OpenAI, tracer: Any) -> str:
    messages: list[Any] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": QUESTION},
    ]
    for _ in range(5):
        reply = client.chat.completions.create(
            model=MODEL, messages=messages, stop=["\nObservation:"]
        )
        text = reply.choices[0].message.content or ""
        messages.append({"role": "assistant", "content": text})
        if "Answer:" in text:
            return text.split("Answer:", 1)[1].strip()
        found = _ACTION.search(text)
        assert found is not None, text
        result = _tool(tracer, found.group(1), found.group(2))
        messages.append({"role": "user", "content": f"Observation: {result}"})
    raise AssertionError("no answer")


def _native(client: openai.OpenAI, tracer: Any) -> str:
    messages: list[Any] = [
        {"role": "system", "content": NATIVE_SYSTEM},
        {"role": "user", "content": QUESTION},
    ]
    for _ in range(5):
        stream = client.chat.completions.create(  # type: ignore[call-overload]
            model=MODEL,
            messages=messages,
            tools=TOOLS,
            stream=True,
            stream_options={"include_usage": True},
        )
        text, calls = "", dict[int, dict[str, str]]()
        for chunk in stream:
            for choice in chunk.choices:
                text += choice.delta.content or ""
                for piece in choice.delta.tool_calls or []:
                    call = calls.setdefault(piece.index, {"id": "", "name": "", "arguments": ""})
                    call["id"] = piece.id or call["id"]
                    if piece.function is not None:
                        call["name"] = piece.function.name or call["name"]
                        call["arguments"] += piece.function.arguments or ""
        if not calls:
            return text.strip()
        messages.append(
            {
                "role": "assistant",
                "content": text or None,
                "tool_calls": [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": c["arguments"]},
                    }
                    for c in calls.values()
                ],
            }
        )
        for c in calls.values():
            result = _tool(tracer, c["name"], c["arguments"])
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": result})
    raise AssertionError("no answer")


def otlp_request(spans: list[ReadableSpan]) -> Any:
    """The spans as one ExportTraceServiceRequest, as the OTLP exporter sends them."""
    return encode_spans(spans)


def write_json(spans: list[ReadableSpan], path: Path) -> Path:
    """OTLP/HTTP JSON: protobuf's JSON mapping with the ids as hex, as the OTLP spec says
    (protobuf's own mapping writes bytes as base64, which collectors also accept)."""
    data = json_format.MessageToDict(otlp_request(spans))
    for resource in data.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = _hex(span[key])
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_protobuf(spans: list[ReadableSpan], path: Path) -> Path:
    path.write_bytes(otlp_request(spans).SerializeToString())
    return path


def _hex(b64: str) -> str:
    import base64

    return base64.b64decode(b64).hex()


def write_per_call_sample(path: Path) -> Path:
    """The native loop under OpenInference's OpenAI instrumentation with nothing around it,
    each model call a trace of its own, as OTLP JSON: how tests/data/openinference_per_call.json
    was made (its .md says so)."""
    with ModelServer() as server:
        spans = run_agent(server, "native", "openinference", wrapped=False)
    return write_json(spans, path)
