"""Compare lanes and the toolbar fit an 800×600 screen, or scroll (issue 22, item 4): the
Compare tab never makes the window wider than the screen, every button of the toolbar is on
screen, and every lane's title and buttons are on screen or a scroll away."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QAbstractButton, QScrollArea, QWidget
from pytestqt.qtbot import QtBot

from sandbox_app.ui.window.main_window import MainWindow
from tests.ui.test_screenshot import fully_shown


def scroll_area_of(widget: QWidget) -> QScrollArea | None:
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QScrollArea):
        parent = parent.parentWidget()
    return parent


def reachable(qtbot: QtBot, widget: QWidget) -> bool:
    """On screen, or brought whole onto it by the scroll area it is in."""
    if fully_shown(widget):
        return True
    area = scroll_area_of(widget)
    if area is None:
        return False
    area.ensureWidgetVisible(widget, 0, 0)
    qtbot.waitUntil(lambda: fully_shown(widget), timeout=2000)
    return True


def lanes_of(qtbot: QtBot, window: MainWindow, n: int, width: int = 800) -> None:
    compare = window.compare
    while len(compare.lanes) < n:
        compare.add_lane()
    window.tabs.setCurrentWidget(compare)
    window.resize(width, 600 if width == 800 else 800)
    qtbot.waitUntil(lambda: window.width() == width, timeout=2000)


@pytest.mark.parametrize("lanes", [3, 4])
def test_the_compare_tab_fits_an_800_px_screen(
    qtbot: QtBot, window: MainWindow, lanes: int
) -> None:
    lanes_of(qtbot, window, lanes)
    assert window.minimumSizeHint().width() <= 800
    assert window.width() == 800
    compare = window.compare
    toolbar = [
        compare.add_button,
        compare.run_button,
        compare.stop_button,
        compare.repeat_spin,
        compare.prices_button,
        compare.export_button,
    ]
    for widget in toolbar:  # the toolbar fits: never scrolled away
        assert fully_shown(widget), widget
    for lane in compare.lanes:
        buttons = [b for b in lane.findChildren(QAbstractButton) if b.isVisibleTo(lane)]
        assert len(buttons) >= 4  # Settings, Step, Stop, Copy or ✕
        for widget in (lane.title, *buttons):
            assert reachable(qtbot, widget), (lane.name, widget)


def test_the_test_sets_buttons_are_reachable_at_800_px(qtbot: QtBot, window: MainWindow) -> None:
    lanes_of(qtbot, window, 4)
    window.compare.results_tabs.setCurrentIndex(1)  # Test set
    panel = window.compare.eval_panel
    buttons = [b for b in panel.findChildren(QAbstractButton) if b.isVisibleTo(panel) and b.text()]
    assert window.compare.eval_panel.run_button in buttons
    for button in buttons:
        assert reachable(qtbot, button), button.text()
    assert window.width() == 800


def test_three_lanes_fit_a_1200_px_window_side_by_side(qtbot: QtBot, window: MainWindow) -> None:
    lanes_of(qtbot, window, 3, 1200)
    lanes = window.compare.lanes
    # Once laid out at the new size: no lane sideways out of view, none cut.
    qtbot.waitUntil(
        lambda: all(
            fully_shown(widget)
            for lane in lanes
            for widget in (lane.title, lane.model_label, lane.settings_button, lane.remove_button)
        ),
        timeout=2000,
    )
    for lane in lanes:
        # The status line has room for its words (nothing cut to "Don").
        lane.pane.step_label.setText("Done after 3 of 5 steps")
        label = lane.pane.step_label
        qtbot.waitUntil(lambda label=label: label.height() >= label.heightForWidth(label.width()))
        assert label.width() >= label.fontMetrics().horizontalAdvance("Done after")


def test_at_800_by_600_a_lanes_settings_are_never_squeezed_over_its_run(
    qtbot: QtBot, window: MainWindow
) -> None:
    """Three offline lanes (their settings open) at 800x600: each lane's form gets the
    height its wrapped rows need, and its Run/Step row starts below it (the strip scrolls)."""
    from sandbox_app.core.scenarios.scenario import LaneConfig

    window.resize(800, 600)
    window.tabs.setCurrentWidget(window.compare)
    window.compare.set_lanes(tuple(LaneConfig("scripted") for _ in range(3)))
    lanes = window.compare.lanes

    def overlaps() -> list[str]:
        found = []
        for lane in lanes:
            panel, pane = lane.backend_panel, lane.pane
            layout = panel.layout()
            assert layout is not None
            if panel.height() < layout.totalHeightForWidth(panel.width()):
                found.append(f"{lane.name}: form {panel.height()} px")
            if pane.geometry().top() < panel.geometry().bottom():
                found.append(f"{lane.name}: run row at {pane.geometry().top()}")
        return found

    qtbot.waitUntil(lambda: all(lane.backend_panel.isVisible() for lane in lanes), timeout=3000)
    qtbot.waitUntil(lambda: not overlaps(), timeout=3000)
