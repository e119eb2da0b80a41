"""Formats models write in text ReAct, with cases ported from other projects' parser tests.

Each case names where it comes from (repository, file and test, at the commit read); the
inputs are copied from there, the expectations say the same thing in our terms. A case that
is ours (no public test had it) says so. Covered:

* Qwen3-Coder's XML calls (``<tool_call><function=…><parameter=…>``): vLLM's
  ``tests/tool_parsers/test_qwen3coder_tool_parser.py``, llama.cpp's
  ``tests/chat-peg-parser/test-example-qwen3-coder.cpp``. vLLM types each value by the tool's
  schema; here the router does, for a tool that has one, so typed cases run through it.
* Keyword-style inputs (``city='Paris', unit="C"``): vLLM's
  ``tests/tool_parsers/test_pythonic_tool_parser.py`` (its calls written as an Action).
* Tool names outside ASCII, and text after a final answer: ours.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox_app.core.react_format.dialects import Dialect
from sandbox_app.core.react_format.parser import TurnScanner, parse_kept, parse_turn
from sandbox_app.core.running.events import ActionParsed, FinalAnswer, Observation
from sandbox_app.core.tools import ToolRouter, builtin_tools
from tests.helpers import builtin, finished, of_type, run_events, server_backend
from tests.model_server import ModelScript, ModelServer, split_every

VLLM = "vllm-project/vllm"
VLLM_QWEN = (VLLM, "tests/tool_parsers/test_qwen3coder_tool_parser.py", "049d8df27dda")
VLLM_PYTHONIC = (VLLM, "tests/tool_parsers/test_pythonic_tool_parser.py", "0716d268c7d8")
LLAMA_CPP_QWEN = (
    "ggml-org/llama.cpp",
    "tests/chat-peg-parser/test-example-qwen3-coder.cpp",
    "0d16321d0718",
)
OURS = ("react-sandbox", "this file", "")


@dataclass(frozen=True)
class Case:
    """A reply and what it must parse to. ``args``: the call's input read as JSON (None: the
    input is compared as text, ``input``). ``schema`` + ``typed``: what a tool with that
    schema receives through the router."""

    source: tuple[str, str, str]
    test: str
    text: str
    kind: str = "action"
    tool: str = ""
    args: dict[str, Any] | None = None
    input: str = ""
    answer: str = ""
    schema: dict[str, Any] = field(default_factory=dict)
    typed: dict[str, Any] | None = None
    differs: str = ""  # why our expectation differs from the source's, when it does


WEATHER = {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}
DALLAS = (
    "<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n"
    "<parameter=state>\nTX\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n"
    "</function>\n</tool_call>"
)
ORLANDO = DALLAS.replace("Dallas", "Orlando").replace("TX", "FL").replace("fahrenheit", "celsius")
AREA = {
    "shape": {"type": "string"},
    "dimensions": {"type": "object"},
    "precision": {"type": "integer"},
}
AREA_SCHEMA = {"type": "object", "properties": AREA}
TYPES_SCHEMA = {
    "type": "object",
    "properties": {
        "int_param": {"type": "integer"},
        "float_param": {"type": "float"},
        "bool_param": {"type": "boolean"},
        "str_param": {"type": "string"},
        "obj_param": {"type": "object"},
    },
}
ANYOF_SCHEMA = {
    "type": "object",
    "properties": {
        "anyof_int": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": 5},
        "anyof_str": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "anyof_array": {
            "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]
        },
        "anyof_obj": {"anyOf": [{"type": "object"}, {"type": "null"}]},
        "type_as_array": {"type": ["integer", "null"]},
        "multi_non_null": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
    },
}
SEARCH_FILES = {
    "path": "/var/log",
    "pattern": "*.log",
    "min_size_mb": "100",
    "max_depth": "5",
    "include_hidden": "false",
    "modified_days_ago": "30",
    "case_sensitive": "true",
    "sort_by": "size",
    "filters": '{"exclude_patterns": ["*temp*", "*cache*"], "file_types": ["regular"]}',
}
SEARCH_FILES_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "pattern": {"type": "string"},
        "min_size_mb": {"type": "integer"},
        "max_depth": {"type": "integer"},
        "include_hidden": {"type": "boolean"},
        "modified_days_ago": {"type": "integer"},
        "case_sensitive": {"type": "boolean"},
        "sort_by": {"type": "string"},
        "filters": {"type": "object"},
    },
}
LLAMA_CPP_INPUT = (
    "<think>The user wants to find large log files that haven't been accessed recently. "
    "I should search for files with .log extension, filter by size (over 100MB), "
    "and check access time within the last 30 days. I'll need to use the search_files "
    "function.</think>"
    "Based on your requirements, I'll search for log files over 100MB that haven't been "
    "accessed in the last month. This will help identify candidates for cleanup or archival.\n\n"
    "<tool_call>"
    "<function=search_files>"
    "<parameter=path>/var/log</parameter>"
    "<parameter=pattern>*.log</parameter>"
    "<parameter=min_size_mb>100</parameter>"
    "<parameter=max_depth>5</parameter>"
    "<parameter=include_hidden>false</parameter>"
    "<parameter=modified_days_ago>30</parameter>"
    "<parameter=case_sensitive>true</parameter>"
    "<parameter=sort_by>size</parameter>"
    '<parameter=filters>{"exclude_patterns": ["*temp*", "*cache*"], "file_types": '
    '["regular"]}</parameter>'
    "</function>"
    "</tool_call>"
)

QWEN_CASES = [
    Case(
        VLLM_QWEN,
        "test_extract_tool_calls[single_tool]",
        DALLAS,
        tool="get_current_weather",
        args=WEATHER,
    ),
    Case(
        VLLM_QWEN,
        "test_extract_tool_calls[single_tool_with_content]",
        "Sure! Let me check the weather for you." + DALLAS,
        tool="get_current_weather",
        args=WEATHER,
    ),
    Case(
        VLLM_QWEN,
        "test_extract_tool_calls[single_tool_multiline_param]",
        "<tool_call>\n<function=calculate_area>\n<parameter=shape>\nrectangle\n</parameter>\n"
        '<parameter=dimensions>\n{"width": 10, \n "height": 20}\n</parameter>\n'
        "<parameter=precision>\n2\n</parameter>\n</function>\n</tool_call>",
        tool="calculate_area",
        args={
            "shape": "rectangle",
            "dimensions": '{"width": 10, \n "height": 20}',
            "precision": "2",
        },
        schema=AREA_SCHEMA,
        typed={"shape": "rectangle", "dimensions": {"width": 10, "height": 20}, "precision": 2},
    ),
    Case(
        VLLM_QWEN,
        "test_extract_tool_calls[parallel_tools]",
        DALLAS + "\n" + ORLANDO,
        tool="get_current_weather",
        args=WEATHER,
        differs="ReAct runs one action a turn: the first call; vLLM returns both.",
    ),
    Case(
        VLLM_QWEN,
        "test_extract_tool_calls[tool_with_typed_params]",
        "Let me calculate that area for you.<tool_call>\n<function=calculate_area>\n"
        "<parameter=shape>\ncircle\n</parameter>\n"
        '<parameter=dimensions>\n{"radius": 15.5}\n</parameter>\n'
        "<parameter=precision>\n3\n</parameter>\n</function>\n</tool_call>",
        tool="calculate_area",
        args={"shape": "circle", "dimensions": '{"radius": 15.5}', "precision": "3"},
        schema=AREA_SCHEMA,
        typed={"shape": "circle", "dimensions": {"radius": 15.5}, "precision": 3},
    ),
    Case(
        VLLM_QWEN,
        "test_extract_tool_calls_fallback_no_tags",
        "<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n"
        "<parameter=state>\nTX\n</parameter>\n</function>",
        tool="get_current_weather",
        args={"city": "Dallas", "state": "TX"},
    ),
    Case(
        VLLM_QWEN,
        "test_extract_tool_calls_type_conversion",
        "<tool_call>\n<function=test_types>\n<parameter=int_param>\n42\n</parameter>\n"
        "<parameter=float_param>\n3.14\n</parameter>\n<parameter=bool_param>\ntrue\n</parameter>\n"
        "<parameter=str_param>\nhello world\n</parameter>\n"
        '<parameter=obj_param>\n{"key": "value"}\n</parameter>\n</function>\n</tool_call>',
        tool="test_types",
        schema=TYPES_SCHEMA,
        typed={
            "int_param": 42,
            "float_param": 3.14,
            "bool_param": True,
            "str_param": "hello world",
            "obj_param": {"key": "value"},
        },
    ),
    Case(
        VLLM_QWEN,
        "test_extract_tool_calls_anyof_type_conversion",
        "<tool_call>\n<function=test_anyof>\n<parameter=anyof_int>\n5\n</parameter>\n"
        "<parameter=anyof_str>\nhello\n</parameter>\n"
        '<parameter=anyof_array>\n["a", "b", "c"]\n</parameter>\n'
        '<parameter=anyof_obj>\n{"key": "value"}\n</parameter>\n'
        "<parameter=type_as_array>\n42\n</parameter>\n"
        "<parameter=multi_non_null>\nsome text\n</parameter>\n</function>\n</tool_call>",
        tool="test_anyof",
        schema=ANYOF_SCHEMA,
        typed={
            "anyof_int": 5,
            "anyof_str": "hello",
            "anyof_array": ["a", "b", "c"],
            "anyof_obj": {"key": "value"},
            "type_as_array": 42,
            "multi_non_null": "some text",
        },
    ),
    Case(
        VLLM_QWEN,
        "test_extract_tool_calls_missing_closing_parameter_tag",
        "Let me check the weather for you:\n<tool_call>\n<function=get_current_weather>\n"
        "<parameter=city>\nDallas\n<parameter=state>\nTX\n</parameter>\n"
        "<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>",
        tool="get_current_weather",
        args=WEATHER,
    ),
    Case(
        VLLM_QWEN,
        "test_extract_tool_calls_streaming_missing_opening_tag",
        "I'll check the weather for you.\n\n<function=get_current_weather>\n"
        "<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n"
        "<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>",
        tool="get_current_weather",
        args=WEATHER,
    ),
    Case(
        VLLM_QWEN,
        "test_malformed_xml_no_gt_delimiter",
        "<tool_call>\n<function=get_current_weather\n<parameter=city>Dallas</parameter>\n"
        "</function>\n</tool_call>",
        kind="none",
        differs="vLLM only asks that it does not crash; a function name never closed is no call.",
    ),
    Case(
        VLLM_QWEN,
        "test_none_tool_calls_filtered",
        "<tool_call>\n<function=bad_func_no_gt\n</function>\n</tool_call>\n<tool_call>\n"
        "<function=get_current_weather>\n<parameter=city>Dallas</parameter>\n"
        "<parameter=state>TX</parameter>\n</function>\n</tool_call>",
        tool="get_current_weather",
        args={"city": "Dallas", "state": "TX"},
    ),
    Case(
        VLLM_QWEN,
        "test_anyof_parameter_not_double_encoded",
        '<tool_call>\n<function=update_record>\n<parameter=data>{"key": "value", "count": 42}'
        "</parameter>\n</function>\n</tool_call>",
        tool="update_record",
        schema={
            "type": "object",
            "properties": {"data": {"anyOf": [{"type": "object"}, {"type": "null"}]}},
        },
        typed={"data": {"key": "value", "count": 42}},
    ),
    Case(
        VLLM_QWEN,
        "test_no_double_serialization_string_args",
        "<tool_call>\n<function=greet>\n<parameter=message>hello world</parameter>\n"
        "</function>\n</tool_call>",
        tool="greet",
        args={"message": "hello world"},
        schema={"type": "object", "properties": {"message": {"type": "string"}}},
        typed={"message": "hello world"},
    ),
    Case(
        VLLM_QWEN,
        "test_extract_tool_calls_no_tools",
        "This is a test response without any tool calls",
        kind="none",
    ),
    Case(
        LLAMA_CPP_QWEN,
        "qwen3_accumulation_test",
        LLAMA_CPP_INPUT,
        tool="search_files",
        args=SEARCH_FILES,
        schema=SEARCH_FILES_SCHEMA,
        typed={
            **SEARCH_FILES,
            "min_size_mb": 100,
            "max_depth": 5,
            "include_hidden": False,
            "modified_days_ago": 30,
            "case_sensitive": True,
            "filters": {"exclude_patterns": ["*temp*", "*cache*"], "file_types": ["regular"]},
        },
        differs="llama.cpp reads a value that parses as JSON as JSON; the router types values "
        "by the tool's schema, as vLLM does.",
    ),
    # Ours: after a Thought, a cut stream, multi-line values, the Action label in front.
    Case(
        OURS,
        "after a Thought, cut by a stop sequence before its closing tags",
        "Thought: I need the weather.\n<tool_call>\n<function=get_weather>\n<parameter=city>\n"
        "Paris\n</parameter>\n<parameter=unit>\nC",
        tool="get_weather",
        args={"city": "Paris", "unit": "C"},
    ),
    Case(
        OURS,
        "a multi-line value keeps its lines and indentation",
        "Action: <tool_call>\n<function=write_file>\n<parameter=path>\na.py\n</parameter>\n"
        "<parameter=content>\ndef f():\n    return 1\n</parameter>\n</function>\n</tool_call>",
        tool="write_file",
        args={"path": "a.py", "content": "def f():\n    return 1"},
    ),
    Case(
        OURS,
        "a call with no parameters",
        "<tool_call>\n<function=get_time>\n</function>\n</tool_call>",
        tool="get_time",
        input="",
    ),
]

KEYWORD_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "metric": {"type": "string"}},
}
KEYWORD_CASES = [
    Case(
        VLLM_PYTHONIC,
        "test_tool_call[simple_nonstreaming]",
        "Action: get_weather(city='San Francisco', metric='celsius')",
        tool="get_weather",
        input="city='San Francisco', metric='celsius'",
        schema=KEYWORD_SCHEMA,
        typed={"city": "San Francisco", "metric": "celsius"},
    ),
    Case(
        VLLM_PYTHONIC,
        "test_tool_call[escaped_string_nonstreaming]",
        r"Action: get_weather(city='Martha\'s Vineyard', metric='\"cool units\"')",
        tool="get_weather",
        input=r"city='Martha\'s Vineyard', metric='\"cool units\"'",
        schema=KEYWORD_SCHEMA,
        typed={"city": "Martha's Vineyard", "metric": '"cool units"'},
    ),
    Case(
        VLLM_PYTHONIC,
        "test_tool_call[more_types_nonstreaming]",
        "Action: register_user(name='John Doe', age=37, "
        "address={'city': 'San Francisco', 'state': 'CA'}, role=None, passed_test=True, "
        "aliases=['John', 'Johnny'])",
        tool="register_user",
        input="name='John Doe', age=37, address={'city': 'San Francisco', 'state': 'CA'}, "
        "role=None, passed_test=True, aliases=['John', 'Johnny']",
        schema={"type": "object"},
        typed=None,  # not keywords we read: the tool gets the text as written
        differs="Python dict and list literals are not read (nothing the model wrote is "
        "evaluated); the tool gets the text as written.",
    ),
    Case(
        OURS,
        "brackets, double quotes, a number and a literal",
        'Action: weather[city="Paris", unit="C", days=3, metric=true]',
        tool="weather",
        input='city="Paris", unit="C", days=3, metric=true',
        schema={"type": "object"},
        typed={"city": "Paris", "unit": "C", "days": 3, "metric": True},
    ),
    Case(
        OURS,
        "an Action Input line, a quote inside, a schema that says string",
        'Thought: weather\nAction: weather\nAction Input: city=\'Paris\', note="say \\"hi\\"", '
        "zip=75001",
        tool="weather",
        input='city=\'Paris\', note="say \\"hi\\"", zip=75001',
        schema={"type": "object", "properties": {"zip": {"type": "string"}}},
        typed={"city": "Paris", "note": 'say "hi"', "zip": "75001"},
    ),
]

NAME_CASES = [
    Case(OURS, "Chinese", "Thought: 查一下\nAction: 搜索[东京]", tool="搜索", input="东京"),
    Case(
        OURS, "Spanish", "Action: búsqueda\nAction Input: Madrid", tool="búsqueda", input="Madrid"
    ),
    Case(OURS, "French, paren", "Action: météo(Paris)", tool="météo", input="Paris"),
    Case(OURS, "Hindi, with vowel signs", "Action: खोज[दिल्ली]", tool="खोज", input="दिल्ली"),
    Case(
        OURS,
        "Russian in XML",
        "<tool_call>\n<function=поиск>\n<parameter=запрос>\nМосква\n"
        "</parameter>\n</function>\n</tool_call>",
        tool="поиск",
        args={"запрос": "Москва"},
    ),
]

ANSWER_CASES = [
    Case(
        OURS,
        "a JSON action blob after Final Answer",
        'Final Answer: {"action": "search", "action_input": "x"}',
        kind="answer",
        answer='{"action": "search", "action_input": "x"}',
    ),
    Case(
        OURS,
        "an Action line after the answer",
        "Final Answer: 42\nAction: search[x]",
        kind="answer",
        answer="42\nAction: search[x]",
    ),
    Case(
        OURS,
        "an XML call after the answer",
        "Thought: done\nFinal Answer: 42\n" + DALLAS,
        kind="answer",
        answer="42\n" + DALLAS,
    ),
    Case(
        OURS,
        "an Action / Action Input pair after the answer",
        "Final Answer: 42\n\nAction: search\nAction Input: x",
        kind="answer",
        answer="42\n\nAction: search\nAction Input: x",
    ),
]

ALL = QWEN_CASES + KEYWORD_CASES + NAME_CASES + ANSWER_CASES


def case_id(case: Case) -> str:
    return f"{case.source[1].rsplit('/', 1)[-1]}::{case.test}"


class Recorder:
    """A read-only tool that takes a JSON object (it has a schema) and keeps what it got."""

    description = "test tool"
    input_hint = "object"
    read_only = True
    max_input = 10_000

    def __init__(self, name: str, schema: dict[str, Any]) -> None:
        self.name, self.parameters = name, schema
        self.got: list[str] = []

    async def run(self, input: str) -> str:
        self.got.append(input)
        return "ok"


class Named:
    """A read-only tool that takes one string and says what it got."""

    description, input_hint, read_only, max_input = "test tool", "text", True, 100

    def __init__(self, name: str) -> None:
        self.name = name

    async def run(self, input: str) -> str:
        return f"{self.name} got {input}"


@pytest.mark.parametrize("case", ALL, ids=[case_id(c) for c in ALL])
def test_ported_case(case: Case) -> None:
    assert all((*case.source[:2], case.test))  # every case names its source
    t = parse_turn(case.text)
    assert t.kind == case.kind
    if case.kind == "answer":
        assert t.answer == case.answer
    if case.kind != "action":
        return
    assert t.tool == case.tool
    if case.args is not None:
        assert json.loads(t.input) == case.args
    elif case.typed is None or case.input:
        assert t.input == case.input
    if case.schema:
        tool = Recorder(case.tool, case.schema)
        asyncio.run(ToolRouter([tool]).run_tool(t.tool, t.input))
        expected = case.typed if case.typed is not None else case.input
        assert (json.loads(tool.got[0]) if case.typed is not None else tool.got[0]) == expected


@pytest.mark.parametrize("case", KEYWORD_CASES[:2], ids=[case_id(c) for c in KEYWORD_CASES[:2]])
def test_keywords_reach_a_string_tool_as_written(case: Case) -> None:
    t = parse_turn(case.text)
    got: list[str] = []

    class Text:  # a tool that takes one string: no schema
        name, description, input_hint, read_only, max_input = case.tool, "t", "text", True, 500

        async def run(self, input: str) -> str:
            got.append(input)
            return "ok"

    asyncio.run(ToolRouter([Text()]).run_tool(t.tool, t.input))
    assert got == [case.input]


def test_xml_calls_belong_to_the_action_input_form_like_json_calls() -> None:
    assert parse_turn(DALLAS, dialect="action_input").tool == "get_current_weather"
    others: tuple[Dialect, ...] = ("bracket", "paren", "paper")
    for dialect in others:
        assert parse_turn(DALLAS, dialect=dialect).kind == "none"


def test_one_parameter_gives_a_one_input_tool_its_value() -> None:
    xml = "<tool_call>\n<function=calculator>\n<parameter=expression>\n6 * 7\n</parameter>\n"
    t = parse_turn(xml + "</function>\n</tool_call>")
    result = asyncio.run(ToolRouter(builtin_tools()).run_tool(t.tool, t.input))
    assert result.text == "42"


def test_names_outside_ascii_reach_their_tool_whatever_the_spelling() -> None:
    router = ToolRouter([Named("météo"), Named("搜索"), Named("Búsqueda")])
    decomposed = "me\u0301te\u0301o"  # é as e + a combining accent
    for written, tool in (
        (decomposed, "météo"),
        ("MÉTÉO", "météo"),
        ("搜索", "搜索"),
        ("búsqueda", "Búsqueda"),
    ):
        t = parse_turn(f"Action: {written}[Paris]")
        assert t.kind == "action", written
        assert asyncio.run(router.run_tool(t.tool, t.input)).text == f"{tool} got Paris"


# --- Streaming: an XML call split anywhere parses the same ----------------------------------


def streamed(text: str, cuts: list[int]) -> tuple[str, str]:
    scanner = TurnScanner()
    released, last = [], 0
    for cut in [*sorted(cuts), len(text)]:
        released.append(scanner.feed(text[last:cut]))
        last = cut
    released.append(scanner.finish())
    return "".join(released), scanner.dropped


STREAMED = [c.text for c in QWEN_CASES if c.kind == "action"]


@pytest.mark.parametrize("text", STREAMED[:3] + STREAMED[-3:])
def test_an_xml_call_split_in_two_anywhere_parses_the_same(text: str) -> None:
    whole = parse_turn(text)
    for cut in range(len(text) + 1):
        kept, dropped = streamed(text, [cut])
        assert kept == whole.kept
        assert parse_kept(kept, dropped) == whole, cut


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(STREAMED), st.lists(st.integers(min_value=0, max_value=400), max_size=40))
def test_property_an_xml_call_in_any_chunks_parses_the_same(text: str, cuts: list[int]) -> None:
    kept, dropped = streamed(text, [c for c in cuts if c <= len(text)])
    assert parse_kept(kept, dropped) == parse_turn(text)


# --- Through the engine and the real SDK: what a user sees ----------------------------------


def run_replies(
    server: ModelServer, replies: list[str], tools: list[Any], dialect: str = "auto"
) -> list[Any]:
    """A run whose model writes ``replies``, streamed three characters a chunk."""
    server.set_model("m", ModelScript(replies=replies, tokenizer=split_every(3)))
    scenario = builtin("brightgrid").with_changes(dialect=dialect)
    return run_events(scenario, server_backend(server.base_url), model="m", tools=tools)


def test_an_xml_call_streamed_in_pieces_runs_its_tool(fake_server: ModelServer) -> None:
    weather = Recorder(
        "get_weather", {"type": "object", "properties": {"days": {"type": "integer"}}}
    )
    call = (
        "Thought: I need the forecast.\n<tool_call>\n<function=get_weather>\n"
        "<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n"
        "</function>\n</tool_call>"
    )
    events = run_replies(fake_server, [call, "Final Answer: sunny"], [weather])
    assert [(a.tool, json.loads(a.input)) for a in of_type(events, ActionParsed)] == [
        ("get_weather", {"city": "Paris", "days": "3"})
    ]
    assert [json.loads(g) for g in weather.got] == [{"city": "Paris", "days": 3}]
    assert (finished(events).status, finished(events).answer) == ("answered", "sunny")


def test_keywords_reach_an_object_tool_as_an_object(fake_server: ModelServer) -> None:
    weather = Recorder("weather", {"type": "object"})
    reply = 'Thought: look it up\nAction: weather[city="Paris", unit="C"]'
    events = run_replies(fake_server, [reply, "Final Answer: mild"], [weather])
    assert of_type(events, ActionParsed)[0].input == 'city="Paris", unit="C"'  # as written
    assert [json.loads(g) for g in weather.got] == [{"city": "Paris", "unit": "C"}]


def test_a_chinese_tool_name_runs_that_tool(fake_server: ModelServer) -> None:
    search = Recorder("搜索", {"type": "object"})
    events = run_replies(
        fake_server, ["Thought: 查\nAction: 搜索[东京]", "Final Answer: 东京"], [search]
    )
    assert [(a.tool, a.input) for a in of_type(events, ActionParsed)] == [("搜索", "东京")]
    assert of_type(events, Observation)[0].text == "ok"


@pytest.mark.parametrize(
    "reply",
    [
        "Final Answer: 42\nAction: search[x]",
        'Final Answer: {"action": "search", "action_input": "x"}',
        "Thought: done\nFinal Answer: 42\n" + DALLAS,
    ],
)
def test_text_after_a_final_answer_never_runs(fake_server: ModelServer, reply: str) -> None:
    search = Recorder("search", {"type": "object"})
    weather = Recorder("get_current_weather", {"type": "object"})
    events = run_replies(fake_server, [reply], [search, weather])
    answer = reply.split("Final Answer:", 1)[1].strip()
    assert [e.text for e in of_type(events, FinalAnswer)] == [answer]
    assert (finished(events).status, finished(events).answer) == ("answered", answer)
    assert not of_type(events, ActionParsed)
    assert (search.got, weather.got) == ([], [])
