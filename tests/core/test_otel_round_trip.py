"""A run exported as OpenTelemetry (core/otel plans the spans, application/otel_export writes
them as ``--otlp-file`` and File → Export as OpenTelemetry do) and opened again
(``open-trace``: core/otel/otel_import.py) is the same run, for every backend kind, each
through its real SDK to its local test server, in text ReAct and in native tool calling:
the same system prompt, steps, tool calls with their ids and arguments, observations,
answer and figures.

The imported run says what its trace lacks in notices of its own (step 0) and names its
backend "trace"; everything a person reads in the trace pane is compared, in order."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.application.otel_export import file_contents
from sandbox_app.core.otel.otel_attributes import Tags, run_spans
from sandbox_app.core.otel.otel_import import open_trace
from sandbox_app.core.otel.otel_spans import kind, read_spans
from sandbox_app.core.results.trace_text import lines
from sandbox_app.core.running import events as ev
from sandbox_app.core.running.backend import Backend
from sandbox_app.core.running.records import RunRecord, RunSettings
from sandbox_app.core.scenarios.lane_settings import LaneSettings
from sandbox_app.core.scenarios.scenario import Scenario
from tests.core import test_anthropic_kind as anthropic
from tests.core import test_gemini as gemini
from tests.core import test_native_tools as openai_native
from tests.core import test_ollama_native as ollama
from tests.core import test_responses_kind as responses
from tests.helpers import builtin, replies_of, run_events, scripted, server_backend
from tests.model_server import ModelScript
from tests.model_server.anthropic import fake_anthropic
from tests.model_server.gemini import gemini_server
from tests.model_server.ollama import fake_ollama
from tests.model_server.responses import responses_server

__all__ = ["fake_anthropic", "fake_ollama", "gemini_server", "responses_server"]

# A kind's test server made ready for a run: (backend id, model, backend, lane settings).
Served = tuple[str, str, Backend, dict[str, Any]]


def _openai(request: pytest.FixtureRequest, native: bool) -> Served:
    server = request.getfixturevalue("fake_server")
    script = ModelScript(
        replies=replies_of("brightgrid"), native_replies=openai_native.NATIVE_REPLIES
    )
    server.set_model("qwen3:8b", script)
    return "custom", "qwen3:8b", server_backend(server.base_url), {}


def _anthropic(request: pytest.FixtureRequest, native: bool) -> Served:
    server = request.getfixturevalue("fake_anthropic")
    turns = anthropic.NATIVE_TURNS if native else anthropic.text_turns()
    server.set_model("claude-test", ModelScript(replies=turns))
    return "anthropic", "claude-test", anthropic.backend_for(server), {"thinking_budget": 2048}


def _responses(request: pytest.FixtureRequest, native: bool) -> Served:
    server = request.getfixturevalue("responses_server")
    server.set_model("m", responses.NATIVE_REPLIES if native else responses.TEXT_REPLIES)
    return "responses", "m", responses.backend_for(server), {"reasoning_effort": "medium"}


def _gemini(request: pytest.FixtureRequest, native: bool) -> Served:
    server = request.getfixturevalue("gemini_server")
    server.set_model("gemini-3-pro", gemini.NATIVE_REPLIES if native else gemini.text_replies())
    return "gemini", "gemini-3-pro", gemini.backend(server), {}


def _ollama(request: pytest.FixtureRequest, native: bool) -> Served:
    server = request.getfixturevalue("fake_ollama")
    replies = ollama.native_replies() if native else ollama.text_replies()
    server.set_model("qwen3:8b", replies)
    return "ollama-native", "qwen3:8b", ollama.backend(server), {}


KINDS: dict[str, Callable[[pytest.FixtureRequest, bool], Served]] = {
    "openai-compatible": _openai,
    "anthropic": _anthropic,
    "responses": _responses,
    "gemini": _gemini,
    "ollama": _ollama,
}


def exported(record: RunRecord, tmp_path: Path) -> Path:
    path = tmp_path / "run.otlp.json"
    path.write_text(file_contents([run_spans(record, Tags("Brightgrid", "v1"), content=True)]))
    return path


def exported_and_opened(record: RunRecord, tmp_path: Path) -> list[ev.Event]:
    return [event for _, event in open_trace(exported(record, tmp_path)).lane.events]


def read(events: list[ev.Event]) -> list[tuple[str, str]]:
    """What the trace pane shows, line by line with its role: the steps, thoughts, actions,
    observations and answer (not the notices, the timings or the run's header)."""
    kept = [
        e for e in events if not isinstance(e, ev.Notice | ev.ContextMeasured | ev.ContextWontFit)
    ]
    shown = [(role.name, text.strip()) for text, role in lines(kept) if text.strip()]
    return [(role, text) for role, text in shown if role != "SUMMARY"]  # timings differ


def finished(events: list[ev.Event]) -> ev.RunFinished:
    return next(e for e in events if isinstance(e, ev.RunFinished))


def calls_made(events: list[ev.Event]) -> list[list[tuple[str, str, str]]]:
    """Each step's tool calls as its last request's reply made them: id, name, arguments."""
    last: dict[int, ev.Exchange] = {e.step: e for e in events if isinstance(e, ev.Exchange)}
    return [[(c.id, c.name, c.arguments) for c in last[k].calls] for k in sorted(last)]


def observations(events: list[ev.Event]) -> list[tuple[str, str]]:
    return [(e.tool, e.text) for e in events if isinstance(e, ev.Observation)]


def system_prompt(events: list[ev.Event]) -> str:
    return next(e.system_prompt for e in events if isinstance(e, ev.RunStarted))


@pytest.mark.parametrize("tool_calling", ["react", "native"])
@pytest.mark.parametrize("name", list(KINDS))
def test_a_run_of_every_kind_exported_and_opened_again_is_the_same_run(
    request: pytest.FixtureRequest, tmp_path: Path, name: str, tool_calling: str
) -> None:
    backend_id, model, backend, settings = KINDS[name](request, tool_calling == "native")
    scenario: Scenario = builtin("brightgrid")
    lane = scenario.model.replace(tool_calling=tool_calling, **settings)
    scenario = scenario.with_changes(model=lane)
    record = RunRecord(RunSettings(backend=backend_id, model=model, prompt_version="v1"))
    record.add(run_events(scenario, backend, model=model))
    original = record.events
    before = finished(original)
    assert (before.status, before.answer) == ("answered", "$1,680 per year"), before.reason
    path = exported(record, tmp_path)
    trace = open_trace(path)
    opened = [event for _, event in trace.lane.events]

    assert trace.recording.scenario.system_prompt == system_prompt(original)
    assert trace.recording.scenario.question == scenario.question
    assert read(opened) == read(original)
    assert calls_made(opened) == calls_made(original)
    assert observations(opened) == observations(original)
    after = finished(opened)
    assert (after.status, after.answer) == (before.status, before.answer)
    m0, m1 = before.metrics, after.metrics
    assert len(m1.steps) == len(m0.steps) == 3
    assert [(s.tokens_in, s.tokens_out) for s in m1.steps] == [
        (s.tokens_in, s.tokens_out) for s in m0.steps
    ]
    assert (m1.tool_calls, m1.tokens_in, m1.tokens_out) == (
        m0.tool_calls,
        m0.tokens_in,
        m0.tokens_out,
    )
    # Each span as a collector shows it: every model call has its input and instructions,
    # and a tool span names the call it ran by the id the model gave it.
    spans = read_spans(path)
    for span in (s for s in spans if kind(s) == "llm"):
        said = json.loads(span.attributes["gen_ai.input.messages"])
        assert [m["role"] for m in said[:1]] == ["user"], said
        (instructions,) = json.loads(span.attributes["gen_ai.system_instructions"])
        assert instructions == {"type": "text", "content": system_prompt(original)}
    made = [call_id for step in calls_made(original) for call_id, _, _ in step]
    tools = [s.attributes["gen_ai.tool.call.id"] for s in spans if kind(s) == "tool"]
    assert tools == (made if tool_calling == "native" else ["call_1", "call_2"])


def test_the_offline_models_run_comes_back_the_same(tmp_path: Path) -> None:
    scenario = builtin("brightgrid").with_changes(model=LaneSettings())
    record = RunRecord(RunSettings(backend="scripted", model="scripted", prompt_version="v1"))
    record.add(run_events(scenario, scripted(scenario)))
    opened = exported_and_opened(record, tmp_path)
    assert read(opened) == read(record.events)
    assert finished(opened).answer == finished(record.events).answer == "$1,680 per year"
