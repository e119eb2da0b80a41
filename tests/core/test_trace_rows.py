"""A long trace as rows (core/results/trace_rows.py), and the JSON nesting every file the
app reads is measured by (core/untrusted/file_reader.nesting), now at C speed."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sandbox_app.core.results.presentation import Role
from sandbox_app.core.results.trace_rows import (
    BLOCK_ROWS,
    FOLD_CHARS,
    PAGE_CHARS,
    ROW_CHARS,
    RowTexts,
    TraceRows,
)
from sandbox_app.core.results.trace_text import lines
from sandbox_app.core.running import events as ev
from sandbox_app.core.running.metrics import RunMetrics
from sandbox_app.core.untrusted.file_reader import nesting


def _run(steps: int, huge_at: int = 0, huge: int = 0) -> list[ev.Event]:
    events: list[ev.Event] = [ev.RunStarted("system", "question", steps, "trace", "m")]
    for k in range(1, steps + 1):
        text = f"result {k}" + (" " + "x" * huge if k == huge_at else "")
        events += [
            ev.StepStarted(k),
            ev.TokenDelta(k, f"Thought: step {k}\nAction: look[{k}]"),
            ev.ActionParsed(k, "look", str(k)),
            ev.Observation(k, "look", text, False, f"Observation: {text}"),
        ]
    return [*events, ev.RunFinished("answered", "", "done", RunMetrics())]


def test_rows_say_what_copy_trace_says_each_styled_as_the_window_styles_it() -> None:
    events = _run(3)
    rows = TraceRows()
    rows.add(events[:5])  # in two batches, as frames deliver them
    rows.add(events[5:])
    said = [(rows.text(i), rows.role(i)) for i in range(rows.count)]
    copied = lines(events, marks=False)
    assert [text for text, _ in said] == [text for text, _ in copied]
    assert [r for r in said if r[0]] == [r for r in copied if r[0]]  # a blank row: no style
    assert rows.role(1) is Role.THOUGHT
    assert rows.role(2) is Role.ACTION
    assert rows.text(rows.step_row(2) or 0) == "── Step 2 ──"
    assert rows.steps == 3


def test_a_long_line_goes_on_over_rows_of_at_most_row_chars() -> None:
    rows = TraceRows()
    long = "Thought: " + "y" * (3 * ROW_CHARS)
    rows.add([ev.StepStarted(1), ev.TokenDelta(1, long[:100]), ev.TokenDelta(1, long[100:])])
    body = [rows.text(i) for i in range(1, rows.count)]
    assert "".join(body) == long
    assert all(len(row) <= ROW_CHARS for row in body)
    assert {rows.role(i) for i in range(1, rows.count)} == {Role.THOUGHT}


def test_a_huge_observation_is_one_page_and_a_fold_row_until_shown_page_by_page() -> None:
    huge = 3 * PAGE_CHARS + 10
    rows = TraceRows()
    rows.add(_run(3, huge_at=2, huge=huge))
    folds = list(rows.folds)
    assert len(folds) == 1
    fold = folds[0]
    assert rows.text(fold) == "⋯ observation 196.6 KB — show more (65.5 KB shown)"
    assert rows.count < FOLD_CHARS // ROW_CHARS + 20  # a page of rows, never the whole
    step_3 = rows.step_row(3)
    assert step_3 is not None
    added = rows.show_more(fold)
    assert added == PAGE_CHARS // ROW_CHARS + 1  # the page's rows (its last one part-full)
    assert rows.step_row(3) == step_3 + added  # what follows moved down with it
    assert rows.text(rows.step_row(3) or 0) == "── Step 3 ──"
    while rows.folds:
        rows.show_more(next(iter(rows.folds)))
    start = rows.step_row(2) or 0
    shown = "".join(rows.text(i) for i in range(start + 3, (rows.step_row(3) or 0)))
    assert shown == f"Observation: result 2 {'x' * huge}"  # whole once every page is shown
    assert rows.show_more(start) == 0  # not a fold: nothing


def test_find_counts_every_match_in_any_case_and_says_its_row() -> None:
    rows = TraceRows()
    rows.add(_run(12))
    everywhere = rows.find("RESULT", 0, rows.count)
    assert len(everywhere) == 12
    found = rows.find("result 11", 0, rows.count)
    assert [rows.text(r) for r in found] == ["Observation: result 11"]
    halves = rows.find("result", 0, 20) + rows.find("result", 20, rows.count)
    assert halves == everywhere  # searched a slice at a time, the same
    assert rows.find("", 0, rows.count) == []


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab"\\[]{}\n'),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=20,
)


@given(JSON)
def test_nesting_is_the_depth_of_any_json_brackets_in_strings_not_counted(value: Any) -> None:
    assert nesting(json.dumps(value)) == _depth(value)


def test_nesting_of_a_string_never_closed_stops_at_it() -> None:
    assert nesting('[[{"a": "[[[') == 3
    assert nesting('["\\\\", [[1]]]') == 3  # an escaped backslash ends nothing


def test_a_5_mb_reply_is_folded_as_a_reply_with_its_size() -> None:
    rows = TraceRows()
    reply = "Thought: " + "long " * 1_000_000 + "\nAction: look[1]"
    rows.add([ev.StepStarted(1), ev.TokenDelta(1, reply)])
    fold = next(iter(rows.folds))
    assert rows.text(fold) == "⋯ reply 5.0 MB — show more (65.5 KB shown)"
    assert rows.role(1) is Role.THOUGHT  # its first page styled as the window styles it
    assert rows.count < PAGE_CHARS // ROW_CHARS + 5


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["append", "last", "set", "insert", "replace"]),
            st.integers(0, 10**6),
            st.lists(st.text(max_size=5), max_size=3),
        ),
        max_size=60,
    ),
    st.integers(0, 3 * BLOCK_ROWS),
)
def test_rows_kept_in_blocks_read_and_change_as_a_list(
    changes: list[tuple[str, int, list[str]]], start: int
) -> None:
    texts, kept = RowTexts(), []
    for i in range(start):  # past a block or two: the changes land in blocks and after them
        texts.append(f"row {i}")
        kept.append(f"row {i}")
    for how, at, new in changes:
        row = at % len(kept) if kept else 0
        if how == "append" or not kept:
            texts.append(new[0] if new else "")
            kept.append(new[0] if new else "")
        elif how == "last":
            texts[-1] = kept[-1] = kept[-1] + "+"
        elif how == "set":
            texts[row] = kept[row] = "set"
        elif how == "insert":  # Show more: a page's rows in front of the fold row
            texts.replace(row, row, new)
            kept[row:row] = new
        else:  # the fold's last page: its row becomes the page's rows
            texts.replace(row, row + 1, new)
            kept[row : row + 1] = new
    assert len(texts) == len(kept)
    assert [texts[i] for i in range(len(kept))] == kept
    assert list(texts.rows(1, len(kept) + 5)) == kept[1:]
