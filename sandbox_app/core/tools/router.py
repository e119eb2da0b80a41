"""Route a parsed action to an allowed tool, with the guards seed 002 asks for.

Unknown tools, over-long inputs, exceptions and timeouts all come back as ``Error: …``
observations, so the model can correct itself; nothing reaches the model as a traceback.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from sandbox_app.core.tools.base import Tool

Approver = Callable[[str, str], Awaitable[bool]]
INPUT_TOO_LONG = "Error: input is too long"


@dataclass(frozen=True)
class ToolResult:
    text: str
    error: bool
    seconds: float = 0.0


class ToolRouter:
    """Runs only the tools it was given; non-read-only tools only with the user's approval."""

    def __init__(
        self,
        tools: Iterable[Tool],
        *,
        approve: Approver | None = None,
        timeout: float = 10.0,
        max_observation: int = 2000,
    ) -> None:
        self._tools = {tool.name.lower(): tool for tool in tools}
        self._approve = approve
        self.timeout = timeout
        self.max_observation = max_observation

    async def run_tool(self, name: str, input: str) -> ToolResult:
        started = time.perf_counter()
        text = await self._run(name.lower(), input)
        text = self._truncate(text)
        return ToolResult(text, text.startswith("Error"), time.perf_counter() - started)

    async def _run(self, name: str, input: str) -> str:
        tool = self._tools.get(name)
        if tool is None:
            if not self._tools:
                return f'Error: unknown tool "{name}": no tools are enabled in this run.'
            return f'Error: unknown tool "{name}". Use: {", ".join(self._tools)}'
        if len(input) > tool.max_input:
            return INPUT_TOO_LONG
        if not tool.read_only and not (self._approve and await self._approve(tool.name, input)):
            return f"Error: the user declined to run {tool.name}"
        try:
            async with asyncio.timeout(self.timeout):
                return await tool.run(_plain_input(input))
        except TimeoutError:
            return "Error: tool timed out"
        except Exception as err:  # a tool bug must reach the model as one line, not a crash
            return f"Error: {type(err).__name__}: {err}"

    def _truncate(self, text: str) -> str:
        if len(text) <= self.max_observation:
            return text
        cut = len(text) - self.max_observation
        return f"{text[: self.max_observation]}… [truncated {cut:,} characters]"


def _plain_input(input: str) -> str:
    """``{"q": "refund days"}`` (seed 000's Action Input style) → ``refund days``."""
    if not input.startswith("{"):
        return input
    try:
        value = json.loads(input)
    except ValueError:
        return input
    if isinstance(value, dict) and len(value) == 1:
        (only,) = value.values()
        if isinstance(only, str):
            return only
    return input
