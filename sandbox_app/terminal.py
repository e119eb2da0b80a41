"""A run printed to a terminal: the trace coloured by who wrote each line, and a notice
while a silent server is being waited for.

The text itself comes from core/trace_text.py, the same text Copy trace and exports give; a
model line's colour comes from its ReAct label (core/dialects.py), as in the window.
"""

from __future__ import annotations

import asyncio
import os
import time
from contextlib import suppress
from typing import TextIO

from sandbox_app.core.dialects import label_role
from sandbox_app.core.events import Event, Notice, StepStarted
from sandbox_app.core.trace_text import TraceText

COLOURS = {
    "thought": "\033[36m",
    "action": "\033[33m",
    "observation": "\033[35m",
    "answer": "\033[1;32m",
    "error": "\033[31m",
    "dim": "\033[2;9m",
    "step": "\033[1m",
    "waiting": "\033[2m",
    "thinking": "\033[2;3m",  # dim italic: there, but out of the way of the ReAct lines
}
RESET = "\033[0m"


class WaitingNotice:
    """Shows that a request is waiting: from a step's start until its first text or event.

    A server that accepts the connection and never answers would otherwise leave only the
    step's header on screen until the timeout. On a terminal one status line, rewritten in
    place every second, says so and is erased when the wait ends; in a pipe or a log a plain
    line appears at 1, 2, 4, 8… s, so a minute's wait is six lines, not sixty.
    """

    def __init__(self, out: TextIO, host: str) -> None:
        self.out = out
        self.host = host
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
            self.out.write(f"\r{COLOURS['waiting']}{text}{RESET}\033[K")
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
    """Writes events as a terminal trace; on a terminal, lines are coloured by who wrote them."""

    def __init__(self, out: TextIO, *, thinking: bool = True) -> None:
        self.out = out
        self.colour = out.isatty() and "NO_COLOR" not in os.environ
        self._text = TraceText(thinking=thinking)
        self._line = ""  # model text of the current line, held to colour it by its label

    def show(self, event: Event) -> None:
        for text, role in self._text.feed(event):
            if role == "model":
                self._model_text(text)
            else:
                self._flush_line()
                self._write(text, role)

    def _model_text(self, text: str) -> None:
        if not self.colour:
            self._write(text, None)
            return
        self._line += text
        while "\n" in self._line:
            line, self._line = self._line.split("\n", 1)
            self._write(line + "\n", label_role(line))

    def _flush_line(self) -> None:
        if self._line:
            self._write(self._line, label_role(self._line))
            self._line = ""

    def _write(self, text: str, role: str | None) -> None:
        if self.colour and role in COLOURS:
            body = text.rstrip("\n")
            text = f"{COLOURS[role]}{body}{RESET}" + text[len(body) :]
        self.out.write(text)
        self.out.flush()
