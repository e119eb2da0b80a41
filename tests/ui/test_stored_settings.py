"""Settings the window reads back at start (zoom, replay pace, prices) hold whatever the
settings file holds: garbage gives the default, never a window that fails to open."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtCore import QSettings

from sandbox_app.core.results.compare import Price
from sandbox_app.core.running.recording import recordings_dir
from sandbox_app.ui.window.main_window import MainWindow

DEEP = "[" * 5000 + "]" * 5000


@pytest.mark.parametrize(
    "stored", ["abc", "nan", "inf", "-3", "1e400", "1" * 5000, "", "true", DEEP]
)
def test_a_garbage_zoom_or_pace_opens_the_window_at_the_defaults(
    settings: QSettings, make_window: Callable[[], MainWindow], stored: str
) -> None:
    settings.setValue("zoom", stored)
    settings.setValue("replay_speed", stored)
    window = make_window()
    assert window.presenter.zoom == 1.0
    assert window.recordings.speed == 1.0


def test_a_pace_the_menu_does_not_offer_plays_as_recorded(
    settings: QSettings, make_window: Callable[[], MainWindow]
) -> None:
    settings.setValue("replay_speed", 3.0)  # not one of As recorded, 2x, 4x, At once
    window = make_window()
    assert window.recordings.play(recordings_dir() / "brightgrid_two_models.json")
    assert "· As recorded" in window.statusBar().currentMessage()


@pytest.mark.parametrize(
    "stored",
    [
        DEEP,
        '{"m": [1]}',
        '{"m": ["1", "2"]}',
        '{"m": [NaN, 1]}',
        '{"m": [-1, 2]}',
        '["m", 1, 2]',
        "{not json",
    ],
)
def test_garbage_prices_are_dropped(
    settings: QSettings, make_window: Callable[[], MainWindow], stored: str
) -> None:
    settings.setValue("prices", stored)
    window = make_window()
    assert window.workspace.model.prices == {}


def test_saved_prices_come_back(settings: QSettings, make_window: Callable[[], MainWindow]) -> None:
    settings.setValue("prices", '{"m1": [1, 2.5], "bad": [1]}')
    window = make_window()
    assert window.workspace.model.prices == {"m1": Price(1.0, 2.5)}
