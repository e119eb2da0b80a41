"""The inline-thinking splitter: tags cut anywhere, pre-opened blocks, text that only looks
like a tag. Every case is also fed one character at a time: the split must not depend on
where the chunks break."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sandbox_app.core.react_format.thinking import RECLASSIFY, Piece, ThinkSplitter


def split(chunks: list[str], *, starts_inside: bool = False) -> list[Piece]:
    """The reply as the engine ends up reading it: a RECLASSIFY turns the content before it
    into reasoning (and stays in the list, to show it happened); neighbours of a kind join."""
    splitter = ThinkSplitter(starts_inside=starts_inside)
    pieces: list[Piece] = []
    for chunk in chunks:
        pieces += splitter.feed(chunk)
    pieces += splitter.finish()
    resolved: list[Piece] = []
    for kind, text in pieces:
        if kind == "reclassify":
            resolved = [RECLASSIFY] + [("reasoning", t) for k, t in resolved if k != "reclassify"]
            continue
        resolved.append((kind, text))
    merged: list[Piece] = []
    for kind, text in resolved:
        if merged and merged[-1][0] == kind:
            merged[-1] = (kind, merged[-1][1] + text)
        else:
            merged.append((kind, text))
    return merged


CASES: dict[str, tuple[str, list[Piece]]] = {
    "no thinking": ("Thought: x\nAction: s[q]", [("content", "Thought: x\nAction: s[q]")]),
    "think block then content": (
        "<think>maybe Action: s[wrong]\nObservation: guess</think>\n\nAction: s[right]",
        [
            ("reasoning", "maybe Action: s[wrong]\nObservation: guess"),
            ("content", "Action: s[right]"),
        ],
    ),
    "thinking tag": (
        "<thinking>hm</thinking>Answer: 2",
        [("reasoning", "hm"), ("content", "Answer: 2")],
    ),
    "upper-case tag": (
        "<THINK>hm</THINK>Answer: 2",
        [("reasoning", "hm"), ("content", "Answer: 2")],
    ),
    # A template that opens <think> itself (Qwen3, QwQ): the reply only closes it.
    "pre-opened block": (
        "Okay, the user asks\n</think>\n\nAnswer: 2",
        [RECLASSIFY, ("reasoning", "Okay, the user asks\n"), ("content", "Answer: 2")],
    ),
    "unclosed block": ("<think>still thinking", [("reasoning", "still thinking")]),
    "a comparison is not a tag": ("Answer: a < b and <b>", [("content", "Answer: a < b and <b>")]),
    "a tag fragment at the end is text": ("Answer: <thi", [("content", "Answer: <thi")]),
    "a stray closer after a block": (
        "<think>a</think>b</think>c",
        [("reasoning", "a"), ("content", "bc")],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_whole_and_character_by_character_give_the_same_split(name: str) -> None:
    text, expected = CASES[name]
    assert split([text]) == expected
    assert split(list(text)) == expected


def test_a_tag_cut_across_chunks_is_never_released_as_content() -> None:
    splitter = ThinkSplitter()
    assert splitter.feed("<thi") == []
    assert splitter.feed("nk>why") == [("reasoning", "why")]
    assert splitter.feed("</thi") == []
    assert splitter.feed("nk>Answer: 1") == [("content", "Answer: 1")]


def test_a_reply_known_to_start_inside_thinking_is_reasoning_until_it_closes() -> None:
    assert split(["first I", " think</think>Answer: 3"], starts_inside=True) == [
        ("reasoning", "first I think"),
        ("content", "Answer: 3"),
    ]


def test_the_pre_opened_close_reclassifies_only_once() -> None:
    # After the block closed, a second "</think>" is a stray tag, not another reclassify.
    assert split(["a</think>b</think>c"]) == [RECLASSIFY, ("reasoning", "a"), ("content", "bc")]


@given(
    thinking=st.text(alphabet="ab <>/\n:", max_size=30).filter(lambda t: "</" not in t),
    content=st.text(alphabet="ab <>:\n", max_size=30),
    cuts=st.lists(st.integers(min_value=1, max_value=5), max_size=20),
)
def test_any_chunking_gives_the_same_split(thinking: str, content: str, cuts: list[int]) -> None:
    text = f"<think>{thinking}</think>{content}"
    chunks, pos = [], 0
    for size in cuts:
        chunks.append(text[pos : pos + size])
        pos += size
    chunks.append(text[pos:])
    assert split(chunks) == split([text])
