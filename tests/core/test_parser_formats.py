"""The action formats real models write, and another framework's parser tests run on ours.

``tests/data/peer_parser_cases.json`` holds LangChain's ReAct output-parser test cases, each
with what LangChain expects and what we expect; see its ``about`` field.
"""

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.core.react_format.dialects import Dialect
from sandbox_app.core.react_format.parser import Turn, parse_turn
from sandbox_app.core.tools import ToolRouter, builtin_tools
from sandbox_app.core.tools.action_objects import name_key, plain_input

PEER_FILE = Path(__file__).resolve().parents[1] / "data" / "peer_parser_cases.json"
PEER_CASES: list[dict[str, Any]] = json.loads(PEER_FILE.read_text(encoding="utf-8"))["cases"]


def outcome(t: Turn) -> dict[str, str]:
    """A turn in the case file's terms."""
    if t.kind == "action":
        return {"kind": "action", "tool": t.tool, "input": t.input}
    if t.kind == "answer":
        return {"kind": "answer", "answer": t.answer}
    return {"kind": "none"}


def in_our_terms(expected: dict[str, str]) -> dict[str, str]:
    """Tool names compare case-insensitively: the parser lower-cases, the router resolves."""
    return {k: v.lower() if k == "tool" else v for k, v in expected.items()}


def case_id(case: dict[str, Any]) -> str:
    return f"{Path(case['source']['path']).stem}::{case['source']['test']}"


@pytest.mark.parametrize("case", PEER_CASES, ids=[case_id(c) for c in PEER_CASES])
def test_peer_case(case: dict[str, Any]) -> None:
    assert outcome(parse_turn(case["text"])) == in_our_terms(case["expected"])


def test_peer_cases_are_well_formed() -> None:
    for case in PEER_CASES:
        source = case["source"]
        assert source["repo"] == "langchain-ai/langchain", case_id(case)
        assert source["test"].startswith("test_"), case_id(case)
        assert len(source["commit"]) == 40, case_id(case)
        # A case differs from LangChain exactly when it says why.
        same = in_our_terms(case["expected"]) == in_our_terms(case["langchain"])
        assert same != bool(case.get("differs")), case_id(case)


def peer_summary() -> str:
    """What the lead reports: how many cases give what LangChain's own test expects."""
    as_langchain = [
        c for c in PEER_CASES if outcome(parse_turn(c["text"])) == in_our_terms(c["langchain"])
    ]
    differing = [c for c in PEER_CASES if c.get("differs")]
    lines = [
        f"{len(as_langchain)} of {len(PEER_CASES)} LangChain cases pass as LangChain expects; "
        f"{len(differing)} differ deliberately:",
        *(f"  {case_id(c)}: {c['differs']}" for c in differing),
    ]
    return "\n".join(lines)


def test_peer_suite_summary() -> None:
    """Every case either passes as LangChain expects or differs for a stated reason."""
    summary = peer_summary()
    assert summary.startswith("22 of 26 LangChain cases pass as LangChain expects; 4 differ")
    assert summary.count("\n") == 4


# --- Tool names written differently from the registered name -----------------------------


@pytest.mark.parametrize(
    "reply",
    [
        "Action: Web Search\nAction Input: refund days",
        "Action: web-search\nAction Input: refund days",
        "Action: WEB_SEARCH\nAction Input: refund days",
        "Action: webSearch\nAction Input: refund days",
        '{"action": "Web Search", "action_input": "refund days"}',
        "Action: Web Search[refund days]",
    ],
)
def test_tool_name_spellings_reach_the_one_matching_tool(reply: str) -> None:
    t = parse_turn(reply)
    assert (t.kind, t.input) == ("action", "refund days")
    router = ToolRouter([Named("web_search"), Named("calculator")])
    assert router.resolve(t.tool) is not None
    assert asyncio.run(router.run_tool(t.tool, t.input)).text == "web_search got refund days"


def test_name_key_ignores_case_spaces_hyphens_and_underscores() -> None:
    keys = {
        name_key(n)
        for n in ("Web Search", "web-search", "web_search", "webSearch", " WEB  SEARCH ")
    }
    assert keys == {"websearch"}


def test_unknown_or_ambiguous_names_get_the_unknown_tool_error() -> None:
    router = ToolRouter([Named("web_search"), Named("websearch"), Named("calculator")])
    assert router.resolve("websearch") is router._tools["websearch"]  # exact name first
    ambiguous = asyncio.run(router.run_tool("web search", "x"))
    assert ambiguous.error
    assert (
        ambiguous.text == 'Error: unknown tool "web search". Use: web_search, websearch, calculator'
    )
    unknown = asyncio.run(router.run_tool("send email", "x"))
    assert unknown.text.startswith('Error: unknown tool "send email".')


def test_five_word_name_is_prose_not_a_tool() -> None:
    assert parse_turn("Action: I will look it up\nAction Input: x").kind == "none"


# --- Label and value on separate lines; indented output ----------------------------------


@pytest.mark.parametrize(
    ("reply", "tool", "input"),
    [
        ("Action:\nTerminal\n\nAction Input:\nls -l", "terminal", "ls -l"),
        (
            "  Thought: list it\n  Action:\n    search\n  Action Input:\n    refund",
            "search",
            "refund",
        ),
        ("Action:\n\ncalculator[1 + 1]", "calculator", "1 + 1"),
        ("Action:\n  calculator(2 * 3)", "calculator", "2 * 3"),
        ('Action:\n```json\n{"name": "search", "arguments": "x"}\n```', "search", "x"),
    ],
)
def test_value_on_the_line_after_its_label(reply: str, tool: str, input: str) -> None:
    t = parse_turn(reply)
    assert (t.kind, t.tool, t.input) == ("action", tool, input)


def test_answer_on_the_line_after_its_label() -> None:
    assert parse_turn("Final Answer:\n\n  42\n").answer == "42"


# --- JSON action objects -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "tool", "input"),
    [
        ('{"action": "search", "action_input": "refund"}', "search", "refund"),
        ('Action: `{"action": "search", "action_input": "refund"}`', "search", "refund"),
        (
            '{"tool_name": "search", "tool_arguments": {"query": "refund"}}',
            "search",
            '{"query": "refund"}',
        ),
        (
            '{"name": "calculator", "arguments": {"expression": "2*3"}}',
            "calculator",
            '{"expression": "2*3"}',
        ),
        (
            '```json\n{"name": "search", "arguments": {"q": "a", "k": 2}}\n```',
            "search",
            '{"q": "a", "k": 2}',
        ),
        ('{"name": "search", "parameters": {"query": "refund"}}', "search", '{"query": "refund"}'),
        ('{"tool": "search", "tool_input": "refund"}', "search", "refund"),
        (
            '{"type": "function", "function": '
            '{"name": "search", "arguments": "{\\"q\\": \\"refund\\"}"}}',
            "search",
            '{"q": "refund"}',
        ),
        (
            '<tool_call>\n{"name": "search", "arguments": {"query": "refund"}}\n</tool_call>',
            "search",
            '{"query": "refund"}',
        ),
        (
            'Thought: {braces} {in} {prose}\n<tool_call>{"name": "search", "arguments": '
            '{"query": "refund"}}</tool_call>',
            "search",
            '{"query": "refund"}',
        ),
        ('{"name": "get_time", "arguments": {}}', "get_time", ""),
    ],
)
def test_json_tool_call_objects(reply: str, tool: str, input: str) -> None:
    t = parse_turn(reply)
    assert (t.kind, t.tool, t.input, t.dialect) == ("action", tool, input, "action_input")


def test_object_arguments_reach_the_tool_as_one_string_or_as_json() -> None:
    # As with an Action Input: {"q": "…"} line: the parser keeps the JSON text and
    # the router hands a tool the one string inside a one-key object.
    assert plain_input('{"query": "refund"}') == "refund"
    assert plain_input('{"q": "a", "k": 2}') == '{"q": "a", "k": 2}'
    router = ToolRouter(builtin_tools())
    t = parse_turn('{"name": "calculator", "arguments": {"expression": "2*3"}}')
    assert asyncio.run(router.run_tool(t.tool, t.input)).text == "6"


@pytest.mark.parametrize(
    "reply",
    [
        '{"action": "Final Answer", "action_input": "42"}',
        '{"name": "final_answer", "arguments": {"answer": "42"}}',
        '<tool_call>{"name": "finish", "arguments": {"answer": "42"}}</tool_call>',
        "Action: Final Answer\nAction Input: 42",
    ],
)
def test_answer_objects(reply: str) -> None:
    t = parse_turn(reply)
    assert (t.kind, t.answer) == ("answer", "42")


@pytest.mark.parametrize(
    "reply",
    [
        '{"name": "Alice", "age": 3}',  # no arguments key: data, not a call
        '{"action": "search", "action_input": ""}',
        '{"name": "final_answer", "arguments": {}}',
        "<tool_call>{not json}</tool_call>",
        '{"action": ["search"], "action_input": "x"}',
    ],
)
def test_objects_that_are_not_calls(reply: str) -> None:
    assert parse_turn(reply).kind == "none"


def test_json_objects_belong_to_the_action_input_form() -> None:
    call = '<tool_call>{"name": "search", "arguments": {"q": "x"}}</tool_call>'
    assert parse_turn(call, dialect="action_input").kind == "action"
    others: tuple[Dialect, ...] = ("bracket", "paren", "paper")
    for dialect in others:
        assert parse_turn(call, dialect=dialect).kind == "none"
        assert parse_turn('{"name": "s", "arguments": "x"}', dialect=dialect).kind == "none"


def test_first_directive_still_wins_over_a_later_object() -> None:
    t = parse_turn('Action: calculator[1+1]\n{"name": "search", "arguments": "x"}')
    assert (t.tool, t.input) == ("calculator", "1+1")


# --- tool() with no arguments --------------------------------------------------------------


def test_empty_call_is_an_action_with_empty_input() -> None:
    t = parse_turn("Thought: what time is it\nAction: get_time()")
    assert (t.kind, t.tool, t.input, t.dialect) == ("action", "get_time", "", "paren")
    assert parse_turn("Action: finish()").kind == "none"  # an empty answer is no answer
    assert parse_turn("Action: calculator[]").kind == "none"


def test_empty_input_gets_a_one_line_observation_not_a_crash() -> None:
    router = ToolRouter([*builtin_tools(), Named("get_time", reply="")])
    empty_calc = asyncio.run(router.run_tool("calculator", ""))
    assert (empty_calc.text, empty_calc.error) == ("Error: empty expression", True)
    assert asyncio.run(router.run_tool("search", "")).text == "No matching document."
    silent = asyncio.run(router.run_tool("get_time", ""))
    assert (silent.text, silent.error) == ("get_time returned no output.", False)


class Named:
    """A read-only tool that says what it got (or ``reply`` when given)."""

    description = "test tool"
    input_hint = "text"
    read_only = True
    max_input = 100

    def __init__(self, name: str, reply: str | None = None) -> None:
        self.name = name
        self.reply = reply

    async def run(self, input: str) -> str:
        return f"{self.name} got {input}" if self.reply is None else self.reply


if __name__ == "__main__":  # uv run python -m tests.core.test_parser_formats
    sys.stdout.write(peer_summary() + "\n")
