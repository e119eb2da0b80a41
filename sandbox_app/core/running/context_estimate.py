"""How much context a run of a scenario needs, estimated before it starts.

The health check (backends/local_servers/health.py) compares it with the context a local server
serves
now: a server whose window is smaller than the prompt plus the steps so far drops the start
of the conversation without a word, and the model "forgets" the format at step 3.

The estimate, per run of ``max_steps`` steps:

- the system prompt and the question, at :data:`CHARS_PER_TOKEN` characters a token (English
  prose and ReAct lines run 3.5-4.5 in the common tokenizers; the side of fewer characters
  is taken, so the estimate errs towards more tokens), plus :data:`MESSAGE_TOKENS` a message
  for the chat template's role markers;
- in native tool calling, each tool's schema again (sent beside the prompt);
- each step: the model's reply, at most its Max tokens (Auto: the 512 a ReAct step is given,
  ``model_traits.PLAIN_MAX_TOKENS``), and an observation of :data:`OBSERVATION_TOKENS`, the
  largest the tool router lets through (2,000 characters);
- the last step's reply must fit too: it is counted like the others.

It is an estimate for a warning, not a measure: the server's own prompt counts (the context
meter's) are the figures. The suggested window is the next power of two at or above it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from sandbox_app.core.react_format.prompts import DEFAULT_TEMPLATE, PromptError, render_prompt
from sandbox_app.core.running.model_traits import PLAIN_MAX_TOKENS
from sandbox_app.core.scenarios.run_input import RunInput
from sandbox_app.core.tools import Tool

CHARS_PER_TOKEN = 3.5
MESSAGE_TOKENS = 8  # a message's role markers in a chat template (<|im_start|>user\n …)
OBSERVATION_TOKENS = 2000 // 4  # the router's 2,000-character cap, at about 4 characters a token
SMALLEST_WINDOW = 2048


@dataclass(frozen=True)
class ContextNeed:
    """About ``tokens`` of context for a run of ``steps`` steps."""

    tokens: int
    steps: int

    @property
    def suggested_window(self) -> int:
        """A context size to set: the next power of two at or above the need (at least 2,048)."""
        return max(SMALLEST_WINDOW, 1 << max(0, self.tokens - 1).bit_length())

    @property
    def rounded(self) -> int:
        """The need as said to people ("about 6,500"): rounded up to a hundred."""
        return math.ceil(self.tokens / 100) * 100


def text_tokens(text: str) -> int:
    """About how many tokens ``text`` is (see the module docstring)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def context_need(
    system_prompt: str,
    question: str,
    steps: int,
    max_tokens: int | None = None,
    tool_schemas: str = "",
) -> ContextNeed:
    """The context a run of ``steps`` steps needs; ``max_tokens`` None is Auto."""
    reply = max_tokens if max_tokens is not None else PLAIN_MAX_TOKENS
    start = text_tokens(system_prompt) + text_tokens(question) + text_tokens(tool_schemas)
    per_step = reply + OBSERVATION_TOKENS + 2 * MESSAGE_TOKENS  # the reply and its observation
    steps = max(1, steps)
    return ContextNeed(start + 2 * MESSAGE_TOKENS + steps * per_step, steps)


def scenario_context_need(scenario: RunInput, tools: Sequence[Tool]) -> ContextNeed:
    """The need of a run of ``scenario`` with ``tools`` (the ones its run would have)."""
    native = scenario.model.tool_calling == "native"
    try:
        prompt = render_prompt(
            scenario.system_prompt or DEFAULT_TEMPLATE,
            tools,
            scenario.prompt_dialect,
            native=native,
            variables=scenario.variables,
            keep_undefined=True,
        )
    except PromptError:  # a broken template: the run says so itself; count it as written
        prompt = scenario.system_prompt or DEFAULT_TEMPLATE
    schemas = "".join(f"{t.name}{t.description}{t.input_hint}" + " " * 80 for t in tools)
    return context_need(
        prompt,
        scenario.asked_question,
        scenario.max_steps,
        scenario.model.max_tokens,
        schemas if native else "",
    )
