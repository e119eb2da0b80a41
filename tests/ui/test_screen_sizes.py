"""The window on three screens (issue 36): 1920×1080, 1280×720 and 800×600, each in the four
states a user meets first or shows on a projector — the Run tab at first start, the Compare
tab with four lanes and its table, presenter mode with four lanes, and the Test set tab in
presenter mode. Each picture is saved (REACT_SANDBOX_SCREENSHOTS=DIR keeps them in DIR/sizes
to look at) and what a user needs in it is checked to be wholly on screen."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.ui.common import theme
from sandbox_app.ui.window.main_window import MainWindow
from tests.helpers import replies_of
from tests.model_server import ModelScript, ModelServer
from tests.ui.test_first_screen import the_loop
from tests.ui.test_presenter import lines_shown
from tests.ui.test_screenshot import GUESSER, fully_shown, presenter_laid_out, shots

__all__ = ["shots"]  # a fixture, for pytest

SIZES = [(1920, 1080), (1280, 720), (800, 600)]
MODELS = ("qwen2.5:1.5b", "llama3.2:1b", "phi4-mini", "gemma3:1b")


def sized(qtbot: QtBot, window: MainWindow, size: tuple[int, int]) -> None:
    window.resize(*size)
    qtbot.waitUntil(lambda: (window.width(), window.height()) == size, timeout=2000)


def four_lanes_run(qtbot: QtBot, window: MainWindow, server: ModelServer) -> None:
    """Four models on the test server, one of them guessing (a ✘ among the ✔)."""
    for model in MODELS:
        replies = GUESSER if model == "llama3.2:1b" else replies_of("brightgrid")
        server.set_model(model, ModelScript(replies=replies, rate=0))
    compare = window.compare
    compare.set_lanes(tuple(LaneConfig("custom", server.base_url, m) for m in MODELS))
    window.tabs.setCurrentWidget(compare)
    compare.run_all()
    qtbot.waitUntil(lambda: not compare.running, timeout=20000)
    for lane in compare.lanes:
        lane.settings_button.setChecked(False)  # the traces, not the settings


def save(window: MainWindow, shots: Path, name: str, size: tuple[int, int]) -> None:
    folder = shots / "sizes"
    folder.mkdir(parents=True, exist_ok=True)
    window.trace.flush_all()
    assert window.grab().save(str(folder / f"{name}-{size[0]}x{size[1]}.png"))


def all_shown(qtbot: QtBot, widgets: dict[str, QWidget]) -> None:
    """Every one of ``widgets`` wholly on screen once the layout has settled."""
    try:
        qtbot.waitUntil(lambda: all(fully_shown(w) for w in widgets.values()), timeout=3000)
    except qtbot.TimeoutError:
        cut = [name for name, widget in widgets.items() if not fully_shown(widget)]
        raise AssertionError(f"not wholly on screen: {cut}") from None


@pytest.mark.parametrize("size", SIZES)
def test_the_run_tab_at_first_start(
    qtbot: QtBot, window: MainWindow, shots: Path, size: tuple[int, int]
) -> None:
    sized(qtbot, window, size)
    loop = the_loop(window)
    if size[1] < 720:  # 800×600: the editors scroll; the model, Run and the trace stay
        loop = {k: loop[k] for k in ("model in use", "Settings", "Run", "trace")}
    all_shown(qtbot, loop)
    save(window, shots, "run-first-start", size)


@pytest.mark.parametrize("size", SIZES)
def test_the_compare_tab_with_four_lanes_and_its_table(
    qtbot: QtBot,
    window: MainWindow,
    fake_server: ModelServer,
    shots: Path,
    size: tuple[int, int],
) -> None:
    sized(qtbot, window, size)
    four_lanes_run(qtbot, window, fake_server)
    compare = window.compare
    assert compare.table.rowCount() == 4
    needed: dict[str, QWidget] = {"Run all": compare.run_button, "table": compare.table}
    if size[0] >= 1280:  # four lanes side by side; at 800 px the strip scrolls sideways
        needed |= {f"lane {i + 1}": lane.pane.answer_status for i, lane in enumerate(compare.lanes)}
    all_shown(qtbot, needed)
    save(window, shots, "compare-four-lanes", size)


def presenting(qtbot: QtBot, window: MainWindow, check: Callable[[], None]) -> None:
    window.presenter_action.trigger()
    try:
        qtbot.waitUntil(lambda: presenter_laid_out(window), timeout=3000)
        check()
    finally:
        window.presenter_action.trigger()
        theme.high_contrast = False


@pytest.mark.parametrize("size", SIZES)
def test_presenter_mode_with_four_lanes(
    qtbot: QtBot,
    window: MainWindow,
    fake_server: ModelServer,
    shots: Path,
    size: tuple[int, int],
) -> None:
    sized(qtbot, window, size)
    four_lanes_run(qtbot, window, fake_server)
    compare = window.compare
    least = 4 if size[1] < 720 else 8  # trace lines a lane keeps at presenter size

    def check() -> None:
        sized(qtbot, window, size)
        lane = compare.lanes[1]  # the guesser: its ✘ shown
        compare.strip.tabs.setCurrentIndex(1)
        room = compare.strip.area.viewport()  # its width read as it settles (a scroll bar)
        qtbot.waitUntil(lambda: lane.width() >= room.width() - 2, timeout=3000)  # all of it
        qtbot.waitUntil(lambda: lines_shown(lane.trace) >= least, timeout=3000)
        all_shown(
            qtbot,
            {"lane": lane.title, "answer": lane.pane.answer_label, "✔/✘": lane.pane.answer_status},
        )
        assert lane.pane.answer_status.text().startswith("✘")
        save(window, shots, "presenter-four-lanes", size)

    presenting(qtbot, window, check)


@pytest.mark.parametrize("size", SIZES)
def test_the_test_set_tab_in_presenter_mode(
    qtbot: QtBot, window: MainWindow, shots: Path, size: tuple[int, int]
) -> None:
    from tests.ui.test_eval_panel import open_test_set

    sized(qtbot, window, size)
    open_test_set(window)
    panel = window.compare.eval_panel
    panel.run_button.click()
    qtbot.waitUntil(lambda: len(panel.results) == 24 and not panel.running, timeout=20000)

    def check() -> None:
        sized(qtbot, window, size)
        grid = panel.grid
        model = grid.grid_model

        # The first case's cell in every lane's column, wholly; at 800×600 in a taller font
        # (Noto Sans) its upper half, where the pass/fail text is read.
        least = 0.5 if size[1] < 720 else 1.0

        def results_shown() -> bool:
            seen = grid.viewport().visibleRegion()
            cells = [grid.visualRect(model.index(0, c)) for c in range(1, model.columnCount())]
            return all(
                not cell.isEmpty()
                and (shown := seen.intersected(cell).boundingRect()).width() == cell.width()
                and shown.top() == cell.top()
                and shown.height() >= least * cell.height()
                for cell in cells
            )

        try:
            qtbot.waitUntil(results_shown, timeout=3000)
        finally:
            save(window, shots, "presenter-test-set", size)
        all_shown(
            qtbot, {"summary": panel.summary, "progress": panel.progress, "status": panel.status}
        )

    presenting(qtbot, window, check)
