"""A lane setting registered from outside the app's modules gets its row in the model panel,
on the Run tab and in every compare lane, and what is set there reaches the scenario file
and the run's record (core/scenarios/lane_settings.py's registry; ui/lane/lane_settings_form.py)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QDoubleSpinBox, QSpinBox
from pytestqt.qtbot import QtBot

from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.core.scenarios.lane_settings import (
    LaneSettings,
    Rule,
    Setting,
    register,
    unregister,
)
from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.ui.lane.backend_panel import BackendPanel
from sandbox_app.ui.window.main_window import MainWindow
from tests.model_server import ModelServer
from tests.model_server.anthropic import fake_anthropic
from tests.ui.form_rows import setting_row

__all__ = ["fake_anthropic"]  # the fixture, imported for pytest

FAKE = Setting("fake_level", Rule("whole", 1, 9, nullable=True), None, "Fake level", "a test's")


@pytest.fixture
def fake_setting() -> Iterator[Setting]:
    register(FAKE)
    yield FAKE
    unregister(FAKE.name)


def _row(panel: BackendPanel) -> QSpinBox:
    return setting_row(panel, "fake_level", "Fake level", QSpinBox)


def test_the_panel_shows_a_new_setting_and_the_run_and_file_keep_it(
    fake_setting: Setting,
    qtbot: QtBot,
    make_window: Callable[..., MainWindow],
    tmp_path: Path,
) -> None:
    window = make_window()
    spin = _row(window.backend_panel)
    assert spin.text() == "Default"  # None: nothing set
    spin.setValue(6)
    assert window.workspace.model.scenario.model["fake_level"] == 6
    window.start_run()
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=15000)
    record = window.run_pane.shown_record()
    assert record is not None
    assert record.settings.settings["fake_level"] == 6
    assert window.files.save_to(tmp_path / "s.json")
    assert json.loads((tmp_path / "s.json").read_text())["model"]["fake_level"] == 6
    lane = window.compare.lanes[0]
    _row(lane.backend_panel).setValue(2)
    assert window.workspace.model.scenario.lanes[0].settings["fake_level"] == 2


def test_the_panel_gives_back_what_it_was_shown_until_edited(qtbot: QtBot) -> None:
    # A spin box holds neither None (the server's own temperature) nor 0.333 (two
    # decimals): shown and read back unedited, the settings are what the file said.
    panel = BackendPanel(KeyStore())
    qtbot.addWidget(panel)
    for shown in (LaneSettings(temperature=None), LaneSettings(temperature=0.333, seed=9)):
        panel.set_sampling(shown)
        assert panel.choice().settings == shown
    spin = panel.settings_form.widgets["temperature"]
    assert isinstance(spin, QDoubleSpinBox)
    spin.setValue(0.7)
    assert panel.choice().settings.temperature == 0.7


def test_a_setting_the_lanes_backend_cannot_send_is_one_line_and_nothing_runs(
    qtbot: QtBot, window: MainWindow, fake_anthropic: ModelServer
) -> None:
    # Anthropic's Messages API has no seed: the lane says so, nothing is sent without it.
    compare = window.compare
    lane_config = LaneConfig("anthropic", fake_anthropic.base_url, "m", LaneSettings(seed=7))
    compare.set_lanes((lane_config,))
    lane = compare.lanes[0]
    lane.runner.run()
    assert lane.pane.step_label.text() == (
        "⚠ Not run: seed: Anthropic (Claude) cannot send it; leave it unset for this backend"
    )
    assert not compare.running
    assert fake_anthropic.requests == []
