"""Mock tools a scenario defines: a name and description for the prompt, and a behaviour.

A prompt engineer tests *their* tool descriptions and how a model reacts to a given
observation without writing code (promptfoo maps tool names to canned callbacks; here they
run inside a ReAct loop you can watch):

- ``canned``: an ordered table of rules, input pattern → observation; the first that matches
  answers, else the default. Patterns are ``exact`` (the whole input, spaces at the ends
  aside), ``contains`` (case-insensitive) or ``regex`` (searched with Python's syntax through
  ``core/untrusted/safe_regex.py``: off the event loop's thread and stopped after 0.1 s, so a
  runaway
  pattern is one error observation, never a frozen window).
- ``ask``: the user types the observation when the model calls it (a dialog in the window, the
  terminal in the CLI); declining answers the model with an error.
- ``error``: always the same error, to see how the model recovers.

An optional fixed latency makes a slow tool visible in the trace and the metrics.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from sandbox_app.core.untrusted import safe_regex
from sandbox_app.lazy_import import lazy_import

if TYPE_CHECKING:
    import asyncio
else:
    asyncio = lazy_import("asyncio")


Behaviour = Literal["canned", "ask", "error"]
BEHAVIOURS: tuple[Behaviour, ...] = ("canned", "ask", "error")
PatternKind = Literal["exact", "contains", "regex"]
PATTERN_KINDS: tuple[PatternKind, ...] = ("exact", "contains", "regex")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")
MAX_LATENCY_S = 30.0
# The observation a mock tool's ask asks for; None: the user declined (Esc).
AskUser = Callable[[str, str], Awaitable[str | None]]


@dataclass(frozen=True)
class CannedRule:
    pattern: str
    reply: str
    kind: PatternKind = "contains"

    def matches(self, text: str) -> bool:
        if self.kind == "exact":
            return text.strip() == self.pattern.strip()
        if self.kind == "contains":
            return self.pattern.casefold() in text.casefold()
        return safe_regex.search(self.pattern, text)


@dataclass(frozen=True)
class MockToolSpec:
    """A mock tool as the scenario file holds it."""

    name: str
    description: str
    input_hint: str = "input"
    read_only: bool = True
    behaviour: Behaviour = "canned"
    rules: tuple[CannedRule, ...] = ()
    # canned: the reply when no rule matches; error: the error every call returns.
    default: str = ""
    latency_s: float = 0.0


class MockTool:
    """A :class:`~sandbox_app.core.tools.base.Tool` made from a :class:`MockToolSpec`."""

    max_input = 2000

    def __init__(self, spec: MockToolSpec, ask: AskUser | None = None) -> None:
        self.spec = spec
        self.name = spec.name
        self.description = spec.description
        self.input_hint = spec.input_hint
        self.read_only = spec.read_only
        # A person answers when they answer; a canned reply takes its latency and no more.
        self.timeout_s = None if spec.behaviour == "ask" else spec.latency_s + 10.0
        self._ask = ask

    async def run(self, input: str) -> str:
        spec = self.spec
        if spec.latency_s > 0:
            await asyncio.sleep(spec.latency_s)
        if spec.behaviour == "error":
            text = spec.default or f"{spec.name} failed."
            return text if text.startswith("Error") else f"Error: {text}"
        if spec.behaviour == "ask":
            if self._ask is None:
                return f"Error: nobody is here to answer {spec.name}."
            answer = await self._ask(spec.name, input)
            return f"Error: the user declined to answer {spec.name}" if answer is None else answer
        # A regex rule may take up to its time limit: the window keeps drawing meanwhile.
        return await asyncio.to_thread(self._canned, input)

    def _canned(self, input: str) -> str:
        spec = self.spec
        for rule in spec.rules:
            try:
                if rule.matches(input):
                    return rule.reply
            except (safe_regex.MatchTooSlow, safe_regex.PatternError) as err:
                rule_name = f"{spec.name}'s rule {_shown(rule.pattern)}"
                return f"Error: {rule_name} could not be matched: {err}."
        return spec.default or f"{spec.name} has no reply for this input."


def _shown(pattern: str) -> str:
    return repr(pattern if len(pattern) <= 40 else f"{pattern[:39]}…")
