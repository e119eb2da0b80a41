"""Calculator, search, finish and the router, including a ReAct tutorial's worked examples."""

import asyncio

import pytest

from sandbox_app.core.tools import Search, ToolRouter, builtin_tools
from sandbox_app.core.tools.calculator import calculate
from tests.timing import best_time


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("20 * 12 * 7", "1680"),  # 7 developers at $20 a month for 12 months
        ("(1,200 + 300) / 4", "375"),  # thousands separators are read
        # Code, not maths: refused before anything runs, listing every operator that works.
        ("fetch('https://example.com')", "Error: numbers and + - * / // % ** ( ) only"),
        ("128 + 256", "384"),  # (128 + 256) * 2 - 100, one step at a time
        ("384 * 2", "768"),
        ("768 - 100", "668"),
        ("0.1 + 0.2", "0.3"),
        ("2 ** 10", "1024"),
        ("-5 // 2", "-3"),
        ("10 % 3", "1"),
        ("1 / 3", "0.333333333333"),
        ("-(2 + 3)", "-5"),
        ("1/0", "Error: division by zero"),
        ("1 / 2**4000", "7.58607870347e-1205"),  # tiny, but not 0
        ("2**4000 / 3", "4.39401364477e+1203"),  # huge, but no float overflow
        ("5 % 0", "Error: division by zero"),
    ],
)
def test_calculator(expression: str, expected: str) -> None:
    assert calculate(expression) == expected


HOSTILE = [
    "9**9**9",
    "10**10**10",
    "10**100000",
    "(" * 10_000 + "1" + ")" * 10_000,
    "1+" * 50_000 + "1",
    "٣ + ١",
    "__import__('os').system('echo pwned')",
    "(1).__class__",
    "x + 1",
    "(lambda: 1)()",
    "[i for i in range(10)]",
    "1e999999999",
    "-1e999999999",
    "1e5**1e5",
    "10**1e9",
    "e",
    "1e",
    "e5",
    "1e5e5",
    "2 * e",
    "1.2.3",
    "2**0.5",
    "",
]


HARMLESS = "(1,200 + 300) / 4"


@pytest.mark.parametrize("expression", HOSTILE, ids=range(len(HOSTILE)))
def test_calculator_rejects_hostile_input_fast(expression: str) -> None:
    assert calculate(expression).startswith("Error: ")
    # Refused before any real work: within a few times a harmless sum, timed in this same run
    # (10**100000 computed takes ~500 times the sum; 9**9**9, minutes).
    hostile = best_time(lambda: calculate(expression))
    harmless = best_time(lambda: calculate(HARMLESS))
    assert hostile < 50 * harmless, (
        f"{hostile * 1e6:.0f} µs to refuse, {harmless * 1e6:.0f} µs for {HARMLESS!r}"
    )


@pytest.mark.latency
def test_calculator_refuses_every_hostile_input_within_the_budget() -> None:
    slowest = max(HOSTILE, key=lambda e: best_time(lambda: calculate(e), repeats=3))
    seconds = best_time(lambda: calculate(slowest), repeats=3)
    assert seconds < 0.05, f"{slowest[:30]!r} took {seconds * 1000:.1f} ms (budget 50)"


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("1e5", "100000"),
        ("2.5E-3", "0.0025"),
        (".5e2", "50"),
        ("1.e2", "100"),
        ("1e+3 - 1", "999"),
        ("-1e5 * 2", "-200000"),
        ("2 ** 1e1", "1024"),
        ("1e-1000", "1e-1000"),  # exact: a float would be 0
        ("1e-1000 * 1e1000", "1"),  # a float would be 0 * inf = nan
        ("1e400", "1" + "0" * 400),  # a float would be inf
        ("0e999999999", "0"),
        ("1,200e3", "1200000"),
        # The calculator's own output reads back in: 10 / 3 * 10**999 printed like this.
        ("3.33333333333e+999 * 3 // 1e988", "999999999999"),
        # Plain decimals are exact too, past a float's 17 digits.
        ("0.12345678901234567890 * 10**20", "12345678901234567890"),
        ("1" * 400 + ".5", "1.11111111111e+399"),  # a float would be inf (and raise)
    ],
)
def test_calculator_reads_scientific_notation_exactly(expression: str, expected: str) -> None:
    assert calculate(expression) == expected


def test_calculator_rejects_letters_with_the_operators_that_work() -> None:
    for expression in ("e", "1e", "2 * e", "x + 1", "__import__('os')"):
        assert calculate(expression) == "Error: numbers and + - * / // % ** ( ) only", expression


def test_huge_exponent_is_a_number_too_large_error() -> None:
    assert calculate("1e999999999") == "Error: number too large"
    assert calculate("1e5**1e5") == "Error: number too large"


def test_search_finds_a_document_or_says_none_matches() -> None:
    search = Search()
    assert (
        search.search("Pro price per developer")
        == "Brightgrid Pro costs $20 per month per developer."
    )
    assert search.search("mobile app support") == "No matching document."


RANKED_DOCS = ["apples are red", "red red red cars", "blue sky", "red apples and green apples"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # Best match first, by a clear BM25 margin (0.78 vs 0.33; 0.64 vs 0.17), and never in
        # the documents' own order: an unranked or reversed result fails.
        ("green apples", "red apples and green apples | apples are red"),
        ("red cars", "red red red cars | apples are red"),
        ("red", "red red red cars | apples are red"),  # three "red"s outrank one
        ("sky", "blue sky"),  # documents that do not match are left out, even under top two
        ("purple", "No matching document."),
    ],
)
def test_search_ranks_the_best_match_first_and_returns_the_top_two(
    query: str, expected: str
) -> None:
    assert Search(RANKED_DOCS).search(query) == expected


def test_search_top_two_are_the_two_best_of_four() -> None:
    result = Search(RANKED_DOCS).search("red apples")
    # The two apple documents score 0.49 and 0.48: too close to pin their order, but both
    # beat "red red red cars" (0.22) and "blue sky" (0).
    assert sorted(result.split(" | ")) == ["apples are red", "red apples and green apples"]
    assert Search(RANKED_DOCS, top_k=4).search("red apples").split(" | ")[2] == "red red red cars"
    assert Search([]).search("anything") == "No matching document."


class Recorder:
    """A tool with a side effect, to prove approval gates it."""

    name = "send_email"
    description = "Sends an email."
    input_hint = "address"
    read_only = False
    max_input = 500

    def __init__(self) -> None:
        self.ran: list[str] = []

    async def run(self, input: str) -> str:
        self.ran.append(input)
        return "sent"


class ExampleStub:
    """Stand-ins that answer "ok: maths accepted" / "ok: searched for …", so the router's own
    errors (unknown tool, refused input) can be checked literally beside them."""

    read_only = True
    max_input = 200
    description = input_hint = ""

    def __init__(self, name: str) -> None:
        self.name = name

    async def run(self, input: str) -> str:
        if self.name == "calculator":
            return (
                calculate(input) if calculate(input).startswith("Error") else "ok: maths accepted"
            )
        return f'ok: searched for "{input}"'


def test_router_runs_only_allowed_tools_with_clear_errors() -> None:
    router = ToolRouter([ExampleStub("calculator"), ExampleStub("search")])
    results = [
        asyncio.run(router.run_tool(n, i)).text
        for n, i in [
            ("calculator", "20 * 12"),
            ("search", "refund days"),
            ("send_email", "boss@example.com"),
            ("calculator", "rm -rf /"),
        ]
    ]
    assert results == [
        "ok: maths accepted",
        'ok: searched for "refund days"',
        'Error: unknown tool "send_email". Use: calculator, search',
        "Error: numbers and + - * / // % ** ( ) only",  # lists every operator that works
    ]


def test_unknown_tool_with_no_tools_enabled_says_so() -> None:
    for router in (ToolRouter([]), ToolRouter(builtin_tools(enabled=[]))):
        result = asyncio.run(router.run_tool("search", "refund days"))
        assert (result.text, result.error) == (
            'Error: unknown tool "search": no tools are enabled in this run.',
            True,
        )


def test_router_limits_input_length_per_tool() -> None:
    router = ToolRouter(builtin_tools())
    assert (
        asyncio.run(router.run_tool("calculator", "1+" * 100 + "1")).text
        == "Error: input is too long"
    )
    long_query = "price " * 80  # 480 characters: fine for search, too long for the calculator
    assert not asyncio.run(router.run_tool("search", long_query)).error


def test_router_reports_tool_exceptions_as_one_line() -> None:
    class Broken(ExampleStub):
        async def run(self, input: str) -> str:
            raise KeyError("boom")

    result = asyncio.run(ToolRouter([Broken("broken")]).run_tool("broken", "x"))
    assert (result.text, result.error) == ("Error: KeyError: 'boom'", True)


def test_router_times_out_slow_tools() -> None:
    class Slow(ExampleStub):
        async def run(self, input: str) -> str:
            await asyncio.Event().wait()
            return "never"

    result = asyncio.run(ToolRouter([Slow("slow")], timeout=0.05).run_tool("slow", "x"))
    assert result.text == "Error: tool timed out"


def test_router_truncates_long_observations_with_a_marker() -> None:
    class Chatty(ExampleStub):
        async def run(self, input: str) -> str:
            return "x" * 5000

    result = asyncio.run(ToolRouter([Chatty("chatty")]).run_tool("chatty", "x"))
    assert result.text == "x" * 2000 + "… [truncated 3,000 characters]"


def test_tool_with_side_effects_never_runs_without_approval() -> None:
    tool = Recorder()
    no_approver = asyncio.run(ToolRouter([tool]).run_tool("send_email", "boss@example.com"))
    assert no_approver.text == "Error: the user declined to run send_email"

    async def decline(name: str, input: str) -> bool:
        return False

    async def accept(name: str, input: str) -> bool:
        return (name, input) == ("send_email", "boss@example.com")

    declined = asyncio.run(
        ToolRouter([tool], approve=decline).run_tool("send_email", "boss@example.com")
    )
    assert declined.text == "Error: the user declined to run send_email"
    assert tool.ran == []
    accepted = asyncio.run(
        ToolRouter([tool], approve=accept).run_tool("send_email", "boss@example.com")
    )
    assert (accepted.text, tool.ran) == ("sent", ["boss@example.com"])


def test_every_builtin_tool_is_read_only() -> None:
    assert all(tool.read_only for tool in builtin_tools())


def test_json_action_input_with_one_field_reaches_the_tool_as_text() -> None:
    router = ToolRouter(builtin_tools())
    result = asyncio.run(router.run_tool("search", '{"q": "refund days"}'))
    assert result.text == "Refunds take 5 working days."


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("refund time", "Refunds take 5 working days."),  # a plain word, another form
        ("how long do refunds take?", "Refunds take 5 working days."),
        ("exporting rows", "The free plan exports up to 5,000 rows."),
        ("developers cost", "Brightgrid Pro costs $20 per month per developer."),
    ],
)
def test_search_finds_a_word_in_another_form(query: str, found: str) -> None:
    assert Search().search(query).split(" | ")[0] == found


def test_search_ignores_stop_words_alone() -> None:
    assert Search().search("the of and") == "No matching document."
