"""A long trace opens at once and a huge observation is folded (issue 40): File → Open trace…
of a generated 30,000-step OTLP trace (tests/long_trace.py) shows its first screen while the
file is still being read, Find in trace counts and finds the right step, Go to step puts the
step at the top; a 10 MB tool observation is one page and a fold row saying its size, shown a
page more at a click, and Copy trace and the exports keep it whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from sandbox_app.core.results.exports import RUN_FORMATS, RunExport
from sandbox_app.core.results.trace_rows import PAGE_CHARS
from sandbox_app.core.running.recording import recording_of
from sandbox_app.ui.common.theme import LIGHT
from sandbox_app.ui.window.main_window import MainWindow
from sandbox_app.ui.window.recordings import SPEEDS
from tests.long_trace import observation, write_trace

STEPS = 30_000


@pytest.fixture(scope="module")
def long_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_trace(tmp_path_factory.mktemp("long") / "crawl.jsonl", STEPS)


def _top_row(window: MainWindow) -> int:
    rows = window.run_pane.traces.rows
    return rows.indexAt(QPoint(2, 2)).row()


@pytest.mark.slow
def test_a_30000_step_trace_shows_its_first_screen_before_it_is_read(
    qtbot: QtBot, window: MainWindow, long_file: Path
) -> None:
    window.resize(1200, 800)
    window.show()
    pane = window.run_pane
    seen: list[bool] = []  # for each batch of rows shown: was the file read to its end?
    pane.traces.rows.model_.rowsInserted.connect(
        lambda *_: seen.append(window.traces.reading is not None and window.traces.reading.done)
    )
    assert window.traces.open(long_file)
    stream = window.traces.reading
    assert stream is not None  # a long trace: streamed, not read whole first
    qtbot.waitUntil(lambda: len(seen) > 0, timeout=10_000)
    assert seen[0] is False  # the first rows were on screen while the file was being read
    assert pane.traces.long
    first = pane.traces.rows.rows.step_row(1)
    assert first is not None
    assert pane.traces.rows.rows.text(first) == "── Step 1 ──"
    assert _top_row(window) == 0  # the first screen is the trace's start (its notice, step 1)

    qtbot.waitUntil(lambda: pane.shown_record() is not None and pane.shown_record().done,
                    timeout=120_000)  # fmt: skip
    assert stream.done
    assert seen[-1] is True
    record = pane.shown_record()
    assert record is not None
    assert record.finished is not None
    assert record.finished.answer == "There are 1,234 broken links."
    assert pane.traces.rows.step_count() == STEPS + 1

    # Find in trace: every observation says "fetched" once, and one says "result 29999:".
    finder = pane.traces.finder
    window.run_tabs.find_in_trace()
    assert finder.isVisible()
    with qtbot.waitSignal(finder.searched, timeout=60_000):
        finder.field.setText("fetched")
    assert len(finder.matches) == STEPS
    assert finder.count.text() == f"1 of {STEPS:,}"
    with qtbot.waitSignal(finder.searched, timeout=60_000):
        finder.field.setText("RESULT 29999:")  # any case
    assert finder.count.text() == "1 of 1"
    found = finder.matches[0]
    assert pane.traces.rows.step_at_row(found) == 29_999
    assert "result 29999:" in pane.traces.rows.rows.text(found)
    assert pane.traces.rows.currentIndex().row() == found  # shown, and selected

    # Go to step: its separator at the top of the view.
    assert finder.go_to_step(12_345)
    top = _top_row(window)
    assert pane.traces.rows.rows.text(top) == "── Step 12345 ──"
    assert pane.traces.rows.step_at_row(top) == 12_345


def test_a_10_mb_observation_is_folded_with_its_size_and_exported_whole(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    huge = 10_000_000 - len("Observation: ")
    path = write_trace(tmp_path / "huge.jsonl", 3, huge_step=2, huge_bytes=huge)
    window.recordings.set_speed(dict(SPEEDS)["At once"])
    assert window.traces.open(path)
    pane = window.run_pane
    qtbot.waitUntil(lambda: pane.shown_record() is not None and pane.shown_record().done)
    pane.traces.flush_all()
    assert pane.traces.long  # drawn as rows once the huge piece came
    rows = pane.traces.rows.rows
    texts = [rows.text(i) for i in range(rows.count)]
    fold = next(i for i, t in enumerate(texts) if t.startswith("⋯"))
    assert texts[fold] == "⋯ observation 10.0 MB — show more (65.5 KB shown)"
    assert rows.count < 2 * PAGE_CHARS // 160  # one page of it laid out, never the whole
    assert "result 1:" in "\n".join(texts)
    assert "result 3:" in "\n".join(texts)

    view = pane.traces.rows
    view.scrollTo(view.model_.index(fold))
    before = rows.count
    qtbot.mouseClick(
        view.viewport(),
        Qt.MouseButton.LeftButton,
        pos=view.visualRect(view.model_.index(fold)).center(),
    )
    assert rows.count > before  # a page more, the fold row under it
    assert (
        rows.text(fold + rows.count - before)
        == "⋯ observation 10.0 MB — show more (131.1 KB shown)"
    )

    whole = observation(2, huge)
    window.copy_trace()
    assert whole in QApplication.clipboard().text()
    record = pane.shown_record()
    lane = pane.recorded()
    assert record is not None
    assert record.scenario is not None
    assert lane is not None
    run = RunExport(record, LIGHT, recording_of(record.scenario, [lane]))
    for kind in ("md", "html", "json"):
        assert whole in RUN_FORMATS.exporter(kind).text(run), kind


def test_a_long_recording_cut_short_plays_what_was_read_and_says_where_it_ends(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    from sandbox_app.core.otel.otel_import import open_trace
    from sandbox_app.core.running.recording import recording_text

    whole = recording_text(open_trace(write_trace(tmp_path / "run.jsonl", 1_500)).recording)
    path = tmp_path / "cut.json"
    path.write_bytes(whole.encode("utf-8")[: len(whole) * 7 // 10])  # a copy stopped part way
    window.recordings.set_speed(0.0)
    assert window.recordings.play(path)  # it opens: its first events are whole
    pane = window.run_pane
    qtbot.waitUntil(lambda: pane.shown_record() is not None and pane.shown_record().done,
                    timeout=60_000)  # fmt: skip
    finished = pane.shown_record().finished
    assert finished is not None
    assert finished.status == "failed"
    assert finished.reason.startswith("cut.json is not valid JSON: ")
    assert "\n" not in finished.reason
    rows = pane.traces.rows.rows
    shown = rows.steps  # the steps read before the cut, kept on screen
    assert 1_000 <= shown < 1_500
    assert all(rows.step_row(k) is not None for k in (1, shown // 2, shown))
    assert pane.step_label.text().startswith(f"Failed at step {shown} of ")
