"""The test set's grid over thousands of results: the right cells, each repeat's answer and
failed checks in a tooltip looked up only when it shows, and scrolling to the last case."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, Qt
from pytestqt.qtbot import QtBot

from sandbox_app.core.results.checks import CheckResult
from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.results.evaluation import RunKey
from sandbox_app.ui.compare.eval_grid_model import FAIL, PASS, EvalGrid, EvalGridModel

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
    assert grid.item(0, 2).background() == FAIL  # type: ignore[union-attr]
    assert grid.item(1, 2).background() == PASS  # type: ignore[union-attr]
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
