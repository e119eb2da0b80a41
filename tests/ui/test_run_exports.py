"""Export a run: Markdown (a golden file), a self-contained HTML page (well formed, nothing
fetched, every role's colour), a recording, a PNG of the trace; copy one step as text."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from PySide6.QtGui import QImage
from pytestqt.qtbot import QtBot

from sandbox_app.core.results.run_export import step_text
from sandbox_app.core.running.recording import load_recording
from sandbox_app.ui.common.theme import LIGHT
from sandbox_app.ui.window.main_window import MainWindow
from sandbox_app.ui.window.run_exports import export_run
from tests.ui.test_window import fast

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden" / "thinking_model_run.md"
VOID = {"meta", "br", "img", "link", "input", "hr"}


def finished_run(qtbot: QtBot, window: MainWindow) -> None:
    window.set_scenario(fast("thinking_model", tokens_per_second=0))
    window.start_run()
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=20000)


def without_times(text: str) -> str:
    return re.sub(r"\d+(\.\d+)? (ms|s)\b", "<time>", text)


class _Balance(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.classes: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.classes |= {v or "" for k, v in attrs if k == "class"}
        if tag not in VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.open, tag
        assert self.open[-1] == tag, (tag, self.open[-3:])
        self.open.pop()


def test_markdown_matches_the_golden_file(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    finished_run(qtbot, window)
    assert export_run(window, tmp_path / "run.md")
    written = without_times((tmp_path / "run.md").read_text(encoding="utf-8"))
    assert written == GOLDEN.read_text(encoding="utf-8")


def test_the_html_page_is_whole_and_fetches_nothing(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    finished_run(qtbot, window)
    assert export_run(window, tmp_path / "run.html")
    page = (tmp_path / "run.html").read_text(encoding="utf-8")
    checker = _Balance()
    checker.feed(page)
    checker.close()
    assert checker.open == []  # every element closed, in order
    for fetch in ("http://", "https://", "src=", "<script", "@import", "url(", "<link"):
        assert fetch not in page
    for role in ("thought", "action", "answer", "observation", "step", "thinking"):
        assert f".{role}{{color:{LIGHT[role].color};" in page
        assert role in checker.classes
    assert page.count("<details>") == 3  # each step's thinking, folded
    # Said once a block, in its summary: not again as the block's first line.
    assert page.count("Thinking (never acted on)") == 3
    # What produced the run: the model and its settings.
    record = window.run_pane.shown_record()
    assert record is not None
    s = record.settings
    assert f"<li>Model: {s.model or s.backend} " in page
    assert f"max steps {s.max_steps}" in page
    assert f"dialect {s.dialect}" in page
    assert "temperature " in page


def test_a_recording_and_a_png_of_the_trace(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    finished_run(qtbot, window)
    assert export_run(window, tmp_path / "run.json")
    assert len(load_recording(tmp_path / "run.json").lanes) == 1
    assert export_run(window, tmp_path / "trace.png")
    image = QImage(str(tmp_path / "trace.png"))
    assert image.width() > 100
    assert image.height() > 100
    assert longest_blank_band(image) < image.height() // 6  # cropped to what it shows
    assert not export_run(window, tmp_path / "run.txt")
    assert window.statusBar().currentMessage() == "⚠ run.txt: use .md, .html, .json or .png."


def longest_blank_band(image: QImage) -> int:
    """The tallest band of rows with nothing drawn but the background (its top left pixel)."""
    background = image.pixelColor(0, 0)
    longest = run = 0
    for y in range(image.height()):
        blank = all(image.pixelColor(x, y) == background for x in range(0, image.width(), 2))
        run = run + 1 if blank else 0
        longest = max(longest, run)
    return longest


def test_the_png_is_a_slide(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    """A title with the question, the model and the answer; large type; no window hints;
    no blank half (issue 22, item 10)."""
    finished_run(qtbot, window)
    assert export_run(window, tmp_path / "trace.png")
    image = QImage(str(tmp_path / "trace.png"))
    from sandbox_app.ui.window.run_exports import slide_document  # not in the old code

    record = window.run_pane.shown_record()
    assert record is not None
    document = slide_document(record)
    assert (image.width(), image.height()) == (
        round(document.textWidth()),
        round(document.size().height()),
    )
    text = document.toPlainText()
    title, subtitle = text.splitlines()[:2]
    assert title == record.settings.question
    assert record.settings.model in subtitle
    assert "Answer: $1,680 per year" in subtitle
    assert "click to" not in text
    assert "thinking: " in text  # each thinking block folded to one line that says so
    assert document.defaultFont().pointSizeF() >= 18
    # Cropped: the longest line reaches the right margin, the last line the bottom.
    assert longest_blank_band(image) < 3 * document.defaultFont().pointSizeF()
    assert image.width() < 1700


def test_copy_one_step(qtbot: QtBot, window: MainWindow) -> None:
    finished_run(qtbot, window)
    record = window.run_pane.shown_record()
    assert record is not None
    text = step_text(record, 2)
    assert text.startswith("── Step 2 ──\n")
    assert "Action: calculator[20 * 12 * 7]" in text
    assert "Step 3" not in text
