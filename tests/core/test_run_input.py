"""A run is made from the scenario's run input alone (core/scenarios/run_input.py): the
engine and the backend get a ``RunInput`` that holds none of the document's lanes, test set,
judge or history, and the version the run is told is worked out once, by its spec."""

from __future__ import annotations

from dataclasses import fields

from sandbox_app.application.backend_choice import BackendChoice
from sandbox_app.application.run_builder import build_run
from sandbox_app.backends.registry import config_for
from sandbox_app.core.scenarios.run_input import RunInput
from sandbox_app.core.scenarios.scenario import LaneConfig, Scenario
from tests.helpers import builtin


def test_the_run_input_is_the_scenario_without_its_document() -> None:
    scenario = builtin("brightgrid").with_changes(lanes=(LaneConfig(), LaneConfig("ollama")))
    run = scenario.run_input
    assert type(run) is RunInput
    assert {f.name: getattr(run, f.name) for f in fields(RunInput)} == {
        f.name: getattr(scenario, f.name) for f in fields(RunInput)
    }
    document = {f.name for f in fields(Scenario)} - {f.name for f in fields(RunInput)}
    assert document == {
        "title",
        "description",
        "expected",
        "lanes",
        "test_set",
        "checks",
        "prompt_history",
        "rubric",
        "judge",
    }
    assert not any(hasattr(run, name) for name in document)


def test_the_engine_is_given_the_run_input_and_the_record_the_document() -> None:
    scenario = builtin("brightgrid").with_changes(lanes=(LaneConfig(), LaneConfig("ollama")))
    spec = BackendChoice(config_for("scripted")).spec(scenario)
    engine, _backend = build_run(spec)
    assert engine.scenario is spec.run
    assert not hasattr(engine.scenario, "lanes")
    assert spec.scenario.lanes == scenario.lanes  # what the run's record keeps
    assert spec.record_settings().prompt_version == spec.told.id == spec.prompt_version.id
