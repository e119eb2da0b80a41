"""A person at the terminal, for ``react-sandbox run``: approves a tool call (y/N) and types
the result of an ask-me tool (core/tools/mock.py). The questions go to stderr, so a --json
document on stdout stays whole. With stdin not a terminal nobody can answer: the call is
declined, with one line on stderr that says how to let it run.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TextIO

from sandbox_app.cli.terminal import say, visible


class TerminalPerson:
    def __init__(self, stdin: TextIO, out: TextIO) -> None:
        self.stdin = stdin
        self.out = out

    async def approve(self, tool: str, input: str) -> bool:
        if not self.stdin.isatty():
            self._say(
                f"{tool} needs a person's approval and stdin is not a terminal: declined "
                f"(--allow {tool} lets it run)."
            )
            return False
        answer = await self._read(f"Run {tool} with input {input!r}? [y/N] ")
        return answer.strip().lower() in ("y", "yes")

    async def ask(self, tool: str, input: str) -> str | None:
        if not self.stdin.isatty():
            self._say(
                f"{tool} asks a person for its result and stdin is not a terminal: answered "
                "with an error (run it in a terminal, or change the tool's behaviour)."
            )
            return None
        answer = await self._read(
            f"The model called {tool} with {input!r}. Its result (an empty line declines): "
        )
        return answer.rstrip("\r\n") or None

    def _say(self, line: str) -> None:
        say(f"react-sandbox: {line}", self.out)

    async def _read(self, prompt: str) -> str:
        """One line from stdin, read on a daemon thread: a Ctrl+C while it waits must end the
        run, not wait for Enter (asyncio's executor threads are joined at exit)."""
        # The tool's name and input are the model's (or an MCP server's) words: made visible.
        print(f"\n{visible(prompt)}", end="", file=self.out, flush=True)
        loop = asyncio.get_running_loop()
        line: asyncio.Future[str] = loop.create_future()

        def settle(text: str) -> None:
            if not line.done():
                line.set_result(text)

        def read() -> None:
            loop.call_soon_threadsafe(settle, self.stdin.readline())

        threading.Thread(target=read, name="stdin", daemon=True).start()
        return await line
