"""One presentation of events (core/results/presentation.py): the window's trace, the terminal, the
Markdown and the HTML export are drawn from the same pieces, and say the same lines in the
same roles; every role has a style in every front end."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from PySide6.QtGui import QTextBlock
from pytestqt.qtbot import QtBot

from sandbox_app.cli.terminal import COLOURS, RESET, TracePrinter
from sandbox_app.core.results import presentation
from sandbox_app.core.results.presentation import CUT_NOTE, Piece, Presentation, Role
from sandbox_app.core.results.run_export import PLAIN_ROLES as HTML_PLAIN_ROLES
from sandbox_app.core.results.run_export import css, run_html, run_markdown
from sandbox_app.core.results.trace_text import TEXT_MARKS
from sandbox_app.core.running.events import (
    Event,
    FabricationCut,
    FormatError,
    Notice,
    Observation,
    ReasoningDelta,
    RunFinished,
    StepFinished,
    StepStarted,
    TokenDelta,
)
from sandbox_app.core.running.metrics import RunMetrics, StepMetrics
from sandbox_app.core.running.records import RunRecord
from sandbox_app.ui.common import theme
from sandbox_app.ui.trace.highlighter import PLAIN_ROLES, formats_for
from sandbox_app.ui.trace.trace_view import TraceView


def _metrics(step: int) -> StepMetrics:
    return StepMetrics(step, 0.1, 1.0, 10, 20, False, reasoning_tokens=5, thinking_s=0.5)


# A run with every kind of line the trace draws; model text ends mid-line before a tool's
# result, and an unlabelled model line continues the Thought above it.
EVENTS: list[Event] = [
    StepStarted(1),
    ReasoningDelta(1, "The user wants a price.\nAction: gue"),
    ReasoningDelta(1, "ss[1]\n"),
    TokenDelta(1, "Thought: I need the"),
    TokenDelta(1, " price.\nIt is in the docs.\n"),
    TokenDelta(1, "Action: search[price]"),
    Observation(1, "search", "Pro costs $20.", False, "Observation: Pro costs $20."),
    StepFinished(1, _metrics(1)),
    StepStarted(2),
    TokenDelta(2, "Thought: multiply.\nAction: calculator[20 * 12]\n"),
    FabricationCut(2, "Observation: 240\nThought: done\n"),
    Observation(2, "calculator", "bad", True, "Observation: error: bad input"),
    Notice(2, "The server said 429: retrying in 1 s"),
    FormatError(2, "Your reply had no Action or Answer."),
    StepFinished(2, _metrics(2)),
    StepStarted(3),
    ReasoningDelta(3, "Now answer.\n"),
    TokenDelta(3, "Answer: $240 per year\n"),
    StepFinished(3, _metrics(3)),
]
HEADER = "<thinking header>"  # each front end's own words for it (the window's: its time)


class Terminal:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


@pytest.fixture
def fed(monkeypatch: pytest.MonkeyPatch) -> list[Piece]:
    """Every piece any front end is given by core/results/presentation.py, in order."""
    log: list[Piece] = []
    feed = Presentation.feed

    def logged(self: Presentation, event: Event) -> list[Piece]:
        pieces = feed(self, event)
        log.extend(pieces)
        return pieces

    monkeypatch.setattr(presentation.Presentation, "feed", logged)
    return log


def record() -> RunRecord:
    run = RunRecord()
    run.add([*EVENTS, RunFinished("answered", "", "$240 per year", RunMetrics())])
    return run


def unmarked(line: str, role: Role) -> str:
    before, after = TEXT_MARKS.get(role, ("", ""))
    if line and line.startswith(before) and line.endswith(after):
        return line[len(before) : len(line) - len(after)]
    return line


def terminal_lines(text: str) -> list[tuple[str, Role]]:
    """A coloured terminal's text → (line, role), the role read from the line's colour."""
    by_code = {code: role for role, code in COLOURS.items() if code}
    by_code[COLOURS[Role.THINKING]] = Role.THINKING  # its header has the same colour
    out: list[tuple[str, Role]] = []
    role, line, line_role = Role.MODEL, "", None
    for part in re.split(r"(\x1b\[[0-9;]*m)", text):
        if part == RESET:
            role = Role.MODEL
        elif part.startswith("\x1b["):
            role = by_code[part]
        else:
            for i, chunk in enumerate(part.split("\n")):
                if i:
                    out.append((line, line_role or role))
                    line, line_role = "", None
                if chunk and line_role is None:
                    line_role = role
                line += chunk
    header = (HEADER, Role.THINKING_HEADER)
    return [header if t == "Thinking (never acted on):" else (unmarked(t, r), r) for t, r in out]


class Page(HTMLParser):
    """The HTML trace's lines: (text, class) of each div and each thinking summary."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[tuple[str, Role]] = []
        self._role: Role | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = dict(attrs).get("class")
        if tag in ("div", "summary") and names and names != "trace":
            self._role = Role(names)
            self.lines.append(("", self._role))

    def handle_endtag(self, tag: str) -> None:
        self._role = None

    def handle_data(self, data: str) -> None:
        if self._role is not None:
            text = self.lines[-1][0] + data.replace("\xa0", "")
            self.lines[-1] = (HEADER if self._role is Role.THINKING_HEADER else text, self._role)


def view_lines(view: TraceView) -> list[tuple[str, Role]]:
    """The window's lines, each with the role its drawn colour says (the theme's formats)."""
    formats = formats_for(view.palette()).items()
    by_colour = {f.foreground().color().name(): r for r, f in formats if r not in PLAIN_ROLES}
    out: list[tuple[str, Role]] = []
    block: QTextBlock = view.document().firstBlock()
    while block.isValid():
        drawn = block.layout().formats()
        role = by_colour[drawn[0].format.foreground().color().name()] if drawn else Role.MODEL
        out.append((HEADER if role is Role.THINKING_HEADER else block.text(), role))
        block = block.next()
    return out


def test_every_front_end_draws_the_same_pieces_as_the_same_lines(
    qtbot: QtBot, fed: list[Piece], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    run = record()
    shown = [e for e in run.events if not isinstance(e, RunFinished)]  # exports leave it out

    view = TraceView()
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    for event in shown:
        view.show_event(event)
    view.set_show_thinking(True)
    view.flush_all()
    window_pieces, window = list(fed), view_lines(view)
    fed.clear()

    terminal = Terminal()
    printer = TracePrinter(terminal)  # type: ignore[arg-type]
    for event in shown:
        printer.show(event)
    terminal_pieces, coloured = list(fed), terminal_lines(terminal.text)
    fed.clear()

    markdown = run_markdown(run)
    markdown_pieces = list(fed)
    fed.clear()
    parser = Page()
    parser.feed(run_html(run, theme.LIGHT))
    html_pieces, page = list(fed), parser.lines

    assert window_pieces == terminal_pieces == markdown_pieces == html_pieces
    assert {p.role for p in window_pieces} >= {
        Role.STEP, Role.THINKING_HEADER, Role.THINKING, Role.MODEL, Role.OBSERVATION,
        Role.DROPPED, Role.NOTICE, Role.ERROR,
    }  # fmt: skip

    # The same lines in the same roles: the window's, a terminal's and the HTML page's.
    assert window == coloured == page
    for line in (
        ("── Step 2 ──", Role.STEP),
        ("Action: guess[1]", Role.THINKING),  # thinking is never read for labels
        ("It is in the docs.", Role.THOUGHT),  # an unlabelled line keeps the label above
        ("Action: search[price]", Role.ACTION),
        ("Observation: Pro costs $20.", Role.OBSERVATION),
        ("Observation: 240", Role.DROPPED),
        ("Thought: done", Role.DROPPED),
        (CUT_NOTE, Role.NOTICE),
        ("Observation: error: bad input", Role.ERROR),
        ("Answer: $240 per year", Role.ANSWER),
    ):
        assert line in window
    # And the Markdown export's text is the terminal's without colours.
    fenced = markdown.split("```text\n", 1)[1].rsplit("\n```", 1)[0]
    plain = Terminal()
    plain.isatty = lambda: False  # type: ignore[method-assign]
    printer = TracePrinter(plain)  # type: ignore[arg-type]
    for event in shown:
        printer.show(event)
    assert fenced == plain.text.rstrip("\n")


@pytest.mark.parametrize(
    "styles",
    [theme.LIGHT, theme.DARK, theme.HIGH_CONTRAST_LIGHT, theme.HIGH_CONTRAST_DARK],
    ids=["light", "dark", "high contrast light", "high contrast dark"],
)
def test_every_role_has_a_style_in_every_front_end(styles: dict[str, theme.Style]) -> None:
    # The window: the theme's styles by role name, the plain roles in the text colour.
    assert set(styles) | set(PLAIN_ROLES) == set(Role)
    assert set(styles) & set(PLAIN_ROLES) == set()
    # The terminal: a colour (or, said so, none) for each role.
    assert set(COLOURS) == set(Role)
    # The HTML page: a class for each role, in the window's colours.
    rules = css(styles)
    for role in Role:
        colour = "inherit" if role in HTML_PLAIN_ROLES else styles[role].color
        assert f".{role}{{color:{colour}" in rules


def test_the_windows_formats_cover_every_role(qtbot: QtBot) -> None:
    view = TraceView()
    qtbot.addWidget(view)
    assert set(formats_for(view.palette())) == set(Role)
