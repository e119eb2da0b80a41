"""A run printed to a terminal: the trace coloured by who wrote each line, and a notice
while a silent server is being waited for.

The text itself comes from core/results/trace_text.py, the same text Copy trace and exports give,
made from core/results/presentation.py's pieces; each line is coloured by its role, a model line by
its ReAct label (core/results/presentation.py's ``LineStyles``), as in the window.

One rule for everything the command line prints that a model, a tool, a server or a file
wrote: :func:`visible` first. A terminal obeys control characters wherever they come from, so
a reply could set the window's title, clear the screen, move the cursor to overwrite a line
with a fake "Final answer", hide a link (OSC 8) or reverse the text's direction; shown as
visible marks instead, they do nothing. The app's own colours are added after.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from contextlib import suppress
from typing import TextIO

from sandbox_app.core.results.presentation import LineStyles, Role
from sandbox_app.core.results.trace_text import TraceText
from sandbox_app.core.running.events import Event, Notice, StepStarted
from sandbox_app.core.scenarios.scenario import Expected

# The terminal's role → colour table (core/results/presentation.py's roles; "" is the terminal's
# own).
COLOURS: dict[Role, str] = {
    Role.MODEL: "",  # the model's lines before any label
    Role.THOUGHT: "\033[36m",
    Role.ACTION: "\033[33m",
    Role.OBSERVATION: "\033[35m",
    Role.ANSWER: "\033[1;32m",
    Role.ERROR: "\033[31m",
    Role.NOTICE: "\033[2m",
    Role.DROPPED: "\033[2;9m",  # dim, struck through
    Role.STEP: "\033[1m",
    Role.THINKING: "\033[2;3m",  # dim italic: there, but out of the way of the ReAct lines
    Role.THINKING_HEADER: "\033[2;3m",
    Role.SUMMARY: "",
}
WAITING = "\033[2m"  # the waiting notice: not part of the trace
RESET = "\033[0m"

# What a terminal would act on instead of showing: C0 controls but tab and newline, DEL, C1
# controls (0x9b is a one-character CSI) and the bidi embeddings, overrides and isolates.
_CONTROLS = (
    *(c for c in range(0x20) if chr(c) not in "\t\n"),
    0x7F,
    *range(0x80, 0xA0),
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
)


def _mark(code: int) -> str:
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ␛ for ESC, ␇ for BEL
    if code == 0x7F:
        return "\u2421"  # ␡
    # No picture for these: written as Python writes them.
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_VISIBLE = {code: _mark(code) for code in _CONTROLS}
# In a JSON document the same characters as JSON escapes: the same text once parsed.
_JSON_ESCAPED = {code: f"\\u{code:04x}" for code in _CONTROLS}


def visible(text: str) -> str:
    """``text`` with every character a terminal would act on shown as a mark instead."""
    return text.translate(_VISIBLE)


def json_visible(document: str) -> str:
    """A JSON document (from ``json.dumps``) with those characters written as escapes."""
    return document.translate(_JSON_ESCAPED)


def say(line: str, out: TextIO | None = None) -> None:
    """Print one line that may hold others' text (an error, a server's message), visibly."""
    print(visible(line), file=out or sys.stderr, flush=True)


class WaitingNotice:
    """Shows that a request is waiting: from a step's start until its first text or event.

    A server that accepts the connection and never answers would otherwise leave only the
    step's header on screen until the timeout. On a terminal one status line, rewritten in
    place every second, says so and is erased when the wait ends; in a pipe or a log a plain
    line appears at 1, 2, 4, 8… s, so a minute's wait is six lines, not sixty.
    """

    def __init__(self, out: TextIO, host: str) -> None:
        self.out = out
        self.host = visible(host)  # from the user's base URL, as typed
        self.live = out.isatty()  # a status line rewritten in place
        self.colour = self.live and "NO_COLOR" not in os.environ
        self._since: float | None = None  # when the current wait began
        self._next_s = 1  # the wait's next notice is due at this many seconds
        self._status_shown = False
        self._wait_began = asyncio.Event()  # wakes watch() when a new wait begins

    def saw(self, event: Event) -> None:
        """Note an event before it is shown: a step's start begins a wait, the rest end it."""
        self._erase()
        restart = isinstance(event, Notice) and self._since is not None  # a 429: still no text
        if isinstance(event, StepStarted) or restart:
            self._since = time.monotonic()
            self._next_s = 1
            self._wait_began.set()
        else:
            self._since = None

    async def watch(self) -> None:
        """Run for the whole run (cancelled at its end), showing each wait as it goes."""
        try:
            while True:
                since = self._since
                due = None if since is None else since + self._next_s - time.monotonic()
                if due is not None and due <= 0:
                    waited = int(self._next_s - due)
                    self._show(waited)
                    # Every second on a terminal; 1, 2, 4, 8… s elsewhere.
                    self._next_s = waited + 1 if self.live else 1 << waited.bit_length()
                    continue
                self._wait_began.clear()  # sleep until the notice is due or a new wait begins
                with suppress(TimeoutError):
                    async with asyncio.timeout(due):
                        await self._wait_began.wait()
        finally:
            self._erase()

    def _show(self, waited: int) -> None:
        text = f"waiting for {self.host}… {waited} s"
        if not self.live:
            self.out.write(f"[{text}]\n")
        elif self.colour:
            self.out.write(f"\r{WAITING}{text}{RESET}\033[K")
        else:
            self.out.write(f"\r{text}\033[K")
        self._status_shown = self.live
        self.out.flush()

    def _erase(self) -> None:
        if self._status_shown:
            self.out.write("\r\033[K")
            self.out.flush()
            self._status_shown = False


class TracePrinter:
    """Writes events as a terminal trace; on a terminal, lines are coloured by their role."""

    def __init__(
        self,
        out: TextIO,
        *,
        thinking: bool = True,
        expected: Expected | None = None,
        native: bool = False,
    ) -> None:
        """``expected``: the scenario's expected answer, which the end judges (✔ / ✘);
        ``native``: a native tool-calling run (its answer said as the window says it)."""
        self.out = out
        self.colour = out.isatty() and "NO_COLOR" not in os.environ
        self._text = TraceText(thinking=thinking, expected=expected, native=native)
        self._styles = LineStyles()
        self._line = ""  # model text of the current line, held to colour it by its label

    def show(self, event: Event) -> None:
        for role, raw, _ in self._text.written(event):
            text = visible(raw)  # before any colour of the app's own is added
            if role is Role.MODEL:
                self._model_text(text)
            else:
                self._flush_line()
                self._styles.of(role, "")  # a label carries only within the model's text
                self._write(text, role)

    def _model_text(self, text: str) -> None:
        if not self.colour:
            self._write(text, Role.MODEL)
            return
        self._line += text
        while "\n" in self._line:
            line, self._line = self._line.split("\n", 1)
            self._write(line + "\n", self._styles.of(Role.MODEL, line))

    def _flush_line(self) -> None:
        if self._line:
            self._write(self._line, self._styles.of(Role.MODEL, self._line))
            self._line = ""

    def _write(self, text: str, role: Role) -> None:
        colour = COLOURS[role] if self.colour else ""
        if colour:
            body = text.rstrip("\n")
            text = f"{colour}{body}{RESET}" + text[len(body) :]
        self.out.write(text)
        self.out.flush()
