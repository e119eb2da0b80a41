"""The model's thinking in the trace: live under a counting header, folded once it answers."""

from __future__ import annotations

import re
import time
from dataclasses import replace

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextBlock, QTextCharFormat
from pytestqt.qtbot import QtBot

from sandbox_app.core.running.events import (
    Event,
    ReasoningDelta,
    RunFinished,
    StepFinished,
    StepStarted,
    ThinkingReclassified,
    TokenDelta,
)
from sandbox_app.core.running.metrics import RunMetrics, StepMetrics
from sandbox_app.ui.common.theme import styles_for
from sandbox_app.ui.trace import trace_view
from sandbox_app.ui.trace.highlighter import Role
from sandbox_app.ui.trace.thinking_regions import HEADER_REDRAW_S, ThinkingRegions
from sandbox_app.ui.trace.trace_view import TraceView
from sandbox_app.ui.window.main_window import MainWindow

THINKING = "The user wants the price. Thought: maybe search first.\nAction: search[price]\n" * 3


@pytest.fixture
def view(qtbot: QtBot) -> TraceView:
    trace = TraceView()
    qtbot.addWidget(trace)
    trace.resize(700, 400)
    trace.show()
    return trace


def feed(view: TraceView, *events: Event) -> None:
    for event in events:
        view.show_event(event)
    view.flush_all()


def metrics(step: int, tokens: int, seconds: float, estimated: bool = False) -> StepMetrics:
    return StepMetrics(
        step, 0.1, 4.0, 100, tokens + 20, False, reasoning_tokens=tokens,
        reasoning_estimated=estimated, thinking_s=seconds,
    )  # fmt: skip


def blocks(view: TraceView) -> list[QTextBlock]:
    out, block = [], view.document().firstBlock()
    while block.isValid():
        out.append(block)
        block = block.next()
    return out


def headers(view: TraceView) -> list[QTextBlock]:
    return [b for b in blocks(view) if view.role_of(b.blockNumber()) is Role.THINKING_HEADER]


def thinking_blocks(view: TraceView) -> list[QTextBlock]:
    return [b for b in blocks(view) if view.role_of(b.blockNumber()) is Role.THINKING]


def shown(block: QTextBlock) -> bool:
    return block.isVisible() and block.lineCount() > 0


def first_format(block: QTextBlock) -> QTextCharFormat:
    formats = block.layout().formats()  # kept: the formats die with the list
    return QTextCharFormat(formats[0].format)


def colour(block: QTextBlock) -> str:
    return first_format(block).foreground().color().name()


def seconds_on(header: QTextBlock) -> float:
    found = re.search(r"([\d.]+) s", header.text())
    assert found, header.text()
    return float(found.group(1))


def click(qtbot: QtBot, view: TraceView, block: QTextBlock) -> None:
    rect = view.blockBoundingGeometry(block).translated(view.contentOffset())
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center().toPoint())


def test_thinking_streams_under_a_header_that_counts_seconds_and_tokens(
    qtbot: QtBot, view: TraceView
) -> None:
    feed(view, StepStarted(1), ReasoningDelta(1, "a" * 1_000), ReasoningDelta(1, "b" * 640))
    [header] = headers(view)
    assert header.blockNumber() == (view.step_block(1) or 0) + 1
    assert re.fullmatch(r"▾ Thinking… \d+\.\d s · ~410 tokens", header.text())
    assert all(shown(b) for b in thinking_blocks(view))
    # No text arrives, yet the seconds count up (a timer while the region is live).
    qtbot.waitUntil(lambda: seconds_on(headers(view)[0]) >= 0.3, timeout=3000)
    feed(view, ReasoningDelta(1, "c" * 400))
    qtbot.waitUntil(lambda: "~510 tokens" in headers(view)[0].text(), timeout=2000)


def test_the_live_header_is_redrawn_a_few_times_a_second_not_per_token(
    qtbot: QtBot, view: TraceView, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[str] = []
    draw = ThinkingRegions.show_header
    monkeypatch.setattr(
        ThinkingRegions, "show_header", lambda self, r: (writes.append("w"), draw(self, r))
    )
    started = time.perf_counter()
    for _ in range(300):  # 300 frames of 20 tokens
        for _ in range(20):
            view.show_event(ReasoningDelta(1, "word "))
        view.flush()
    frames_worth = (time.perf_counter() - started) / HEADER_REDRAW_S
    assert len(writes) <= frames_worth + 2
    qtbot.waitUntil(lambda: "~7,500 tokens" in headers(view)[0].text(), timeout=2000)


def test_the_region_folds_to_its_header_when_the_answer_starts(view: TraceView) -> None:
    feed(view, StepStarted(1), ReasoningDelta(1, THINKING), TokenDelta(1, "Answer: 42"))
    [header] = headers(view)
    assert re.fullmatch(r"▸ Thought for \d+\.\d s · ~\d+ tokens — click to show", header.text())
    assert thinking_blocks(view)
    assert not any(b.isVisible() or b.lineCount() for b in thinking_blocks(view))
    assert view.document().lastBlock().text() == "Answer: 42"
    assert shown(view.document().lastBlock())
    # Copy and export keep the thinking, folded or not.
    assert THINKING.rstrip("\n") in view.plain_text()


def test_the_steps_metrics_give_the_exact_count_and_time(view: TraceView) -> None:
    feed(view, StepStarted(1), ReasoningDelta(1, THINKING), TokenDelta(1, "Answer: 42"))
    feed(view, StepFinished(1, metrics(1, 410, 3.24)))
    assert headers(view)[0].text() == "▸ Thought for 3.2 s · 410 tokens — click to show"
    feed(
        view, StepStarted(2), ReasoningDelta(2, "hmm"), StepFinished(2, metrics(2, 1234, 1.0, True))
    )
    assert headers(view)[1].text() == "▸ Thought for 1.0 s · ~1,234 tokens — click to show"


def test_a_reply_that_only_thinks_folds_when_the_step_or_run_ends(view: TraceView) -> None:
    feed(view, StepStarted(1), ReasoningDelta(1, THINKING))
    assert headers(view)[0].text().startswith("▾ Thinking…")
    feed(view, RunFinished("answered", "", "42", RunMetrics()))
    assert headers(view)[0].text().startswith("▸ Thought for")
    assert not any(shown(b) for b in thinking_blocks(view))


def test_clicking_the_header_unfolds_and_folds_again(qtbot: QtBot, view: TraceView) -> None:
    feed(view, StepStarted(1), ReasoningDelta(1, THINKING), TokenDelta(1, "Answer: 42"))
    feed(view, StepFinished(1, metrics(1, 40, 2.0)))
    click(qtbot, view, headers(view)[0])
    qtbot.waitUntil(lambda: all(shown(b) for b in thinking_blocks(view)), timeout=2000)
    assert headers(view)[0].text() == "▾ Thought for 2.0 s · 40 tokens — click to hide"
    click(qtbot, view, headers(view)[0])
    qtbot.waitUntil(lambda: not any(shown(b) for b in thinking_blocks(view)), timeout=2000)
    assert headers(view)[0].text().startswith("▸ Thought for 2.0 s")


def test_the_public_toggle_ignores_a_live_region_and_other_lines(view: TraceView) -> None:
    feed(view, StepStarted(1), ReasoningDelta(1, THINKING))
    header = headers(view)[0].blockNumber()
    assert not view.toggle_thinking(header)  # live: it stays open
    assert not view.toggle_thinking(view.step_block(1) or 0)
    feed(view, TokenDelta(1, "Answer: 42"))
    assert view.toggle_thinking(header)
    assert all(shown(b) for b in thinking_blocks(view))


def test_show_thinking_unfolds_every_region_and_keeps_new_ones_open(view: TraceView) -> None:
    for step in (1, 2):
        feed(view, StepStarted(step), ReasoningDelta(step, THINKING), TokenDelta(step, "Answer"))
    assert not any(shown(b) for b in thinking_blocks(view))
    view.set_show_thinking(True)
    assert all(shown(b) for b in thinking_blocks(view))
    assert all(h.text().startswith("▾ Thought for") for h in headers(view))
    feed(view, StepStarted(3), ReasoningDelta(3, THINKING), TokenDelta(3, "Answer"))
    assert len(headers(view)) == 3
    assert all(shown(b) for b in thinking_blocks(view))
    view.set_show_thinking(False)
    assert not any(shown(b) for b in thinking_blocks(view))
    assert all(h.text().startswith("▸ Thought for") for h in headers(view))


def test_thinking_never_takes_a_label_colour(view: TraceView) -> None:
    view.set_show_thinking(True)
    feed(view, StepStarted(1), ReasoningDelta(1, THINKING), TokenDelta(1, "Thought: now\n"))
    styles = styles_for(view.palette())
    for block in thinking_blocks(view):
        if block.text():
            assert colour(block) == styles["thinking"].color, block.text()
            assert first_format(block).fontItalic()
    assert colour(headers(view)[0]) == styles["thinking_header"].color
    assert colour(view.document().lastBlock()) == styles["thought"].color  # its own text


def test_folding_in_the_frame_that_wrote_the_text_keeps_every_colour(view: TraceView) -> None:
    # One frame writes the step, its thinking and its answer, and folds the thinking: no
    # block may lose its highlighting to the fold (a layout told mid-edit drops the edit's).
    for event in (StepStarted(1), ReasoningDelta(1, THINKING), TokenDelta(1, "Thought: x\n")):
        view.show_event(event)
    feed(view, StepFinished(1, metrics(1, 40, 1.0)))
    assert all(b.layout().formats() for b in blocks(view) if b.text())
    view.set_show_thinking(True)
    styles = styles_for(view.palette())
    assert {colour(b) for b in thinking_blocks(view)} == {styles["thinking"].color}
    assert colour(view.document().firstBlock()) == styles["step"].color


def test_no_blank_lines_at_the_top_of_a_region_or_under_it(view: TraceView) -> None:
    # As a <think> block usually comes: "<think>\nOkay…\n</think>\n\nThought: …"
    feed(view, StepStarted(1), ReasoningDelta(1, "\n"), ReasoningDelta(1, "\nOkay,\n\nso\n"))
    feed(view, TokenDelta(1, "\n"), TokenDelta(1, "\nThought: go"))
    assert [b.text() for b in thinking_blocks(view)] == ["Okay,", "", "so"]
    assert view.plain_text().split("\n")[1:] == [
        headers(view)[0].text(),
        "Okay,",
        "",
        "so",
        "Thought: go",
    ]


def test_reasoning_resumed_after_content_is_a_new_region(view: TraceView) -> None:
    feed(view, StepStarted(1), ReasoningDelta(1, "first"), TokenDelta(1, "Thought: a\n"))
    feed(view, ReasoningDelta(1, "second"), TokenDelta(1, "Answer: b"))
    assert len(headers(view)) == 2
    assert [b.text() for b in thinking_blocks(view)] == ["first", "second"]
    assert view.plain_text().splitlines()[-1] == "Answer: b"


def test_reclassified_model_text_becomes_a_folded_thinking_region(view: TraceView) -> None:
    long_line = "I think " * 300  # 2,400 characters: three blocks
    feed(view, StepStarted(1), TokenDelta(1, "Okay, the user asks.\n"), TokenDelta(1, long_line))
    view.show_event(TokenDelta(1, "done."))  # still queued when the news comes
    text = "Okay, the user asks.\n" + long_line + "done."
    feed(view, ThinkingReclassified(1, text))
    assert not [b for b in blocks(view) if view.role_of(b.blockNumber()) is Role.MODEL]
    assert headers(view)[0].text().startswith("▾ Thinking…")
    feed(view, TokenDelta(1, "Answer: 42"))
    assert headers(view)[0].text().startswith("▸ Thought for")
    assert not any(shown(b) for b in thinking_blocks(view))
    lines = view.plain_text().split("\n")
    assert lines[0] == "── Step 1 ──"
    assert lines[2:] == [*text.split("\n"), "Answer: 42"]
    assert view.role_of(view.document().blockCount() - 1) is Role.MODEL


def test_reclassified_text_with_nothing_written_yet(view: TraceView) -> None:
    view.show_event(StepStarted(1))
    view.show_event(TokenDelta(1, "hidden plan"))
    feed(view, ThinkingReclassified(1, "hidden plan"), TokenDelta(1, "Answer: 1"))
    assert view.plain_text().split("\n")[2:] == ["hidden plan", "Answer: 1"]
    assert [b.text() for b in thinking_blocks(view)] == ["hidden plan"]


def test_one_long_thinking_line_is_split_and_copied_whole(view: TraceView) -> None:
    line = "z" * 5_500
    for i in range(0, len(line), 9):
        view.show_event(ReasoningDelta(1, line[i : i + 9]))
    feed(view, TokenDelta(1, "Answer: z"))
    assert all(len(b.text()) <= 1000 for b in blocks(view))
    assert len(thinking_blocks(view)) == 6
    assert view.plain_text().split("\n")[1:] == [line, "Answer: z"]


@pytest.fixture
def small_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_view, "MAX_TRACE_CHARS", 5_000)
    monkeypatch.setattr(trace_view, "TRIM_TO_CHARS", 3_000)


@pytest.mark.usefixtures("small_limit")
def test_trimming_keeps_the_regions_it_leaves_whole_and_folded(view: TraceView) -> None:
    for step in range(1, 31):
        feed(view, StepStarted(step), ReasoningDelta(step, f"think {step} " + "t" * 120))
        feed(view, TokenDelta(step, f"Answer: {step}"), StepFinished(step, metrics(step, 32, 0.5)))
    assert view.trimmed_chars > 0
    assert view.step_block(1) is None
    for header in headers(view):
        assert header.text() == "▸ Thought for 0.5 s · 32 tokens — click to show"
        body = header.next()
        assert view.role_of(body.blockNumber()) is Role.THINKING
        assert not shown(body)
        assert shown(body.next())  # the answer
    last = view.document().findBlockByNumber(view.step_block(30) or -1)
    assert last.next().text().startswith("▸ Thought")
    assert view.toggle_thinking(last.next().blockNumber())
    assert last.next().next().text() == "think 30 " + "t" * 120
    assert shown(last.next().next())


@pytest.mark.usefixtures("small_limit")
def test_a_live_region_longer_than_the_trace_keeps_its_header_on_top(view: TraceView) -> None:
    feed(view, StepStarted(1))
    for i in range(60):
        feed(view, ReasoningDelta(1, f"line {i} " + "r" * 200 + "\n"))
    assert view.trimmed_chars > 0
    first = view.document().firstBlock()
    assert view.role_of(0) is Role.THINKING_HEADER
    assert first.text().startswith("▾ Thinking…")
    assert view.document().lastBlock().text().startswith("line 59 ")
    feed(view, TokenDelta(1, "Answer: done"))
    assert first.text().startswith("▸ Thought for")
    assert not any(shown(b) for b in thinking_blocks(view))
    assert view.plain_text().split("\n")[-1] == "Answer: done"


def test_clear_trace_forgets_every_region(view: TraceView) -> None:
    feed(view, StepStarted(1), ReasoningDelta(1, THINKING))
    view.clear_trace()
    assert view.thinking.regions == []
    assert view.thinking.live is None
    feed(view, StepStarted(1), TokenDelta(1, "Answer: 1"))
    assert view.plain_text() == "── Step 1 ──\nAnswer: 1"


def test_scrolling_to_a_step_past_folded_thinking(view: TraceView) -> None:
    for step in range(1, 21):
        feed(view, StepStarted(step), ReasoningDelta(step, THINKING * 3), TokenDelta(step, "A"))
    assert view.scroll_to_step(12)
    assert view.firstVisibleBlock().blockNumber() == view.step_block(12)


def test_view_menu_shows_thinking_in_the_run_tab_and_every_lane(
    window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(TraceView, "show_thinking_default", False)
    titles = [a.text() for a in window.menuBar().actions()]
    assert titles.index("&View") == titles.index("&Edit") + 1
    lane_trace = window.compare.lanes[0].trace
    for trace in (window.trace, lane_trace):
        feed(trace, StepStarted(1), ReasoningDelta(1, THINKING), TokenDelta(1, "Answer: 1"))
        assert not any(shown(b) for b in thinking_blocks(trace))
    window.show_thinking_action.trigger()
    for trace in (window.trace, lane_trace):
        assert all(shown(b) for b in thinking_blocks(trace))
    assert window.compare.add_lane() is not None
    assert window.compare.lanes[-1].trace.thinking.show_all
    window.show_thinking_action.trigger()
    assert not any(shown(b) for b in thinking_blocks(window.trace))


def test_a_scripted_reply_that_thinks_shows_its_thinking_folded(
    qtbot: QtBot, window: MainWindow
) -> None:
    # End to end through the engine: a <think> block, and one the template opened itself.
    for reply, answer in [
        ("<think>It is simple: answer at once.</think>Thought: easy.\nAnswer: 42", "42"),
        ("It is simple: answer at once.</think>Thought: easy.\nAnswer: 43", "43"),
    ]:
        scenario = window.scenario
        script = replace(scenario.script, replies=(reply,), tokens_per_second=400)
        window.set_scenario(scenario.with_changes(script=script))
        window.start_run()
        qtbot.waitUntil(lambda a=answer: window.answer_label.text() == a, timeout=10000)
        trace = window.trace
        [header] = headers(trace)
        assert header.text().startswith("▸ Thought for")
        assert [b.text() for b in thinking_blocks(trace)] == ["It is simple: answer at once."]
        assert not any(shown(b) for b in thinking_blocks(trace))
        assert trace.plain_text().split("\n")[-2:] == ["Thought: easy.", f"Answer: {answer}"]
