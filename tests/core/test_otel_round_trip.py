"""Issue 28's round trip: a run exported as OpenTelemetry (application/otel_export.py) and
opened again (core/otel/otel_import.py) has the same steps, roles, answer and metrics.

The imported run says what its trace lacks in notices of its own (step 0) and names its
backend "trace"; everything a person reads in the trace pane is compared, in order."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox_app.application.otel_export import file_contents
from sandbox_app.core.otel.otel_attributes import Tags, run_spans
from sandbox_app.core.otel.otel_import import open_trace
from sandbox_app.core.results.trace_text import lines
from sandbox_app.core.running import events as ev
from sandbox_app.core.running.records import RunRecord, RunSettings
from sandbox_app.core.scenarios.lane_settings import LaneSettings
from tests.fakeserver import FakeOpenAIServer, ModelScript
from tests.helpers import builtin, replies_of, run_events, scripted, server_backend


def exported_and_opened(record: RunRecord, tmp_path: Path) -> list[ev.Event]:
    path = tmp_path / "run.otlp.json"
    path.write_text(file_contents([run_spans(record, Tags("Brightgrid", "v1"), content=True)]))
    return [event for _, event in open_trace(path).lane.events]


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


@pytest.mark.parametrize("tool_calling", ["react", "native"])
def test_a_run_exported_and_opened_again_is_the_same_run(
    tmp_path: Path, fake_server: FakeOpenAIServer, tool_calling: str
) -> None:
    from tests.core.test_native_tools import NATIVE_REPLIES

    scenario = builtin("brightgrid")
    scenario = scenario.with_changes(model=scenario.model.replace(tool_calling=tool_calling))
    script = ModelScript(replies=replies_of("brightgrid"), native_replies=NATIVE_REPLIES)
    fake_server.set_model("qwen3:8b", script)
    record = RunRecord(RunSettings(backend="custom", model="qwen3:8b", prompt_version="v1"))
    record.add(run_events(scenario, server_backend(fake_server.base_url), model="qwen3:8b"))
    original = record.events
    opened = exported_and_opened(record, tmp_path)

    assert read(opened) == read(original)
    before, after = finished(original), finished(opened)
    assert (
        (after.status, after.answer) == (before.status, before.answer) == ("answered", after.answer)
    )
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


def test_the_offline_models_run_comes_back_the_same(tmp_path: Path) -> None:
    scenario = builtin("brightgrid").with_changes(model=LaneSettings())
    record = RunRecord(RunSettings(backend="scripted", model="scripted", prompt_version="v1"))
    record.add(run_events(scenario, scripted(scenario)))
    opened = exported_and_opened(record, tmp_path)
    assert read(opened) == read(record.events)
    assert finished(opened).answer == finished(record.events).answer == "$1,680 per year"
