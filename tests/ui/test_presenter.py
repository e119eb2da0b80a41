"""Presenter mode and zoom: the editors give way to a one-line summary, the trace grows and
takes the high-contrast colours; zoom is remembered; at 200 % in 1280×720 nothing is cut off."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QImage
from pytestqt.qtbot import QtBot

from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.ui.common import theme
from sandbox_app.ui.trace.trace_view import TraceView
from sandbox_app.ui.window.main_window import MainWindow
from tests.ui.test_screenshot import fully_shown, presenter_laid_out, shots  # noqa: F401
from tests.ui.test_window import fast


@pytest.fixture(autouse=True)
def colours_back() -> Iterator[None]:
    yield
    theme.high_contrast = False  # a module setting: never leak into other tests


def trace_colour(window: MainWindow, prefix: str) -> str:
    block = window.trace.document().firstBlock()
    while block.isValid() and not block.text().startswith(prefix):
        block = block.next()
    formats = block.layout().formats()  # kept: the format list owns the C++ objects
    colour: str = formats[0].format.foreground().color().name()
    return colour


def run(qtbot: QtBot, window: MainWindow) -> None:
    window.set_scenario(fast("brightgrid", tokens_per_second=0))
    window.start_run()
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=20000)
    window.trace.flush_all()


def test_presenter_mode_fills_the_window_with_the_trace(qtbot: QtBot, window: MainWindow) -> None:
    run(qtbot, window)
    editors = window.splitter.widget(0)
    assert editors is not None
    assert editors.isVisible()
    size = window.trace.font().pointSizeF()
    assert trace_colour(window, "Thought:") == theme.LIGHT["thought"].color
    window.presenter_action.trigger()  # F11
    assert not editors.isVisible()
    assert window.presenter.bar.isVisible()
    summary = window.presenter.summary.text()
    assert summary.startswith("Brightgrid: yearly cost for a team · How much does Brightgrid")
    assert window.trace.font().pointSizeF() == pytest.approx(size * 1.5)
    assert trace_colour(window, "Thought:") == theme.HIGH_CONTRAST_LIGHT["thought"].color
    window.presenter_action.trigger()
    assert editors.isVisible()
    assert not window.presenter.bar.isVisible()
    assert window.trace.font().pointSizeF() == pytest.approx(size)
    assert trace_colour(window, "Thought:") == theme.LIGHT["thought"].color


def test_zoom_is_remembered(qtbot: QtBot, window: MainWindow, settings: QSettings) -> None:
    size = window.trace.font().pointSizeF()
    answer = window.answer_label.font().pointSizeF()
    window.presenter.zoom_in()
    window.presenter.zoom_in()
    assert window.presenter.zoom == 1.3
    assert window.trace.font().pointSizeF() == pytest.approx(size * 1.3)
    assert window.answer_label.font().pointSizeF() == pytest.approx(answer * 1.3)
    again = MainWindow(settings, KeyStore())
    qtbot.addWidget(again)
    assert again.presenter.zoom == 1.3
    assert again.trace.font().pointSizeF() == pytest.approx(size * 1.3)
    window.presenter.zoom_reset()
    assert window.trace.font().pointSizeF() == pytest.approx(size)


def test_at_200_percent_in_1280_by_720_nothing_is_cut_off(
    qtbot: QtBot,
    window: MainWindow,
    shots: Path,  # noqa: F811
) -> None:
    window.resize(1280, 720)
    qtbot.waitUntil(lambda: window.width() == 1280, timeout=2000)
    run(qtbot, window)
    window.presenter_action.trigger()
    while window.presenter.zoom < 2.0:
        window.presenter.zoom_in()
    window.presenter.zoom_out()
    window.presenter.zoom_in()  # 2.0 by way of both directions
    assert window.presenter.zoom == 2.0
    answer = window.answer_label
    qtbot.waitUntil(lambda: answer.height() >= answer.sizeHint().height())  # its text fits
    for widget in (window.run_button, window.stop_button, answer):
        assert fully_shown(widget), widget
    assert window.grab().save(str(shots / "presenter.png"))
    assert QImage(str(shots / "presenter.png")).size().width() == 1280


def test_zoom_scales_the_whole_window_and_says_so(qtbot: QtBot, window: MainWindow) -> None:
    """Buttons, the summary, the status bar and the comparison table grow with the traces
    (issue 22, item 3), and the status bar shows the zoom."""
    compare = window.compare

    def sizes() -> list[float]:
        widgets = (
            window.run_button,
            compare.run_button,
            compare.table,
            window.statusBar(),
            window.presenter.summary,
            window.menuBar(),
        )
        return [w.font().pointSizeF() for w in widgets]

    base = sizes()
    window.presenter.zoom_in()
    window.presenter.zoom_in()
    qtbot.waitUntil(lambda: sizes() == pytest.approx([b * 1.3 for b in base]), timeout=2000)
    assert window.presenter.zoom_label.text() == "Zoom 130 %"
    assert window.presenter.zoom_label.isVisible()
    window.presenter_action.trigger()
    qtbot.waitUntil(lambda: sizes() == pytest.approx([b * 1.3 * 1.5 for b in base]), timeout=2000)
    assert window.presenter.zoom_label.text() == "Zoom 130 % · presenter ×1.5"
    window.presenter_action.trigger()
    window.presenter.zoom_reset()
    qtbot.waitUntil(lambda: sizes() == pytest.approx(base), timeout=2000)
    assert window.presenter.zoom_label.text() == "Zoom 100 %"


def lines_shown(trace: TraceView) -> float:
    return trace.viewport().height() / trace.fontMetrics().lineSpacing()


@pytest.mark.parametrize("lanes", [3, 4])
def test_presenter_mode_shows_three_or_four_lanes_one_at_a_time(
    qtbot: QtBot, window: MainWindow, lanes: int
) -> None:
    window.set_scenario(fast("brightgrid", tokens_per_second=0))
    compare = window.compare
    compare.set_lanes(tuple(LaneConfig("scripted", "", f"model-{i}") for i in range(lanes)))
    window.tabs.setCurrentWidget(compare)
    window.resize(1280, 720)
    qtbot.waitUntil(lambda: window.width() == 1280, timeout=2000)
    compare.run_all()
    qtbot.waitUntil(lambda: not compare.running, timeout=20000)
    window.presenter_action.trigger()
    assert compare.strip.tabs.isVisible()
    for shown in range(lanes):
        compare.strip.tabs.setCurrentIndex(shown)
        visible = [lane for lane in compare.lanes if lane.isVisible()]
        assert visible == [compare.lanes[shown]]
        lane = visible[0]
        # A projector's 720 px: the lane's chrome is one line (name, model, status), so the
        # trace keeps at least 8 lines at presenter size, whatever the desktop's font.
        qtbot.waitUntil(lambda lane=lane: lines_shown(lane.trace) >= 8, timeout=2000)
        step = lane.pane.step_label
        needed = (lane.title, step, lane.status, lane.pane.answer_label, compare.table)
        # The tab's lane is laid out over a turn or two after it shows.
        qtbot.waitUntil(lambda needed=needed: all(map(fully_shown, needed)), timeout=2000)
        assert step.mapTo(window, step.rect().center()).y() == pytest.approx(
            lane.title.mapTo(window, lane.title.rect().center()).y(), abs=4
        )
        assert not lane.settings_button.isVisible()
        assert not lane.pane.stop_button.isVisible()
    # The table below still compares every lane.
    assert compare.table.rowCount() == lanes
    window.presenter_action.trigger()  # back: side by side
    assert not compare.strip.tabs.isVisible()
    assert all(lane.isVisible() for lane in compare.lanes)
    # Side by side again, each lane has its buttons and its model line back.
    for lane in compare.lanes:
        assert lane.settings_button.isVisible()
        assert lane.model_label.isVisible()
        assert lane.title.text() == lane.name


def test_at_200_percent_presenter_mode_fits_1280_by_720(qtbot: QtBot, window: MainWindow) -> None:
    compare = window.compare
    compare.add_lane()
    window.tabs.setCurrentWidget(compare)
    window.presenter_action.trigger()
    while window.presenter.zoom < 2.0:
        window.presenter.zoom_in()
    hint = window.minimumSizeHint()
    assert hint.width() <= 1280
    assert hint.height() <= 720
    window.resize(1280, 720)
    qtbot.waitUntil(lambda: window.width() == 1280, timeout=2000)
    for widget in (compare.run_button, compare.export_button, window.presenter.zoom_label):
        assert fully_shown(widget), widget


def test_the_summary_fills_the_questions_variables(qtbot: QtBot, window: MainWindow) -> None:
    scenario = fast("brightgrid", tokens_per_second=0)
    window.set_scenario(
        scenario.with_changes(
            question="How much does Brightgrid Pro cost per year for {{seats}} developers?",
            variables={"seats": "7"},
        )
    )
    window.presenter_action.trigger()
    summary = window.presenter.summary.text()
    assert "for 7 developers?" in summary
    assert "{{" not in summary
    window.presenter_action.trigger()


@pytest.mark.parametrize("size", [(1280, 720), (800, 600)])
def test_presenter_mode_shows_the_test_sets_results(
    qtbot: QtBot, window: MainWindow, size: tuple[int, int]
) -> None:
    """On a projector the Test set tab's grid is in view, its result columns beside the
    questions (the question column never takes the whole width)."""
    from tests.ui.test_eval_panel import open_test_set

    window.resize(*size)
    open_test_set(window)
    panel = window.compare.eval_panel
    panel.run_button.click()
    qtbot.waitUntil(lambda: len(panel.results) == 24 and not panel.running, timeout=20000)
    window.presenter_action.trigger()
    qtbot.waitUntil(lambda: presenter_laid_out(window), timeout=3000)  # not a turn early
    grid = panel.grid
    model = grid.grid_model

    def shown(row: int, column: int) -> bool:
        cell = grid.visualRect(model.index(row, column))
        seen = grid.viewport().visibleRegion().intersected(cell).boundingRect()
        return not cell.isEmpty() and seen == cell

    columns = range(1, model.columnCount())
    assert len(columns) == 2  # a lane each
    qtbot.waitUntil(lambda: all(shown(row, c) for row in (0, 1) for c in columns), timeout=3000)
    # The question column leaves the results their room (half the width or more in a wide
    # font at 800 px: 40 characters of Noto Sans at presenter size are 400 of 729 px).
    results = sum(grid.columnWidth(c) for c in columns)
    assert grid.columnWidth(0) + results <= grid.viewport().width()
    window.presenter_action.trigger()


@pytest.mark.parametrize("lanes", [2, 3])
def test_at_800_by_600_a_lane_is_readable_with_its_verdict(
    qtbot: QtBot, window: MainWindow, lanes: int
) -> None:
    """A projector of 800x600: one lane at a time, full width (two as well as three), its
    answer and ✔/✘ on one row, and lines of its trace under them; the Run tab's trace shows
    five lines and more."""
    window.resize(800, 600)
    run(qtbot, window)
    window.presenter_action.trigger()
    qtbot.waitUntil(lambda: lines_shown(window.trace) >= 5, timeout=2000)
    for widget in (window.answer_label, window.answer_status):
        assert fully_shown(widget), widget
    assert window.answer_status.text().startswith("✔ Correct")
    window.presenter_action.trigger()
    compare = window.compare
    compare.set_lanes(tuple(LaneConfig("scripted", "", f"model-{i}") for i in range(lanes)))
    window.tabs.setCurrentWidget(compare)
    window.resize(800, 600)
    compare.run_all()
    qtbot.waitUntil(lambda: not compare.running, timeout=20000)
    window.presenter_action.trigger()
    window.resize(800, 600)
    qtbot.waitUntil(lambda: window.width() == 800, timeout=2000)
    lane = compare.lanes[0]
    assert [other for other in compare.lanes if other.isVisible()] == [lane]
    qtbot.waitUntil(lambda: lines_shown(lane.trace) >= 4, timeout=2000)
    answer, verdict = lane.pane.answer_label, lane.pane.answer_status
    for widget in (lane.title, lane.pane.step_label, answer, verdict):
        assert fully_shown(widget), widget
    assert verdict.text().startswith("✔ Correct")
    # Once laid out at presenter sizes: the verdict beside the answer, on its row.
    qtbot.waitUntil(
        lambda: (
            abs(
                verdict.mapTo(lane, verdict.rect().center()).y()
                - answer.mapTo(lane, answer.rect().center()).y()
            )
            <= 6
        ),
        timeout=2000,
    )
    window.presenter_action.trigger()  # back: side by side, the verdict under the answer
    assert all(other.isVisible() for other in compare.lanes)
    qtbot.waitUntil(
        lambda: (
            verdict.mapTo(lane, verdict.rect().topLeft()).y()
            > answer.mapTo(lane, answer.rect().bottomLeft()).y()
        ),
        timeout=2000,
    )
