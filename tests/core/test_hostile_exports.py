"""Exports keep text from a model, a file or a server as text: a reply holding a code fence,
an image, raw HTML and a heading, a question holding a script and a newline, a model name
holding backticks. The Markdown is checked by CommonMark's own rules (a fence closes only on a
line of at least as many backticks; a backslash makes punctuation literal), the HTML is
parsed and every element and attribute must be the page's own."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from sandbox_app.core.results.compare import COLUMNS, LaneRecord
from sandbox_app.core.results.eval_report import results_markdown, to_html
from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.results.exports import to_markdown
from sandbox_app.core.results.run_export import run_html, run_markdown
from sandbox_app.core.running.events import RunFinished, TokenDelta
from sandbox_app.core.running.metrics import RunMetrics
from sandbox_app.core.running.records import RunRecord, RunSettings
from sandbox_app.core.scenarios.scenario import Expected
from sandbox_app.core.untrusted.markdown import code, fence, inline

REPLY = (
    "Thought: done ```\n"
    "```\n"
    "![pixel](https://evil.invalid/p.png)\n"
    '<img src="https://evil.invalid/x.png" onerror="alert(1)">\n'
    "````\n"
    "# Owned\n"
    "Answer: <b>42</b> | ![x](https://evil.invalid/a.png) [link](https://evil.invalid)"
)
QUESTION = "<script>alert(1)</script>\n# Second heading ![q](https://evil.invalid/q.png)"
MODEL = "m`` <img src=https://evil.invalid/m.png> `"
ANSWER = "<b>42</b> | ![x](https://evil.invalid/a.png) &lt;i&gt; $x$ ~s~"
EVIL = ("evil.invalid", "onerror", "<script", "<img", "<b>")


def hostile_record() -> RunRecord:
    record = RunRecord(RunSettings(backend="custom", model=MODEL, question=QUESTION))
    done = RunFinished("answered", "<i>reason</i>\n# too", ANSWER, RunMetrics())
    record.add([TokenDelta(1, REPLY), done])
    return record


# ---- Markdown ------------------------------------------------------------------------------

_ESCAPED = re.compile(r"\\.")


def unescaped(line: str) -> str:
    """A line without its backslash escapes: what Markdown could still read as markup."""
    return _ESCAPED.sub("", line)


def fenced_block(markdown: str) -> tuple[list[str], list[str]]:
    """(the lines before the first fence, the lines inside it); asserts the block runs to the
    document's end, by CommonMark's rule for a fence's end."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"`{3,}", line))
    marks = len(re.match(r"`+", lines[start]).group())  # type: ignore[union-attr]
    closing = re.compile(rf" {{0,3}}`{{{marks},}}\s*$")
    end = next(i for i in range(start + 1, len(lines)) if closing.match(lines[i]))
    assert [line for line in lines[end + 1 :] if line.strip()] == [], "text after the fence"
    return lines[:start], lines[start + 1 : end]


def test_a_runs_markdown_keeps_model_and_file_text_as_text() -> None:
    markdown = run_markdown(hostile_record())
    head, inside = fenced_block(markdown)
    # Every line of the reply is inside the one fence, and nothing after it.
    for line in REPLY.splitlines():
        assert any(line in shown for shown in inside), line
    # The header: one heading, and no markup outside backslash escapes and the code span.
    assert head[0].startswith("# ")
    assert [line for line in head if line.startswith("#")] == [head[0]]
    for line in head:
        readable = unescaped(line.replace(code(MODEL), ""))
        assert not re.search(r"[<>\[\]`|!&$~]", readable), line
    assert code(MODEL) in markdown


def test_the_comparisons_markdown_table_keeps_each_cell_in_its_column() -> None:
    record = LaneRecord("Lane\n| 1", MODEL)
    record.history.start().add(
        [TokenDelta(1, f"Answer: {ANSWER}"), RunFinished("answered", "", ANSWER, RunMetrics())]
    )
    table = to_markdown([record.summary(Expected("42"), None)]).splitlines()
    assert len(table) == 3  # header, rule, one row: no newline from the text survives
    row = unescaped(table[2])
    assert row.count("|") == len(COLUMNS) + 1
    assert not re.search(r"[<>\[\]`!&$~]", row), table[2]


def test_the_test_sets_markdown_keeps_a_lanes_name_as_text() -> None:
    """A lane is named by the scenario file (its model): its summary line, like the table's
    header, shows the name and makes no image, no HTML."""
    lane = "m ![t](http://x/y.png) <img src=x>"
    result = EvalResult.from_dict(
        {"lane": lane, "case": 0, "repeat": 0, "passed": True, "answer": ANSWER}
    )
    markdown = results_markdown([QUESTION], [lane], [result])
    for line in markdown.splitlines():
        assert not re.search(r"[<>\[\]`!&$~]", unescaped(line)), line
    summary = markdown.splitlines()[0]
    assert summary.startswith(f"- {inline(lane)}: 100% ")  # the name shown, escaped


def test_the_rule_itself() -> None:
    assert fence("a ```` b") == "`````text\na ```` b\n`````"
    assert inline("a\n<b>|#</b>") == r"a \<b\>\|\#\</b\>"
    assert code("``x`") == "``` ``x` ```"


# ---- HTML ----------------------------------------------------------------------------------


class Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attributes: list[tuple[str, str]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes += [(name, value or "") for name, value in attrs]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(page: str) -> Elements:
    elements = Elements()
    elements.feed(page)
    elements.close()
    return elements


def test_a_runs_html_page_has_only_its_own_elements() -> None:
    page = parsed(run_html(hostile_record(), {}))
    own = {"html", "head", "meta", "title", "style", "body", "h1", "p", "div", "ul", "li"}
    assert page.tags <= own  # the settings are a list of the page's own
    assert {name for name, _ in page.attributes} <= {"lang", "charset", "class"}
    assert not [v for _, v in page.attributes if any(e in v for e in EVIL)]
    # …and the hostile text is shown, as text.
    text = "".join(page.text)
    assert '<img src="https://evil.invalid/x.png" onerror="alert(1)">' in text
    assert "<script>alert(1)</script>" in text


def test_the_evaluation_report_has_only_its_own_elements() -> None:
    result = EvalResult.from_dict(
        {
            "lane": "lane' onmouseover='alert(1)",
            "case": 0,
            "repeat": 0,
            "passed": False,
            "answer": "x' onerror='alert(1)' data-evil='<img src=https://evil.invalid/r.png>",
            "expected": "<b>42</b>",
            "status": "answered",
            "reason": "<script>alert(1)</script>",
        }
    )
    page = parsed(to_html("<i>title</i>", [QUESTION], [result.lane], [result]))
    assert page.tags <= {
        *("html", "head", "meta", "title", "style", "body", "h1", "h2"),
        *("table", "tr", "th", "td", "ul", "li"),
    }
    assert {name for name, _ in page.attributes} <= {"charset", "class", "title"}
    assert "<script>alert(1)</script>" in "".join(page.text)
