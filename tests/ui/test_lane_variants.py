"""Prompt variants in compare lanes: a lane pinned to a version of the scenario's history
beside one on the editor's prompt, both against the test server; Matrix… (versions × models);
a pinned version the history lacks."""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox
from pytestqt.qtbot import QtBot

from sandbox_app.core.react_format.prompts import render_prompt
from sandbox_app.core.scenarios.prompt_versions import PromptVersion, record, version_of
from sandbox_app.core.scenarios.scenario import LaneConfig, LaneSettings, Scenario
from sandbox_app.ui.window.main_window import MainWindow
from tests.fakeserver import FakeOpenAIServer, ModelScript
from tests.helpers import replies_of

NOW = datetime(2025, 1, 2, tzinfo=UTC)
TEMPLATE_A = "You are prompt A, terse and careful.\n{tools}\n{format}"
TEMPLATE_B = "You are prompt B, chatty.\n{tools}\n{format}"


def _versions(window: MainWindow, *templates: str) -> list[PromptVersion]:
    """The window's scenario given a history of one version per template (the editor left
    on the last template)."""
    scenario = window.workspace.model.scenario
    versions, history = [], scenario.prompt_history
    for template in templates:
        told = scenario.with_changes(system_prompt=template)
        versions.append(version_of(told, told.tools()))
        history = record(history, versions[-1], NOW)
    window.workspace.update(system_prompt=templates[-1], prompt_history=history)
    return versions


def _system_prompt(scenario: Scenario) -> str:
    assert scenario.system_prompt is not None
    return render_prompt(scenario.system_prompt, scenario.tools(), scenario.prompt_dialect)


def test_a_pinned_lane_and_an_editor_lane_send_their_own_system_prompts(
    qtbot: QtBot, window: MainWindow, fake_server: FakeOpenAIServer
) -> None:
    fake_server.set_model("m", ModelScript(replies=replies_of("brightgrid")))
    version_a, version_b = _versions(window, TEMPLATE_A, TEMPLATE_B)
    compare, url = window.compare, fake_server.base_url
    compare.set_lanes(
        (
            LaneConfig("custom", url, "m", settings=LaneSettings(prompt=version_a.id)),
            LaneConfig("custom", url, "m"),  # the editor's: version B
        )
    )
    window.tabs.setCurrentWidget(compare)
    pinned, editor = compare.lanes
    box = pinned.backend_panel.settings_form.widgets["prompt"]
    assert isinstance(box, QComboBox)
    assert box.currentData() == version_a.id  # the history's version, offered and chosen
    assert "prompt " + version_a.short in pinned.model_label.text()
    qtbot.mouseClick(compare.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: compare.running, timeout=2000)
    qtbot.waitUntil(lambda: not compare.running, timeout=20000)

    scenario = window.workspace.model.scenario
    expected = {
        _system_prompt(scenario.with_changes(system_prompt=TEMPLATE_A)),
        _system_prompt(scenario.with_changes(system_prompt=TEMPLATE_B)),
    }
    sent = [r["messages"][0]["content"] for r in fake_server.requests]
    assert set(sent) == expected  # each lane's steps carry its own prompt, and only those
    assert sum("prompt A" in s for s in sent) == sum("prompt B" in s for s in sent) == 3
    rows = compare.rows()
    assert [r["Status"] for r in rows] == ["answered", "answered"], rows
    assert [r["Prompt"] for r in rows] == [version_a.short, version_b.short]
    assert pinned.prompt_label.text() == f"ran prompt {version_a.short}"
    assert editor.prompt_label.text() == f"ran prompt {version_b.short}"
    # The editor still holds B: a pinned lane changes no one's prompt.
    assert window.workspace.model.scenario.system_prompt == TEMPLATE_B


def test_matrix_of_two_versions_by_two_models_makes_four_lanes(
    qtbot: QtBot, window: MainWindow
) -> None:
    version_a, version_b = _versions(window, TEMPLATE_A, TEMPLATE_B)
    compare = window.compare
    compare.set_lanes((LaneConfig("custom", "http://h/v1", "m1"), LaneConfig("ollama", "", "m2")))
    dialog = compare.open_matrix()
    versions = dialog.versions
    for row in range(versions.count()):  # the editor unchecked, both versions checked
        item = versions.item(row)
        wanted = item.data(Qt.ItemDataRole.UserRole) is not None
        item.setCheckState(Qt.CheckState.Checked if wanted else Qt.CheckState.Unchecked)
    dialog._on_ok()
    assert not dialog.isVisible()

    lanes = [lane.config() for lane in compare.lanes]
    assert [(c.model, c.settings.prompt) for c in lanes] == [
        ("m2" if m == 2 else "m1", v.id)
        for v in (version_b, version_a)  # newest first, as the list shows them
        for m in (1, 2)
    ]
    assert [c.backend for c in lanes] == ["custom", "ollama"] * 2
    assert window.workspace.model.scenario.lanes == tuple(lanes)  # saved with the file


def test_a_matrix_past_the_lane_limit_gives_the_test_set_every_pair(
    window: MainWindow,
) -> None:
    versions = _versions(window, *(f"Prompt {n}.\n{{tools}}\n{{format}}" for n in range(4)))
    compare = window.compare
    compare.set_lanes((LaneConfig("custom", "http://h/v1", "m1"),))
    dialog = compare.open_matrix()
    for row in range(dialog.versions.count()):  # the editor and the four versions
        dialog.versions.item(row).setCheckState(Qt.CheckState.Checked)
    dialog.more.setText("m2, m3")
    dialog._on_ok()
    assert len(compare.lanes) == 4  # traces side by side: up to the lane limit
    assert "15 pairs" in compare.message.text()
    columns = compare.eval_lanes()
    assert len(columns) == 15  # the test-set grid: a column for each pair
    assert len({c.label for c in columns}) == 15
    pinned = [c.settings.prompt for c in columns]
    assert pinned.count(None) == 3
    assert all(pinned.count(v.id) == 3 for v in versions)
    compare.lanes[0].backend_panel.model_combo.setCurrentText("other")  # an edit ends it
    assert len(compare.eval_lanes()) == 4


def test_a_pinned_version_missing_from_the_history_is_one_line(
    qtbot: QtBot, window: MainWindow, fake_server: FakeOpenAIServer
) -> None:
    _versions(window, TEMPLATE_A)
    before = window.workspace.model.scenario
    compare = window.compare
    settings = LaneSettings(prompt="deadbeef")
    compare.set_lanes((LaneConfig("custom", fake_server.base_url, "m", settings=settings),))
    lane = compare.lanes[0]
    lane.runner.run()
    status = lane.pane.step_label.text()
    assert status.startswith("⚠ Not run: no prompt version 'deadbeef'"), status
    assert "\n" not in status
    assert not compare.running
    assert fake_server.requests == []
    after = window.workspace.model.scenario
    assert after.prompt_history == before.prompt_history  # nothing recorded, nothing changed
