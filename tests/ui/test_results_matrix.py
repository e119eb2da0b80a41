"""The results matrix and chart (ui/results/): each cell's k/N and latest answer, a colour
by pass rate (4/5 is not 0/5), the text filter and "only differing" (counted off the window's
thread, the latest filter's answer shown), a 10,000-case evaluation read a page at a time and
never held whole, each arm's pass rate, pass@k and pass^k in its header's tooltip, the chart's
error bars at the interval by case; opened from the Test set tab and from the History view."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QTextDocument
from pytestqt.qtbot import QtBot

from sandbox_app.core.comparing.case_spread import arm_rate
from sandbox_app.core.comparing.results_matrix import CountedMatrix, HistoryMatrix
from sandbox_app.core.estimates.intervals import wilson
from sandbox_app.ui.results.matrix_dialog import MatrixDialog, open_stored
from sandbox_app.ui.results.matrix_model import KEPT_PAGES, PAGE
from sandbox_app.ui.window.main_window import MainWindow
from tests.matrix_data import QUESTIONS, big_evaluation, small_evaluation
from tests.ui.test_history_view import run_test_set

T, F = True, False
CELLS = {
    (0, "v1"): [T, T, T, F, T],  # 4/5
    (0, "v2"): [F, F, F, F, F],  # 0/5
    (1, "v1"): [T, T, T, T, T],  # 5/5
    (1, "v2"): [T, T, T, T, T],
    (2, "v1"): [T, F],
    (2, "v2"): [T, F, T, F],  # the same rate: no difference
}
DISPLAY, TOOLTIP = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole


def opened(qtbot: QtBot, path: Path, cells: dict[tuple[int, str], list[bool]]) -> MatrixDialog:
    store, evaluation = small_evaluation(path, cells)
    dialog = open_stored(store, evaluation, {"v1": "brief"}, None)
    qtbot.addWidget(dialog)
    return counted(qtbot, dialog)


def counted(qtbot: QtBot, dialog: MatrixDialog) -> MatrixDialog:
    """Once the cases and the arms' pass rates, counted on another thread, are shown."""
    qtbot.waitUntil(lambda: dialog.count.text().endswith("cases"), timeout=5000)
    qtbot.waitUntil(lambda: dialog.rates is not None, timeout=5000)
    return dialog


def shown(dialog: MatrixDialog, row: int, column: int, role: Qt.ItemDataRole = DISPLAY) -> str:
    text = dialog.model.data(dialog.model.index(row, column), role)
    if role != TOOLTIP:
        return str(text)
    document = QTextDocument()  # as Qt shows a tooltip: markup read as markup
    document.setHtml(text)
    return document.toPlainText()


def colour(dialog: MatrixDialog, row: int, column: int) -> QColor:
    found = dialog.model.data(dialog.model.index(row, column), Qt.ItemDataRole.BackgroundRole)
    assert isinstance(found, QColor)
    return found


def header(dialog: MatrixDialog, section: int, across: bool = True) -> str:
    way = Qt.Orientation.Horizontal if across else Qt.Orientation.Vertical
    return str(dialog.model.headerData(section, way, DISPLAY))


def test_each_cell_shows_k_of_n_and_the_latest_answer_coloured_by_rate(
    qtbot: QtBot, tmp_path: Path
) -> None:
    dialog = opened(qtbot, tmp_path / "h.sqlite3", CELLS)
    assert [header(dialog, c) for c in range(4)] == [
        "Question",
        "Expected",
        "brief · good-7b",
        "v2 · good-7b",
    ]
    assert shown(dialog, 0, 0) == "What is the capital of France?"
    assert shown(dialog, 0, 1) == "Paris"
    cell = shown(dialog, 0, 2)
    assert cell.startswith("4/5  Paris (repeat 5 of v1), xxx")
    assert cell.endswith("…")  # elided; the tooltip has all of it
    assert len(cell) < 200
    tooltip = shown(dialog, 0, 2, TOOLTIP)
    assert tooltip.startswith("4/5 passed · brief · good-7b")
    assert tooltip.endswith("Paris (repeat 5 of v1), " + "x" * 300)
    assert shown(dialog, 0, 3).startswith("0/5  Lyon (repeat 5 of v2)")
    # 4/5, 0/5 and 5/5 three colours: 4/5 far from 0/5's red, short of 5/5's green.
    most, none, all_ = colour(dialog, 0, 2), colour(dialog, 0, 3), colour(dialog, 1, 2)
    assert none.hue() < most.hue() < all_.hue()
    assert most.hue() - none.hue() >= 60
    # A question with markup is its text, in the cell and its tooltip.
    assert shown(dialog, 2, 0) == QUESTIONS[2] == shown(dialog, 2, 0, TOOLTIP)


def test_the_filter_and_only_differing_leave_the_cases_they_say(
    qtbot: QtBot, tmp_path: Path
) -> None:
    dialog = opened(qtbot, tmp_path / "h.sqlite3", CELLS)
    assert dialog.count.text() == "3 cases"
    qtbot.keyClicks(dialog.filter, "louvre")
    qtbot.waitUntil(lambda: dialog.model.rowCount() == 1, timeout=3000)
    assert header(dialog, 0, across=False) == "2"  # the case's own number
    assert shown(dialog, 0, 0) == "Which city hosts the Louvre?"
    assert dialog.count.text() == "1 of 3"
    dialog.filter.clear()
    qtbot.waitUntil(lambda: dialog.model.rowCount() == 3, timeout=3000)
    dialog.only_differing.setChecked(True)  # 4/5 vs 0/5 differs; 5/5 vs 5/5, 1/2 vs 2/4 not
    qtbot.waitUntil(lambda: dialog.count.text() == "1 of 3", timeout=3000)
    assert [header(dialog, r, across=False) for r in range(dialog.model.rowCount())] == ["1"]
    dialog.only_differing.setChecked(False)
    qtbot.keyClicks(dialog.filter, "lyon")  # in the answers: the cases with a failed run
    qtbot.waitUntil(lambda: dialog.count.text() == "2 of 3", timeout=3000)
    assert [header(dialog, r, across=False) for r in range(2)] == ["1", "3"]


def test_only_the_latest_filters_cases_are_shown_however_fast_it_is_typed(
    qtbot: QtBot, tmp_path: Path
) -> None:
    dialog = opened(qtbot, tmp_path / "h.sqlite3", CELLS)
    for text in ("c", "ca", "cap", "capi", "capital", "louvre"):
        dialog.filter.setText(text)
        dialog.apply_filter()  # each asked at once, each stopping the one before
    qtbot.waitUntil(lambda: dialog.count.text() == "1 of 3", timeout=3000)
    assert shown(dialog, 0, 0) == "Which city hosts the Louvre?"


def test_each_arms_header_says_its_pass_rate_pass_at_k_and_pass_hat_k(
    qtbot: QtBot, tmp_path: Path
) -> None:
    dialog = opened(qtbot, tmp_path / "h.sqlite3", CELLS)
    first, second = (shown_header_tip(dialog, section) for section in (2, 3))
    # brief: 4/5, 5/5, 1/2 (k = 2, the repeats every case has). pass@2: each case passes at
    # least once in two of its runs, 100 %; pass^2: 6/10, 1 and 0 of the pairs, 53 %.
    assert first.startswith("brief · good-7b\n\nPass rate 83% (95% CI ")
    assert "by case: 3 cases, 12 runs)" in first
    assert first.endswith("pass@2 100%: at least one of 2 runs passes\npass^2 53%: all 2 runs pass")
    # v2: 0/5, 5/5, 2/4, so k = 4. pass@4: 0, 1, 1 → 67 %; pass^4: 0, 1, 0 → 33 %.
    assert "Pass rate 50% (95% CI " in second
    assert second.endswith("pass@4 67%: at least one of 4 runs passes\npass^4 33%: all 4 runs pass")


def shown_header_tip(dialog: MatrixDialog, section: int) -> str:
    text = dialog.model.headerData(section, Qt.Orientation.Horizontal, TOOLTIP)
    document = QTextDocument()
    document.setHtml(text)
    return document.toPlainText()


def test_ten_thousand_cases_open_and_scroll_a_page_at_a_time(qtbot: QtBot, tmp_path: Path) -> None:
    store, evaluation = big_evaluation(tmp_path / "big.sqlite3", 10_000)
    assert store.read("SELECT COUNT(*) FROM results")[0][0] == 40_000
    dialog = open_stored(store, evaluation, {}, None)
    qtbot.addWidget(dialog)
    source = dialog.source
    assert isinstance(source, HistoryMatrix)
    dialog.resize(1200, 700)
    qtbot.waitExposed(dialog)
    qtbot.waitUntil(lambda: source.pages_read >= 2, timeout=5000)
    assert dialog.count.text() == "10,000 cases"
    # The first screen's page of cases (its cells: 4 arms a case) and the next, read ahead:
    # 800 cells of 40,000 runs.
    assert (source.pages_read, source.rows_read) == (2, 2 * PAGE * 4)
    assert shown(dialog, 0, 2).startswith("1/1  answer 1 from good-7b on v-brief")
    dialog.table.scrollToBottom()
    last = dialog.model.rowCount() - 1
    qtbot.waitUntil(lambda: source.pages_read == 3, timeout=3000)  # the last (none after it)
    assert source.rows_read == 3 * PAGE * 4
    bottom = dialog.table.indexAt(dialog.table.viewport().rect().bottomLeft() - QPoint(0, 4))
    assert bottom.row() == last  # the last case on screen, numbered as in the test set
    assert header(dialog, bottom.row(), across=False) == "10000"
    assert shown(dialog, last, 5).startswith("1/1  answer 10000 from small-1b on v-grounded")


def test_scrolling_through_every_case_never_holds_them_all(qtbot: QtBot, tmp_path: Path) -> None:
    store, evaluation = big_evaluation(tmp_path / "big.sqlite3", 10_000)
    dialog = counted(qtbot, open_stored(store, evaluation, {}, None))
    qtbot.addWidget(dialog)
    dialog.resize(1200, 700)
    qtbot.waitExposed(dialog)
    source, bar = dialog.source, dialog.table.verticalScrollBar()
    assert isinstance(source, HistoryMatrix)
    held: list[int] = []
    while bar.value() < bar.maximum():  # a screen at a time, each drawn, top to bottom
        bar.setValue(bar.value() + bar.pageStep())
        dialog.table.viewport().repaint()
        held.append(dialog.model.kept_rows())
    # Every page was read as it came on screen (the cells of all 10,000 cases, 4 arms each),
    # and never more than KEPT_PAGES pages held: 2,000 cases' cells of the 40,000.
    assert source.rows_read >= 40_000
    assert max(held) == KEPT_PAGES * PAGE
    assert max(held) * 4 < 40_000
    top = dialog.table.indexAt(QPoint(4, 4)).row()
    assert shown(dialog, top, 2)[3:].startswith(f"  answer {top + 1} from good-7b")


def test_the_chart_has_an_error_bar_per_arm_at_its_interval_by_case(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = tmp_path / "h.sqlite3"
    small_evaluation(path, {key: verdicts[:1] for key, verdicts in CELLS.items()})  # before
    dialog = opened(qtbot, path, CELLS)
    chart = dialog.show_chart()
    assert chart.bars is not None
    bars = chart.bars.opts
    assert list(bars["y"]) == [0, 1]  # one bar per arm, the first on top
    spreads = [  # (runs, passes) of each case: v1 4/5, 5/5, 1/2; v2 0/5, 5/5, 2/4
        {(5, 4): 1, (5, 5): 1, (2, 1): 1},
        {(5, 0): 1, (5, 5): 1, (4, 2): 1},
    ]
    for arm, spread in enumerate(spreads):
        rate = arm_rate(spread)
        assert bars["x"][arm] == pytest.approx(100 * rate.rate)
        assert bars["x"][arm] - bars["left"][arm] == pytest.approx(100 * rate.low)
        assert bars["x"][arm] + bars["right"][arm] == pytest.approx(100 * rate.high)
        # Three cases' repeats are not 12 or 14 independent runs: wider than Wilson's.
        low, high = wilson(rate.passed, rate.runs)
        assert rate.low < low
        assert rate.high >= high
    assert "brief · good-7b: pass@2 100%, pass^2 53%" in chart.repeats.text()
    # The trend: each arm's pass rate in the evaluation before and in this one.
    trend = [list(zip(*line.getData(), strict=True)) for line in chart.lines]
    assert trend == [
        [(1, pytest.approx(100)), (2, pytest.approx(100 * 10 / 12))],  # first runs: T, T, T
        [(1, pytest.approx(100 * 2 / 3)), (2, pytest.approx(50))],  # F, T, T
    ]


BRIEF_CELLS = [  # the offline model's "brief" answer against the four cases' expected ones
    "0/2  About $2,160 per year",
    "2/2  About $2,160 per year",
    "2/2  About $2,160 per year",
    "0/2  About $2,160 per year",
]


def test_matrix_view_opens_from_the_test_set_tab_and_the_history(
    qtbot: QtBot, window: MainWindow
) -> None:
    run_test_set(qtbot, window, "brief")
    panel = window.compare.eval_panel
    qtbot.mouseClick(panel.matrix_button, Qt.MouseButton.LeftButton)
    dialogs = [w for w in window.findChildren(MatrixDialog) if w.isVisible()]
    assert len(dialogs) == 1
    dialog = counted(qtbot, dialogs[0])
    assert dialog.windowTitle() == "Results — Prompt variants: guess or look it up"
    # The two offline lanes are one arm: each case's runs of both counted together.
    assert header(dialog, 2) == "brief · scripted"
    cells = [shown(dialog, row, 2) for row in range(dialog.model.rowCount())]
    assert cells == BRIEF_CELLS
    dialog.close()
    view = window.history.open_view()
    view.select(1)
    qtbot.mouseClick(view.matrix_button, Qt.MouseButton.LeftButton)
    stored = [w for w in view.findChildren(MatrixDialog) if w.isVisible()]
    assert len(stored) == 1
    counted(qtbot, stored[0])
    assert stored[0].windowTitle().startswith("Results — #1 · ")
    assert [shown(stored[0], row, 2) for row in range(4)] == cells


def test_with_the_history_off_the_matrix_counts_the_runs_kept_in_memory(
    qtbot: QtBot, window_without_history: MainWindow
) -> None:
    window = window_without_history
    run_test_set(qtbot, window, "brief")
    panel = window.compare.eval_panel
    qtbot.mouseClick(panel.matrix_button, Qt.MouseButton.LeftButton)
    dialog = counted(qtbot, next(w for w in window.findChildren(MatrixDialog) if w.isVisible()))
    assert isinstance(dialog.source, CountedMatrix)
    assert [shown(dialog, row, 2) for row in range(dialog.model.rowCount())] == BRIEF_CELLS
    chart = dialog.show_chart()
    qtbot.waitUntil(lambda: chart.bars is not None, timeout=3000)
    assert chart.bars is not None
    assert list(chart.bars.opts["x"]) == [50.0]  # 4 of 8 runs, no trend without a history
    assert chart.lines == []


def test_an_arms_name_with_markup_is_its_text_in_the_charts_legend(
    qtbot: QtBot, tmp_path: Path
) -> None:
    store, evaluation = small_evaluation(tmp_path / "h.sqlite3", CELLS)
    dialog = open_stored(store, evaluation, {"v1": "<b>brief</b> <img src='x'>"}, None)
    qtbot.addWidget(dialog)
    legend = dialog.show_chart().trend.getPlotItem().legend
    # pyqtgraph draws a legend's label as HTML: the version's name (from a file) as written.
    shown_names = [label.item.toPlainText() for _, label in legend.items]
    assert shown_names == ["<b>brief</b> <img src='x'> · good-7b", "v2 · good-7b"]
