"""The results matrix on a large evaluation (issue 40, item 3): opening it, scrolling it,
filtering it, with the event loop's lag measured all along, and the memory it takes.

    uv run python -m tests.perf.bench --matrix       # these figures alone
    uv run python -m tests.perf.matrix_bench         # the same, and at 5 repeats

Generated data (tests/matrix_data.py ``big_evaluation``), sizes named: 10,000 cases × 4 arms
(2 prompt versions × 2 models) × 1 repeat = 40,000 results, each with a 240-character answer
(its cell shows the start of it), written to a temporary history database. Offscreen, a
dialog of 1280 × 800 (~27 rows on screen). The loop runs as in the app (Qt's, painting on its
own UpdateRequest); a 5 ms heartbeat timer's late ticks are the lag a user would feel.

- ``matrix_open_ms``: ``open_stored`` called → the first screen of cells painted.
- ``matrix_scroll_lag_*``: a page down every frame (16 ms), top to bottom (~370 pages);
  ``matrix_scroll_cpu_ms_per_page``: the window's thread's CPU time a page (the load on a
  shared machine moves it far less than the lag).
- ``matrix_filter_lag_*``: filters as a user makes them, a key or click every 120 ms:
  "question 99" typed (asked once the typing pauses: 11 cases), cleared, "only differing" on
  and off, "answer 5000 from" typed (in the answers: 1 case), cleared; each waited for until
  its cases are shown.
  ``matrix_filter_shown_ms_max``: the slowest of them, its last key → its cases shown (the
  250 ms pause the typing is given included; the loop free meanwhile).
- ``matrix_rss_growth_mb``: RSS after all of it over RSS before the dialog opened (and
  ``…_at_open_mb``: once its first screen is drawn: the dialog, Qt's caches, the second
  connection; the rest is the pages, cells and elided lines kept, each bounded).
"""

from __future__ import annotations

import gc
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QEventLoop, QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication

from sandbox_app.ui.results.matrix_dialog import MatrixDialog, open_stored
from sandbox_app.ui.window.app import GIL_SWITCH_INTERVAL_S
from tests.heartbeat import Heartbeat
from tests.matrix_data import big_evaluation

CASES, ANSWER_CHARS = 10_000, 240


def rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))] if ordered else 0.0


class Paints(QObject):
    """Counts the paint events of the table (what was drawn, not just asked for), and when
    the first with cells in it came."""

    def __init__(self, dialog: MatrixDialog) -> None:
        super().__init__()
        self.count = 0
        self.first_cells: float | None = None
        self._model = dialog.model
        dialog.table.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.count += 1
            if self.first_cells is None and self._model.rowCount():
                self.first_cells = time.perf_counter()
        return False


def wait_until(app: QApplication, done: Callable[[], bool], seconds: float = 60.0) -> None:
    """The loop run (waiting for events, never spinning) until ``done()``."""
    deadline = time.perf_counter() + seconds
    while not done():
        if time.perf_counter() > deadline:
            raise TimeoutError("the matrix did not get there in time")
        # Sleeps until an event comes (the heartbeat's every 5 ms at the latest): a loop that
        # spun would hold the GIL the matrix's reading thread needs.
        app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)


def paced(app: QApplication, steps: list[Callable[[], bool]], every_ms: int) -> None:
    """Each step on a timer every ``every_ms`` (a step that returns False is done with)."""
    timer = QTimer(interval=every_ms)

    def tick() -> None:
        while steps and not steps[0]():
            steps.pop(0)

    timer.timeout.connect(tick)
    timer.start()
    wait_until(app, lambda: not steps, 600)
    timer.stop()


def measure(folder: Path, cases: int = CASES, repeats: int = 1) -> dict[str, float]:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)  # as the app's loop has it (prepare_loop)
    store, evaluation = big_evaluation(folder / f"m{repeats}.sqlite3", cases, repeats, ANSWER_CHARS)
    results = store.read("SELECT COUNT(*) FROM results")[0][0]
    gc.collect()
    before = rss_mb()
    beat = Heartbeat(interval_ms=5)
    started = time.perf_counter()
    dialog = open_stored(store, evaluation, {}, None)
    dialog.resize(1280, 800)
    paints = Paints(dialog)
    wait_until(app, lambda: paints.first_cells is not None)  # the first screen of cells
    opened = (float(paints.first_cells or 0) - started) * 1000
    wait_until(app, lambda: dialog.rates is not None)
    open_lags = beat.lags
    beat.stop()
    at_open = rss_mb() - before

    bar = dialog.table.verticalScrollBar()
    beat = Heartbeat(interval_ms=5)
    frames = paints.count

    def page_down() -> bool:
        bar.setValue(bar.value() + bar.pageStep())
        return bar.value() < bar.maximum()

    cpu = time.thread_time()
    paced(app, [page_down], 16)
    wait_until(app, lambda: paints.count > frames)
    scroll_lags, pages = beat.lags, paints.count - frames
    cpu = (time.thread_time() - cpu) * 1000
    beat.stop()
    last = dialog.model.headerData(dialog.model.rowCount() - 1, Qt.Orientation.Vertical)

    beat = Heartbeat(interval_ms=5)
    answers: list[float] = []  # the last key (or click) → its cases shown, each filter
    changed = [time.perf_counter()]

    def change(do: Callable[[], object]) -> Callable[[], bool]:
        def step() -> bool:
            do()
            changed[0] = time.perf_counter()
            return False

        return step

    def typed(text: str) -> list[Callable[[], bool]]:
        keys = [change(lambda at=i: dialog.filter.setText(text[:at])) for i in range(len(text))]
        return [*keys[1:], change(lambda: dialog.filter.setText(text)), awaited]

    def awaited() -> bool:
        if dialog.filtering():
            return True
        answers.append((time.perf_counter() - changed[0]) * 1000)
        return False

    counts: list[str] = []
    steps = [
        *typed("question 99"),
        lambda: counts.append(dialog.count.text()) or False,
        change(dialog.filter.clear),
        awaited,
        change(lambda: dialog.only_differing.setChecked(True)),
        awaited,
        change(lambda: dialog.only_differing.setChecked(False)),
        awaited,
        *typed(f"answer {cases // 2} from"),  # in the answers: one case
        change(dialog.filter.clear),
        awaited,
    ]
    paced(app, steps, 120)
    filter_lags = beat.lags
    beat.stop()
    gc.collect()
    grown = rss_mb() - before
    dialog.close()
    store.close()
    return {
        "matrix_cases": float(cases),
        "matrix_repeats": float(repeats),
        "matrix_results": float(results),
        "matrix_open_ms": opened,
        "matrix_open_lag_max_ms": max(open_lags, default=0.0) * 1000,
        "matrix_scroll_lag_p99_ms": percentile(scroll_lags, 99) * 1000,
        "matrix_scroll_lag_max_ms": max(scroll_lags, default=0.0) * 1000,
        "matrix_scroll_pages_painted": float(pages),
        "matrix_scroll_cpu_ms_per_page": cpu / max(1, pages),
        "matrix_last_case_shown": float(last == str(cases)),
        "matrix_filter_lag_p99_ms": percentile(filter_lags, 99) * 1000,
        "matrix_filter_lag_max_ms": max(filter_lags, default=0.0) * 1000,
        "matrix_filter_shown_ms_max": max(answers, default=0.0),
        "matrix_filter_question_99_cases": float(counts[0].split()[0].replace(",", "")),
        "matrix_rss_growth_mb": grown,
        "matrix_rss_growth_at_open_mb": at_open,
    }


def matrix_figures(quick: bool = False) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        return measure(Path(tmp), CASES // 10 if quick else CASES)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        for repeats in (1, 5):
            print(json.dumps(measure(Path(tmp), CASES, repeats), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
