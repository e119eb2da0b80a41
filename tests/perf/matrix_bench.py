"""The results matrix on a large evaluation: opening it, scrolling it, filtering it.

    uv run python -m tests.perf.matrix_bench            # 10,000 cases × 4 arms, 1 and 5 repeats

Offscreen, on a temporary history database written by tests/matrix_data.py. Prints one JSON
object a size: each figure in milliseconds (wall clock) and how much of the evaluation was
read (pages, cell rows) against how many results it holds.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication

from sandbox_app.core.comparing.results_matrix import HistoryMatrix
from sandbox_app.ui.results.matrix_dialog import open_stored
from tests.matrix_data import big_evaluation


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 1)


def measure(folder: Path, cases: int, repeats: int) -> dict[str, object]:
    app = QApplication.instance() or QApplication([])
    store, evaluation = big_evaluation(folder / f"h{repeats}.sqlite3", cases, repeats)
    results = store.read("SELECT COUNT(*) FROM results")[0][0]
    started = time.perf_counter()
    dialog = open_stored(store, evaluation, {}, None)
    dialog.resize(1280, 800)
    app.processEvents()
    dialog.table.viewport().repaint()  # the first screen drawn
    opened = _ms(started)
    source = dialog.source
    assert isinstance(source, HistoryMatrix)
    first_screen = (source.pages_read, source.rows_read)
    bar = dialog.table.verticalScrollBar()
    steps = []
    for _ in range(300):  # page down, each screen drawn before the next
        t = time.perf_counter()
        bar.setValue(bar.value() + bar.pageStep())
        dialog.table.viewport().repaint()
        steps.append((time.perf_counter() - t) * 1000)
    t = time.perf_counter()
    bar.setValue(bar.maximum())
    dialog.table.viewport().repaint()
    to_end = _ms(t)
    t = time.perf_counter()
    dialog.filter.setText("question 99")
    dialog.apply_filter()
    dialog.table.viewport().repaint()
    filtered = (_ms(t), dialog.model.rowCount())
    dialog.filter.setText("")
    t = time.perf_counter()
    dialog.only_differing.setChecked(True)  # applies at once
    dialog.table.viewport().repaint()
    differing = (_ms(t), dialog.model.rowCount())
    t = time.perf_counter()
    dialog.show_chart()
    charted = _ms(t)
    dialog.close()
    store.close()
    return {
        "cases": cases,
        "arms": 4,
        "repeats": repeats,
        "results": results,
        "open_to_first_screen_ms": opened,
        "first_screen_read": {"pages": first_screen[0], "cell_rows": first_screen[1]},
        "page_down_ms": {
            "median": round(statistics.median(steps), 2),
            "p95": round(sorted(steps)[int(len(steps) * 0.95)], 2),
            "max": round(max(steps), 2),
        },
        "jump_to_end_ms": to_end,
        "after_300_page_downs_and_the_end_read": {
            "pages": source.pages_read,
            "cell_rows": source.rows_read,
        },
        "filter_ms_and_cases": filtered,
        "only_differing_ms_and_cases": differing,
        "chart_tab_ms": charted,
    }


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        for repeats in (1, 5):
            print(json.dumps(measure(Path(tmp), 10_000, repeats)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
