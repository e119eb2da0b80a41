"""Prompt variants in compare lanes: a lane pinned to a version of the scenario's history
beside one on the editor's prompt, both against the test server; Matrix… (versions × models);
a pinned version the history lacks."""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QMessageBox
from pytestqt.qtbot import QtBot

from sandbox_app.core.react_format.prompts import render_prompt
from sandbox_app.core.running.records import RunRecord
from sandbox_app.core.scenarios.prompt_versions import PromptVersion, record, version_of
from sandbox_app.core.scenarios.scenario import LaneConfig, LaneSettings, Scenario
from sandbox_app.ui.window.main_window import MainWindow
from tests.helpers import replies_of
from tests.model_server import ModelScript, ModelServer

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
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
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
    assert pinned.prompt_label.text().startswith(f"ran prompt {version_a.short}")
    assert editor.prompt_label.text().startswith(f"ran prompt {version_b.short}")
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
    # The editor holds B: listed once, as the editor, named; then A.
    texts = [versions.item(row).text() for row in range(versions.count())]
    assert texts == [f"The editor · {version_b.short} · 1 run", f"{version_a.short} · 1 run"]
    for row in range(versions.count()):
        versions.item(row).setCheckState(Qt.CheckState.Checked)
    dialog._on_ok()
    assert not dialog.isVisible()

    lanes = [lane.config() for lane in compare.lanes]
    assert [(c.model, c.settings.prompt) for c in lanes] == [
        ("m2" if m == 2 else "m1", v)
        for v in (None, version_a.id)  # the editor's first, then the history newest first
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
    for row in range(dialog.versions.count()):  # the editor (the last version) and 3 more
        dialog.versions.item(row).setCheckState(Qt.CheckState.Checked)
    dialog.more.setText("m2, m3")
    dialog._on_ok()
    assert len(compare.lanes) == 4  # traces side by side: up to the lane limit
    assert "12 pairs" in compare.message.text()
    columns = compare.eval_lanes()
    assert len(columns) == 12  # the test-set grid: a column for each pair
    assert len({c.label for c in columns}) == 12
    pinned = [c.settings.prompt for c in columns]
    assert pinned.count(None) == 3
    assert all(pinned.count(v.id) == 3 for v in versions[:-1])
    compare.lanes[0].backend_panel.model_combo.setCurrentText("other")  # an edit ends it
    assert len(compare.eval_lanes()) == 4


def test_a_matrix_over_lanes_with_runs_asks_before_replacing_them(
    qtbot: QtBot, window: MainWindow
) -> None:
    _versions(window, TEMPLATE_A)
    compare = window.compare
    compare.set_lanes((LaneConfig("custom", "http://h/v1", "m1"), LaneConfig("ollama", "", "m2")))
    first = compare.lanes[0]
    first.pane.show_record(RunRecord(), "Run 1")  # a run kept in a lane
    dialog = compare.open_matrix()
    dialog.more.setText("m3")
    dialog._on_ok()
    box = dialog.confirm
    assert box is not None
    qtbot.waitUntil(box.isVisible, timeout=2000)
    assert "1 run " in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()  # Cancel: nothing replaced
    qtbot.waitUntil(lambda: not box.isVisible(), timeout=2000)
    assert dialog.isVisible()
    assert compare.lanes[0] is first
    assert len(first.pane.history) == 1
    dialog._on_ok()
    box = dialog.confirm
    assert box is not None
    qtbot.waitUntil(box.isVisible, timeout=2000)
    box.button(QMessageBox.StandardButton.Yes).click()  # Replace lanes
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=2000)
    assert [lane.config().model for lane in compare.lanes] == ["m1", "m2", "m3"]
    assert all(len(lane.pane.history) == 0 for lane in compare.lanes)


def test_a_matrix_over_lanes_without_runs_asks_nothing(window: MainWindow) -> None:
    compare = window.compare
    compare.set_lanes((LaneConfig("custom", "http://h/v1", "m1"),))
    dialog = compare.open_matrix()
    dialog.more.setText("m2")
    dialog._on_ok()
    assert dialog.confirm is None
    assert [lane.config().model for lane in compare.lanes] == ["m1", "m2"]


def test_a_pinned_version_missing_from_the_history_is_one_line(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
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
