"""A run as OpenTelemetry spans, planned without OpenTelemetry: names, times and attributes.

One plan per run: an ``invoke_agent {scenario}`` span, a ``chat {model}`` span per model
request (each :class:`Exchange`), an ``execute_tool {name}`` span per tool call. Attributes
follow the OpenTelemetry GenAI semantic conventions (``gen_ai.*``, their current names:
``gen_ai.provider.name``, ``gen_ai.usage.reasoning.output_tokens``) and OpenInference, which
Arize Phoenix reads (``openinference.span.kind``, ``llm.*``, ``input.value``…).

Message content (the system prompt, messages, thinking, tool inputs and results, the question
and answer) may hold private data: it is added only with ``content=True``. Everything else is
what the run's settings and metrics already say. ``application/otel_export.py`` turns plans
into real spans; this module stays free of the SDK so it is cheap to test and to import.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sandbox_app.core.otel.otel_content import (
    Attributes,
    agent_content,
    chat_content,
    tool_content,
)
from sandbox_app.core.running.events import (
    ActionParsed,
    Exchange,
    Observation,
    ReasoningDelta,
    StepFinished,
)
from sandbox_app.core.running.metrics import StepMetrics
from sandbox_app.core.running.records import RunRecord

# gen_ai.provider.name's well-known values, by backend id; any other id is sent as it is.
PROVIDERS = {
    "openai": "openai",
    "responses": "openai",
    "anthropic": "anthropic",
    "gemini": "gcp.gemini",
    "groq": "groq",
    "mistral": "mistral_ai",
    "xai": "x_ai",
    "deepseek": "deepseek",
    "ollama-native": "ollama",
}
PREFIX = "react_sandbox."  # this app's own attributes: what links lanes and cells


@dataclass(frozen=True)
class Tags:
    """What links a run to its comparison or evaluation: the same keys on every span."""

    scenario: str = ""
    prompt_version: str = ""
    lane: str = ""
    case: int | None = None
    repeat: int | None = None

    def attributes(self) -> Attributes:
        found: dict[str, Any] = {
            "scenario": self.scenario,
            "prompt_version": self.prompt_version,
            "lane": self.lane,
            "case": self.case,
            "repeat": self.repeat,
        }
        return {PREFIX + k: v for k, v in found.items() if v not in ("", None)}


@dataclass(frozen=True)
class SpanPlan:
    """One span to make: seconds from the trace's start, its attributes, its children."""

    name: str
    start_s: float
    end_s: float
    attributes: Attributes
    children: tuple[SpanPlan, ...] = ()
    error: str = ""  # the span's status description when it failed ("" when it did not)

    def walk(self) -> list[SpanPlan]:
        """This span and all below it, parents first."""
        return [self, *(span for child in self.children for span in child.walk())]


def provider(backend: str) -> str:
    return PROVIDERS.get(backend, backend or "react-sandbox")


@dataclass
class _Step:
    number: int
    exchanges: list[Exchange] = field(default_factory=list)
    actions: list[ActionParsed] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    metrics: StepMetrics | None = None


def _steps(record: RunRecord) -> list[_Step]:
    steps: dict[int, _Step] = {}
    for event in record.events:
        number = getattr(event, "step", None)
        if not isinstance(number, int):
            continue
        step = steps.setdefault(number, _Step(number))
        if isinstance(event, Exchange):
            step.exchanges.append(event)
        elif isinstance(event, ActionParsed):
            step.actions.append(event)
        elif isinstance(event, Observation):
            step.observations.append(event)
        elif isinstance(event, ReasoningDelta):
            step.thinking.append(event.text)
        elif isinstance(event, StepFinished):
            step.metrics = event.metrics
    return [steps[n] for n in sorted(steps)]


def run_spans(record: RunRecord, tags: Tags, *, content: bool, start_s: float = 0.0) -> SpanPlan:
    """The run's agent span with its chat and tool spans, laid out by the run's own timings:
    each step after the last for its wall time, its requests first, then its tools."""
    settings = record.settings
    model = settings.model or settings.backend or "model"
    linked = tags.attributes()
    children: list[SpanPlan] = []
    at = start_s
    calls = 0
    for step in _steps(record):
        wall = step.metrics.wall_s if step.metrics else 0.0
        tool_s = min(step.metrics.tool_s if step.metrics else 0.0, wall)
        asks = step.exchanges or []
        each = (wall - tool_s) / len(asks) if asks else 0.0
        cursor = at
        for ask in asks:
            took = ask.last_token_s if ask.last_token_s is not None else each
            took = min(took, each) if each else took
            attrs = chat_attributes(ask, settings.backend, model, _usage(ask, step, len(asks)))
            attrs.update(linked)
            if content:
                attrs.update(chat_content(ask, "".join(step.thinking) if ask is asks[-1] else ""))
            children.append(SpanPlan(f"chat {model}", cursor, cursor + took, attrs))
            cursor += each
        tool_each = tool_s / len(step.actions) if step.actions else 0.0
        # Native tool calling's ids, as the provider gave them (the app's own where it gave
        # none) in the step's last reply, whose calls ran; text ReAct's calls have none:
        # call_1, call_2… over the run.
        call_ids = [c.id for c in asks[-1].calls] if asks else []
        for i, action in enumerate(step.actions):
            seen = step.observations[i] if i < len(step.observations) else None
            calls += 1
            call_id = call_ids[i] if i < len(call_ids) and call_ids[i] else f"call_{calls}"
            attrs = tool_attributes(action, call_id)
            attrs.update(linked)
            if content:
                attrs.update(tool_content(action, seen))
            error = seen.text if seen is not None and seen.error else ""
            name = f"execute_tool {action.tool}"
            children.append(SpanPlan(name, cursor, cursor + tool_each, attrs, error=error))
            cursor += tool_each
        at += wall
    finished = record.finished
    end = start_s + (finished.metrics.wall_s if finished else at - start_s)
    attrs = agent_attributes(record, model)
    attrs.update(linked)
    if content:
        attrs.update(agent_content(record))
    failed = finished.reason if finished is not None and finished.status == "failed" else ""
    name = f"invoke_agent {tags.scenario or 'react-sandbox'}"
    return SpanPlan(name, start_s, max(end, at), attrs, tuple(children), failed)


def group_span(name: str, operation: str, tags: Tags, runs: Sequence[SpanPlan]) -> SpanPlan:
    """One parent for a comparison's lanes or an evaluation's cells: one trace for them all."""
    attrs: Attributes = {
        "gen_ai.operation.name": operation,
        "openinference.span.kind": "CHAIN",
        **tags.attributes(),
    }
    start = min((run.start_s for run in runs), default=0.0)
    end = max((run.end_s for run in runs), default=0.0)
    return SpanPlan(name, start, end, attrs, tuple(runs))


def _usage(ask: Exchange, step: _Step, asks: int) -> tuple[int | None, int | None, int | None]:
    """Input, output and reasoning tokens: the server's for this request, else the step's
    (whose counts are this request's when the step made only one)."""
    usage = ask.usage or {}
    tokens_in, tokens_out = usage.get("prompt_tokens"), usage.get("completion_tokens")
    reasoning = usage.get("reasoning_tokens")
    if step.metrics is not None and asks == 1:
        tokens_in = tokens_in if isinstance(tokens_in, int) else step.metrics.tokens_in
        tokens_out = tokens_out if isinstance(tokens_out, int) else step.metrics.tokens_out
        if not isinstance(reasoning, int) and step.metrics.reasoning_tokens:
            reasoning = step.metrics.reasoning_tokens
    return (
        tokens_in if isinstance(tokens_in, int) else None,
        tokens_out if isinstance(tokens_out, int) else None,
        reasoning if isinstance(reasoning, int) else None,
    )


def chat_attributes(
    ask: Exchange, backend: str, model: str, usage: tuple[int | None, int | None, int | None]
) -> Attributes:
    request = ask.request
    asked = str(request.get("model") or model)
    attrs: Attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider(backend),
        "gen_ai.request.model": asked,
        "gen_ai.response.model": model if model != "model" else asked,
        "openinference.span.kind": "LLM",
        "llm.model_name": asked,
        "llm.provider": provider(backend),
    }
    tokens_in, tokens_out, reasoning = usage
    if tokens_in is not None:
        attrs["gen_ai.usage.input_tokens"] = attrs["llm.token_count.prompt"] = tokens_in
    if tokens_out is not None:
        attrs["gen_ai.usage.output_tokens"] = attrs["llm.token_count.completion"] = tokens_out
    if tokens_in is not None and tokens_out is not None:
        attrs["llm.token_count.total"] = tokens_in + tokens_out
    if reasoning is not None:
        attrs["gen_ai.usage.reasoning.output_tokens"] = reasoning
        attrs["llm.token_count.completion_details.reasoning"] = reasoning
    cached = (("cache_read_tokens", "cache_read"), ("cache_write_tokens", "cache_creation"))
    for name, key in cached:
        value = (ask.usage or {}).get(name)
        if isinstance(value, int):
            attrs[f"gen_ai.usage.{key}.input_tokens"] = value
    if ask.finish_reason:
        attrs["gen_ai.response.finish_reasons"] = [ask.finish_reason]
    parameters: dict[str, Any] = {}
    for key, name in (
        ("temperature", "temperature"),
        ("top_p", "top_p"),
        ("seed", "seed"),
        ("max_tokens", "max_tokens"),
        ("max_completion_tokens", "max_tokens"),
    ):
        value = request.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            attrs[f"gen_ai.request.{name}"] = value
            parameters[key] = value
    if parameters:
        attrs["llm.invocation_parameters"] = json.dumps(parameters)
    return attrs


def tool_attributes(action: ActionParsed, call_id: str) -> Attributes:
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": action.tool,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.type": "function",
        "openinference.span.kind": "TOOL",
        "tool.name": action.tool,
    }


def agent_attributes(record: RunRecord, model: str) -> Attributes:
    settings, finished = record.settings, record.finished
    attrs: Attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": provider(settings.backend),
        "gen_ai.request.model": model,
        "openinference.span.kind": "AGENT",
        PREFIX + "backend": settings.backend,
        PREFIX + "dialect": settings.dialect,
    }
    if settings.base_url:
        attrs["server.address"] = settings.base_url
    if finished is not None:
        metrics = finished.metrics
        attrs.update(
            {
                "gen_ai.usage.input_tokens": metrics.tokens_in,
                "gen_ai.usage.output_tokens": metrics.tokens_out,
                "llm.token_count.prompt": metrics.tokens_in,
                "llm.token_count.completion": metrics.tokens_out,
                "llm.token_count.total": metrics.tokens_in + metrics.tokens_out,
                PREFIX + "status": finished.status,
                PREFIX + "steps": len(metrics.steps),
                PREFIX + "tool_calls": metrics.tool_calls,
            }
        )
        if metrics.reasoning_tokens:
            attrs["gen_ai.usage.reasoning.output_tokens"] = metrics.reasoning_tokens
    return attrs
