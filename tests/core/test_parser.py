"""The ReAct parser: worked examples per dialect, one test per rule, and properties over any
text."""

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sandbox_app.core.react_format.parser import Turn, TurnScanner, Unclosed, parse_turn
from tests.timing import LINEAR_SLACK, best_time, growth


def as_json(t: Turn) -> dict[str, str]:
    """A turn as the JSON a minimal parseTurn prints: {"type": "action", "tool", "input"},
    {"type": "answer", "text"} or {"type": "none"}."""
    if t.kind == "action":
        return {"type": "action", "tool": t.tool, "input": t.input}
    if t.kind == "answer":
        return {"type": "answer", "text": t.answer}
    return {"type": "none"}


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            "Thought: I need the total.\nAction: calculator[20 * 12 * 7]",
            {"type": "action", "tool": "calculator", "input": "20 * 12 * 7"},
        ),
        ("Thought: Done.\nAnswer: $1,680 per year", {"type": "answer", "text": "$1,680 per year"}),
        (
            "Action: calculator[2 + 2]\nObservation: 5",
            {"type": "action", "tool": "calculator", "input": "2 + 2"},
        ),
        ("I think it is about $1,600.", {"type": "none"}),
    ],
)
def test_bracket_turns_parse_to_action_answer_or_none(reply: str, expected: dict[str, str]) -> None:
    assert as_json(parse_turn(reply)) == expected


def test_fabricated_observation_is_dropped() -> None:
    t = parse_turn("Action: calculator[2 + 2]\nObservation: 5")
    assert t.dropped == "Observation: 5"
    assert "5" not in t.kept.replace("2 + 2", "")


def test_paren_chain() -> None:
    trace = (
        "Thought: 我需要先计算括号里的加法\nAction: calculator(128 + 256)\nObservation: 384\n"
        "Thought: 然后乘以 2\nAction: calculator(384 * 2)\nObservation: 768\n"
    )
    t = parse_turn(trace)
    assert (t.kind, t.tool, t.input, t.thought) == (
        "action",
        "calculator",
        "128 + 256",
        "我需要先计算括号里的加法",
    )
    assert t.dropped.startswith("Observation: 384")
    assert parse_turn("Final Answer: 668").answer == "668"
    assert parse_turn('Thought: done\nAction: finish("668")').answer == "668"


def test_action_input_json() -> None:
    t = parse_turn('Action: webSearch\nAction Input: {"q": "@sisu-ai/core npm"}')
    assert (t.kind, t.tool, t.input) == ("action", "websearch", '{"q": "@sisu-ai/core npm"}')
    plain = parse_turn("Action: webSearch\nAction Input: sisu core package")
    assert plain.input == "sisu core package"


def test_paper_dialect_numbered_labels_and_finish() -> None:
    t = parse_turn("Thought 2: Search the orogeny.\nAction 2: Search[Colorado orogeny]")
    assert (t.kind, t.tool, t.input, t.thought) == (
        "action",
        "search",
        "Colorado orogeny",
        "Search the orogeny.",
    )
    done = parse_turn("Thought 5: So the range is known.\nAction 5: Finish[1,800 to 7,000 ft]")
    assert (done.kind, done.answer) == ("answer", "1,800 to 7,000 ft")


@pytest.mark.parametrize(
    "reply",
    [
        "action: calculator[1 + 1]",
        "ACTION 3: calculator[1 + 1]",
        "   Action: calculator[1 + 1]",
        "**Action:** calculator[1 + 1]",
        "**Action**: calculator[1 + 1]",
        "## Action: calculator[1 + 1]",
        "> Action: calculator[1 + 1]",
        "`Action:` calculator[1 + 1]",
        "Action： calculator[1 + 1]",
        "Action: `calculator[1 + 1]`",
    ],
)
def test_labels_tolerate_case_numbers_decoration_and_fullwidth_colon(reply: str) -> None:
    t = parse_turn(reply)
    assert (t.kind, t.tool, t.input) == ("action", "calculator", "1 + 1")


@pytest.mark.parametrize(
    "reply",
    [
        "I looked it up and the final answer: 42 is likely.",
        "See https://example.com/answer: it explains Action: calculator[1+1]",
        "Thought: the Answer: is unclear",
    ],
)
def test_colon_mid_sentence_is_never_a_label(reply: str) -> None:
    assert parse_turn(reply).kind == "none"


def test_everything_from_fabricated_observation_is_dropped() -> None:
    text = "Thought: add\nAction: calculator[1+1]\nObservation: 2\nThought: so\nAnswer: 2"
    t = parse_turn(text)
    assert t.kind == "action"
    assert t.dropped == "Observation: 2\nThought: so\nAnswer: 2"
    assert t.kept + t.dropped == text


@pytest.mark.parametrize("fragment", ["Observ", "O", "**Observation", "Observation 2 (calc"])
def test_dangling_stop_word_fragment_is_dropped(fragment: str) -> None:
    t = parse_turn("Thought: x\nAction: calculator[1+1]\n" + fragment)
    assert t.dropped == fragment
    assert t.input == "1+1"


def test_decorated_and_numbered_observation_labels_are_cut() -> None:
    for label in ("**Observation:**", "Observation 3:", "Observation (search):", "  observation："):
        t = parse_turn(f"Action: search[x]\n{label} made up")
        assert t.dropped.startswith(label), label


def test_first_directive_wins() -> None:
    assert parse_turn("Action: calculator[1+1]\nAnswer: 3").kind == "action"
    # An answer is the end: what follows it is part of it, never an action.
    t = parse_turn("Answer: 3\nAction: calculator[1+1]")
    assert (t.kind, t.answer) == ("answer", "3\nAction: calculator[1+1]")
    two = parse_turn("Action: search[a]\nAction: calculator[1+1]")
    assert (two.tool, two.input) == ("search", "a")


def test_inputs_run_to_their_closing_bracket_and_keep_case_quotes_unicode() -> None:
    t = parse_turn('Action: search[The "Pro" plan [EU] – préis] and some prose after')
    assert t.input == 'The "Pro" plan [EU] – préis'
    p = parse_turn("Action: calculator((1 + 2) * 3) because I must")
    assert p.input == "(1 + 2) * 3"
    multi = parse_turn("Action: search[first line\nsecond line]")
    assert multi.input == "first line\nsecond line"


def test_action_input_runs_to_next_label_and_unwraps_fences() -> None:
    t = parse_turn("Action: search\nAction Input: Brightgrid\nprice\nThought: later")
    assert t.input == "Brightgrid\nprice"
    fenced = parse_turn('Action: search\nAction Input:\n```json\n{"q": "a } b"}\n```\ntrailing')
    assert fenced.input == '{"q": "a } b"}'
    json_ends = parse_turn('Action: search\nAction Input: {"q": "x"} then I wait')
    assert json_ends.input == '{"q": "x"}'


def test_json_blob_actions() -> None:
    t = parse_turn('```json\n{"action": "Search", "action_input": "Pro price"}\n```')
    assert (t.kind, t.tool, t.input) == ("action", "search", "Pro price")
    a = parse_turn('Thought: done\n{"action": "Final Answer", "action_input": "$1,680"}')
    assert (a.kind, a.answer, a.thought) == ("answer", "$1,680", "done")
    lc = parse_turn('Action:\n```\n{"action": "calculator", "action_input": "2*3"}\n```')
    assert (lc.tool, lc.input) == ("calculator", "2*3")


@pytest.mark.parametrize(
    "reply",
    [
        "Thought: nothing to do\nAction: None",
        "Action: N/A",
        "Action: calculator",
        "Action: calculator[]",
        "Action: calculator[1 + 1",
        "Thought: I am thinking",
        "",
    ],
)
def test_no_directive_gives_none(reply: str) -> None:
    assert parse_turn(reply).kind == "none"


def test_unclosed_call_is_recorded_but_never_an_action() -> None:
    """A reply cut by max_tokens inside ``[``: not an action, but the engine can say why."""
    cut = parse_turn("Thought: x\nAction: calculator[" + "(" * 100_000)
    assert (cut.kind, cut.tool, cut.input) == ("none", "", "")
    assert cut.unclosed == Unclosed("calculator", "[", 100_000)
    assert cut.unclosed.closer == "]"
    paren = parse_turn("Action: Calculator(1 + (2 * 3) \nThought: wait")
    assert (paren.kind, paren.unclosed) == ("none", Unclosed("calculator", "(", 11))
    assert parse_turn("Action: calculator[").unclosed == Unclosed("calculator", "[", 0)


@pytest.mark.parametrize(
    ("reply", "kind", "tool"),
    [
        ("Thought: no call here", "none", ""),
        ("Action: calculator(1 + 1", "none", ""),  # not the chosen dialect's syntax
        ("Action: search[abc\nAction: calculator[1 + 1]", "action", "calculator"),
        ("Action: calculator[1 + 1\nAnswer: 2", "answer", ""),
    ],
)
def test_unclosed_is_only_recorded_when_nothing_else_is_found(
    reply: str, kind: str, tool: str
) -> None:
    t = parse_turn(reply, dialect="bracket")
    assert (t.kind, t.tool, t.unclosed) == (kind, tool, None)


def test_explicit_dialect_restricts_action_syntax() -> None:
    assert parse_turn("Action: calculator(1+1)", dialect="bracket").kind == "none"
    assert parse_turn("Action: calculator[1+1]", dialect="paren").kind == "none"
    assert parse_turn("Action: calculator(1+1)", dialect="paren").input == "1+1"
    assert parse_turn("Action: Search[x]", dialect="paper").tool == "search"
    assert parse_turn("Action: s\nAction Input: q", dialect="action_input").input == "q"
    assert parse_turn("Final Answer: 1", dialect="bracket").answer == "1"


def test_scanner_reports_observation_label_as_soon_as_certain() -> None:
    s = TurnScanner()
    released = [
        s.feed(x) for x in ["Thought: x\nAction: calc[1]\n", "Obs", "erv", "ation", ":", " 5"]
    ]
    assert released[0] == "Thought: x\nAction: calc[1]\n"
    assert released[1:] == ["", "", "", "", ""]
    assert [s.observation_started] == [True]
    assert s.dropped == "Observation: 5"


def test_scanner_releases_lines_that_only_start_like_observation() -> None:
    s = TurnScanner()
    assert s.feed("Obs") == ""
    assert s.feed("erved that") == "Observed that"
    assert not s.observation_started


# Replies that once made a regex backtrack, built at any size; size 1000 is about 1 MB.
HEAVY_REPLIES: dict[str, Callable[[int], str]] = {
    "many long lines": lambda n: (
        ("Thought: " + "x" * 1000 + "\n") * n + "Action: search[" + "y" * (20 * n)
    ),
    "one long line": lambda n: "*" * (1000 * n),
    "open brackets": lambda n: "Action: s" + "[" * (500 * n),
    "unclosed call": lambda n: "Thought: x\nAction: calculator[" + "(" * (100 * n),
    "unclosed objects": lambda n: ("Action:\n{" + '"a": "' * 100 + "\n") * n,
    "unclosed tool call": lambda n: "<tool_call>{" + '{"name": ' * (100 * n),
    "open braces": lambda n: "{" * (1000 * n),
    "many-word lines": lambda n: ("Action: " + "ab_ " * 250 + "(\n") * n,
    # Qwen3-Coder XML: parameters never closed, names never closed, a tag that only repeats.
    "unclosed xml parameters": lambda n: (
        "<tool_call>\n<function=f>\n" + "<parameter=a>x\n" * (70 * n)
    ),
    "unclosed xml names": lambda n: "Thought: x\n" + "<function=<parameter=" * (50 * n),
    "xml value of closings": lambda n: "<function=f><parameter=a>" + "</function" * (100 * n),
}


@pytest.mark.parametrize("shape", list(HEAVY_REPLIES))
def test_one_megabyte_reply_parses_in_linear_time(shape: str) -> None:
    # Eight times the text takes about eight times as long (a quadratic parser: 64 times),
    # timed against itself in this run, so a loaded machine cannot tip the result.
    texts = {n: HEAVY_REPLIES[shape](n) for n in (125, 1000)}
    ratio = growth(lambda n: parse_turn(texts[n]), small=125, factor=8)
    assert ratio < 8 * LINEAR_SLACK, f"8x the text took {ratio:.1f}x as long: not linear"
    assert parse_turn(texts[1000]).kept + parse_turn(texts[1000]).dropped == texts[1000]


@pytest.mark.latency
@pytest.mark.parametrize("shape", list(HEAVY_REPLIES))
def test_one_megabyte_reply_parses_within_the_budget(shape: str) -> None:
    text = HEAVY_REPLIES[shape](1000)
    seconds = best_time(lambda: parse_turn(text), repeats=3)
    assert seconds < 0.1, f"{len(text):,} characters took {seconds * 1000:.0f} ms (budget 100)"


LABELISH = st.sampled_from(
    [
        "Thought: ",
        "Action: ",
        "Action Input: ",
        "Observation: ",
        "Answer: ",
        "Final Answer: ",
        "**Action:** ",
        "Observ",
        "\n",
        "[",
        "]",
        "(",
        ")",
        "{",
        "}",
        '"',
        "```",
        "calculator",
        "finish",
        "Web Search",
        "<tool_call>",
        '{"name": "search", "arguments": {"q": "x"}}',
        '"arguments": {}}',
        "()",
        "<function=",
        "<parameter=",
        "</parameter>",
        ">",
        "搜索",
        'city="Paris", ',
    ]
)
REPLIES = st.lists(st.one_of(LABELISH, st.text(max_size=12)), max_size=30).map("".join)


@given(REPLIES)
def test_property_never_raises_and_kept_plus_dropped_is_the_text(text: str) -> None:
    t = parse_turn(text)
    assert t.kept + t.dropped == text
    assert t.kind in ("action", "answer", "none")


@given(REPLIES, st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=50))
def test_property_streaming_in_any_chunks_equals_parsing_whole(text: str, sizes: list[int]) -> None:
    s = TurnScanner()
    released, pos, i = [], 0, 0
    while pos < len(text):
        size = sizes[i % len(sizes)]
        released.append(s.feed(text[pos : pos + size]))
        pos, i = pos + size, i + 1
    released.append(s.finish())
    whole = parse_turn(text)
    assert "".join(released) == whole.kept
    assert s.dropped == whole.dropped


@given(st.text())
def test_property_any_unicode_text_parses(text: str) -> None:
    t = parse_turn(text)
    assert t.kept + t.dropped == text
