"""The workspace model, without Qt: edits, change notices, and what counts as modified."""

from __future__ import annotations

from sandbox_app.application.workspace import Change, Workspace
from sandbox_app.core.react_format.prompts import DEFAULT_TEMPLATE
from sandbox_app.core.results.compare import Price
from sandbox_app.core.scenarios.document import ScenarioDocument
from sandbox_app.core.scenarios.scenario import LaneConfig, Scenario
from tests.helpers import SendEmail


def watched() -> tuple[Workspace, list[Change]]:
    workspace = Workspace()
    changes: list[Change] = []
    workspace.subscribe(changes.append)
    return workspace, changes


def test_an_edit_notifies_only_the_fields_that_changed() -> None:
    workspace, changes = watched()
    panel = object()
    workspace.update(panel, question="How much?", max_steps=workspace.scenario.max_steps)
    assert changes == [Change(frozenset({"question"}), panel)]
    workspace.update(panel, question="How much?")  # the same value again: nothing to redraw
    assert len(changes) == 1
    assert workspace.modified


def test_a_loaded_scenario_in_its_shown_form_is_not_modified() -> None:
    workspace, changes = watched()
    raw = Scenario(
        question="  padded  ",
        system_prompt=DEFAULT_TEMPLATE,
        documents=("a", "  ", " b "),
        lanes=(LaneConfig("ollama", "", "qwen"),),
    )
    workspace.show(ScenarioDocument(raw))
    assert changes[-1].loaded
    scenario = workspace.scenario
    assert (scenario.question, scenario.system_prompt, scenario.documents) == (
        "padded",
        None,
        ("a", "b"),
    )
    assert [lane.backend for lane in scenario.lanes] == ["ollama", "scripted"]  # two at least
    assert not workspace.modified


def test_kept_edits_show_as_modified_against_their_baseline() -> None:
    workspace = Workspace()
    document = ScenarioDocument(Scenario(question="saved"))
    workspace.show(document, Scenario(question="edited"))
    assert workspace.scenario.question == "edited"
    assert workspace.modified


def test_tools_follow_the_scenario_and_include_extra_tools() -> None:
    workspace = Workspace([SendEmail()])
    workspace.update(None, enabled_tools=("calculator",))
    assert [tool.name for tool in workspace.tools()] == ["calculator", "send_email"]


def test_prices_are_a_change_of_their_own() -> None:
    workspace, changes = watched()
    workspace.set_prices({"m": Price(1.0, 2.0)})
    assert changes[-1].touches("prices")
    assert not changes[-1].touches("question")
    assert workspace.prices == {"m": Price(1.0, 2.0)}
