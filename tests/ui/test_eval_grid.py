"""The test set's grid over thousands of results: the right cells, each repeat's answer and
failed checks in a tooltip looked up only when it shows, and scrolling to the last case."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor
from pytestqt.qtbot import QtBot

from sandbox_app.core.results.checks import CheckResult
from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.results.evaluation import RunKey
from sandbox_app.ui.common.theme import contrast
from sandbox_app.ui.compare.eval_grid_model import EvalGrid, EvalGridModel

CASES, LANES, REPEATS = 3000, ("scripted", "other"), 2


def result(case: int, lane: str, repeat: int, passed: bool) -> EvalResult:
    checks = () if passed else (CheckResult("tool used: search", False, "never called"),)
    answer = f"answer {case}/{lane}/{repeat}"
    return EvalResult(lane, case, repeat, passed, answer=answer, checks=checks)


def test_thousands_of_results_cells_tooltips_and_scrolling(qtbot: QtBot) -> None:
    store: dict[RunKey, dict[str, Any]] = {}
    fetched: list[tuple[int, str]] = []

    def fetch(case: int, lane: str) -> list[dict[str, Any]]:
        fetched.append((case, lane))
        keys = (RunKey(lane, case, repeat) for repeat in range(REPEATS))
        return [store[key] for key in keys if key in store]

    model = EvalGridModel(fetch)
    grid = EvalGrid(model)
    qtbot.addWidget(grid)
    grid.resize(800, 400)
    grid.show()
    qtbot.waitExposed(grid)
    model.reset([f"Question {case}" for case in range(CASES)], LANES)
    for case in range(CASES):  # every third case fails its second repeat on the second lane
        for repeat in range(REPEATS):
            for column, lane in enumerate(LANES):
                passed = not (column == 1 and repeat == 1 and case % 3 == 0)
                store[RunKey(lane, case, repeat)] = result(case, lane, repeat, passed)
                model.add(case, column, repeat, passed)
        model.changed([(case, 0)])
    grid.viewport().repaint()  # drawn now: the visible cells are asked for what they show
    assert fetched == []  # no tooltip made while filling and drawing
    assert grid.rowCount() == CASES
    assert grid.columnCount() == 3
    row = [grid.item(0, c).text() for c in range(3)]  # type: ignore[union-attr]
    assert row == ["Question 0", "2/2", "1/2"]
    assert grid.item(0, 2).background() != grid.item(1, 2).background()  # type: ignore[union-attr]
    tooltip = grid.item(0, 2).toolTip()  # type: ignore[union-attr]
    assert "answer 0/other/0" in tooltip
    assert "answer 0/other/1 · ✗ tool used: search — never called" in tooltip
    assert fetched == [(0, "other")]  # the one cell asked, when asked
    # A re-run replaces its repeat's verdict: the cell passes now.
    model.add(0, 1, 1, True)
    model.changed([(0, 1)])
    assert grid.item(0, 2).text() == "2/2"  # type: ignore[union-attr]
    # Scrolled to the end, the last case is drawn with its own cells.
    grid.scrollToBottom()
    bottom = QPoint(grid.columnViewportPosition(2) + 5, grid.viewport().height() - 3)
    qtbot.waitUntil(lambda: grid.indexAt(bottom).row() == CASES - 1)
    last = grid.indexAt(bottom)
    assert model.data(last, Qt.ItemDataRole.DisplayRole) == "2/2"
    above = grid.indexAt(bottom - QPoint(0, 2 * grid.rowHeight(CASES - 1)))
    assert above.row() == CASES - 3  # row 2997, a multiple of 3: its failure drawn
    assert model.data(above, Qt.ItemDataRole.DisplayRole) == "1/2"
    assert "answer 2997/other/1 · ✗" in str(model.data(above, Qt.ItemDataRole.ToolTipRole))


def greenness(colour: QColor) -> float:
    return colour.greenF() - colour.redF()


def test_a_cell_s_shade_grows_with_the_repeats_that_passed(qtbot: QtBot) -> None:
    """4/5 never looks like 0/5: from all failed to all passed each count is its own shade,
    greener with every repeat that passed."""
    model = EvalGridModel(lambda case, lane: [])
    grid = EvalGrid(model)
    qtbot.addWidget(grid)
    model.reset([f"Question {passed}" for passed in range(6)], ["lane"])
    for passed in range(6):  # case n: n of 5 repeats passed
        for repeat in range(5):
            model.add(passed, 0, repeat, repeat < passed)
    model.changed([(case, 0) for case in range(6)])
    cells = [grid.item(case, 1) for case in range(6)]
    texts = [cell.text() if cell else "" for cell in cells]
    assert texts == ["0/5", "1/5", "2/5", "3/5", "4/5", "5/5"]
    shades = [cell.background() if cell else None for cell in cells]
    drawn = [shade for shade in shades if shade is not None]
    assert len(drawn) == 6
    scale = [greenness(shade) for shade in drawn]
    assert scale == sorted(scale)  # monotone: greener with every repeat passed
    assert len(set(scale)) == 6  # no two counts alike
    for a, b in ((0, 4), (0, 2), (2, 4), (4, 5)):  # visibly different, not a shade off
        x, y = drawn[a], drawn[b]
        apart = max(abs(x.red() - y.red()), abs(x.green() - y.green()), abs(x.blue() - y.blue()))
        assert apart >= 20, (texts[a], texts[b])
    text = grid.palette().color(grid.foregroundRole())
    assert all(contrast(shade, text) >= 4.5 for shade in drawn)
