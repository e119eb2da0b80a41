"""Route a parsed action to an allowed tool, with the guards a ReAct loop needs.

A name matches an enabled tool whatever its case, spaces, hyphens and underscores
(``Web Search``, ``web-search`` and ``webSearch`` all name ``web_search``), as long as exactly one
enabled tool matches. Unknown tools, over-long inputs, exceptions and timeouts all come back as
``Error: …`` observations, so the model can correct itself; nothing reaches the model as a
traceback.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sandbox_app.core.tools.action_objects import name_key, plain_input
from sandbox_app.core.tools.base import Tool
from sandbox_app.core.tools.object_inputs import object_input
from sandbox_app.core.tools.policy import Policy, denied, effective_policy
from sandbox_app.core.tools.recorded import Recorded, RecordedAnswers
from sandbox_app.core.untrusted.outside_text import clean
from sandbox_app.lazy_import import lazy_import

if TYPE_CHECKING:
    import asyncio
else:
    asyncio = lazy_import("asyncio")


Approver = Callable[[str, str], Awaitable[bool]]
INPUT_TOO_LONG = "Error: input is too long"


@dataclass(frozen=True)
class ToolResult:
    text: str
    error: bool
    seconds: float = 0.0
    recorded: Recorded | None = None  # answered from an imported trace, the tool not run


class ToolRouter:
    """Runs only the tools it was given, each by its policy (policy.py): a side-effecting tool
    never without the user's approval or trust."""

    def __init__(
        self,
        tools: Iterable[Tool],
        *,
        approve: Approver | None = None,
        timeout: float = 10.0,
        max_observation: int = 2000,
        policies: Mapping[str, Policy] | None = None,
        trusted: Collection[str] = (),
        recorded: RecordedAnswers | None = None,
    ) -> None:
        self._recorded = recorded  # a fork of an imported trace: its observations (recorded.py)
        self._tools = {tool.name.lower(): tool for tool in tools}
        self._by_key: dict[str, list[Tool]] = {}
        for tool in self._tools.values():
            self._by_key.setdefault(name_key(tool.name), []).append(tool)
        self._approve = approve
        self._policies = dict(policies or {})
        self._trusted = frozenset(trusted)  # side-effecting tools the user let run unasked
        self.timeout = timeout
        self.max_observation = max_observation

    async def run_tool(self, name: str, input: str) -> ToolResult:
        known = self._recorded.find(name, input) if self._recorded is not None else None
        if known is not None:  # what the trace recorded, as it recorded it
            return ToolResult(known.text, known.error, 0.0, known)
        started = time.perf_counter()
        # What a tool returns is text from outside (an MCP server's, a web page's, a plugin's):
        # a lone surrogate in it would stop every writer of the trace.
        text = self._truncate(clean(await self._run(name.lower(), input)))
        return ToolResult(text, text.startswith("Error"), time.perf_counter() - started)

    def resolve(self, name: str) -> Tool | None:
        """The enabled tool ``name`` means: its exact name in any case, else the one tool whose
        name matches ignoring spaces, hyphens and underscores. None if none or several match."""
        tool = self._tools.get(name.lower())
        if tool is not None:
            return tool
        matches = self._by_key.get(name_key(name), [])
        return matches[0] if len(matches) == 1 else None

    async def _run(self, name: str, input: str) -> str:
        tool = self.resolve(name)
        if tool is None:
            if not self._tools:
                return f'Error: unknown tool "{name}": no tools are enabled in this run.'
            return f'Error: unknown tool "{name}". Use: {", ".join(self._tools)}'
        if len(input) > tool.max_input:
            return INPUT_TOO_LONG
        policy = effective_policy(tool, self._policies.get(tool.name), self._trusted)
        if policy == "deny":
            return denied(tool.name)
        if policy == "ask" and not (self._approve and await self._approve(tool.name, input)):
            return f"Error: the user declined to run {tool.name}"
        try:
            # A tool may set its own limit (an MCP server's timeout, a mock's latency) or none
            # (ask me: a person answers when they answer).
            async with asyncio.timeout(getattr(tool, "timeout_s", self.timeout)):
                # A tool that reads a JSON object itself (MCP's) gets an object: keywords
                # (city="Paris") read as one, values typed by its schema (object_inputs.py).
                schema = getattr(tool, "parameters", None)
                given = object_input(input, schema) if isinstance(schema, dict) else None
                text = await tool.run(plain_input(input) if given is None else given)
        except TimeoutError:
            return "Error: tool timed out"
        except Exception as err:  # a tool bug must reach the model as one line, not a crash
            return f"Error: {type(err).__name__}: {err}"
        # An empty observation reads like a glitch; say what happened (e.g. after tool()).
        return (
            text if isinstance(text, str) and text.strip() else f"{tool.name} returned no output."
        )

    def _truncate(self, text: str) -> str:
        if len(text) <= self.max_observation:
            return text
        cut = len(text) - self.max_observation
        return f"{text[: self.max_observation]}… [truncated {cut:,} characters]"
