"""System prompts: a user-editable template with ``{tools}`` and ``{format}`` filled per dialect.

The format instructions and default templates come from the seeds' own prompts, so a run in
a dialect asks for exactly the syntax the parser reads in that dialect.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from sandbox_app.core.parser import Dialect
from sandbox_app.core.tools import Tool

PLACEHOLDERS = ("tools", "format")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")

FORMATS: dict[Dialect, str] = {
    # Seed 002, "The ReAct Format".
    "bracket": (
        "Each turn has one of two shapes:\n\n"
        "Thought: what I need to do next\n"
        "Action: tool[input]\n\n"
        "or, at the end:\n\n"
        "Thought: why I am sure\n"
        "Answer: the final answer\n\n"
        "After an action, stop. The system adds an Observation: line with the tool's result. "
        "Never write an observation yourself."
    ),
    # Seed 003's SYSTEM_PROMPT.
    "paren": (
        "You must follow this format exactly:\n\n"
        "Thought: describe your reasoning\n"
        "Action: tool_name(arg)\n"
        "Observation: the result of the action (provided by the system)\n"
        "...\n"
        "Final Answer: the final answer\n\n"
        "Stop after each Action; never write the Observation yourself."
    ),
    # Seed 000's prompting tip, with the final answer the loop needs to end.
    "action_input": (
        "Use tools when helpful. Reply with:\n"
        "Thought: your reasoning\n"
        "Action: <tool>\n"
        "Action Input: <JSON or text>\n\n"
        "Then stop and wait for the Observation. When you know the answer, reply with:\n"
        "Final Answer: <answer>"
    ),
    # The ReAct paper's numbered trajectory.
    "paper": (
        "Solve the task with interleaving Thought, Action, Observation steps, numbered from 1:\n"
        "Thought 1: reason about the current situation\n"
        "Action 1: Tool[input]\n"
        "Observation 1: the result (provided by the system)\n"
        "...\n"
        "Action n: Finish[answer] ends the task with the answer. Never write an Observation "
        "yourself."
    ),
}

_TOOL_LINE: dict[Dialect, str] = {
    "bracket": "- {name}[{hint}]: {description}",
    "paren": "- {name}({hint}: str) - {description}",
    "action_input": "- {name}: {description} Input: {hint}.",
    "paper": "- {Name}[{hint}]: {description}",
}

DEFAULT_TEMPLATE = (
    "You are a helpful assistant that solves problems step by step with tools.\n"
    "Facts and numbers must come from the tools, not from memory.\n\n"
    "Available tools:\n{tools}\n\n{format}"
)


class PromptError(ValueError):
    """A template the engine cannot fill, with a message that says how to fix it."""


def render_tools(tools: Iterable[Tool], dialect: Dialect) -> str:
    line = _TOOL_LINE[dialect]
    rendered = [
        line.format(
            name=t.name, Name=t.name.capitalize(), hint=t.input_hint, description=t.description
        )
        for t in tools
    ]
    return "\n".join(rendered) if rendered else "(no tools are enabled)"


def unknown_placeholders(template: str) -> list[str]:
    """Placeholders other than ``{tools}`` and ``{format}``; JSON braces are not placeholders."""
    found = [m.group(1) for m in _PLACEHOLDER.finditer(template)]
    return sorted({name for name in found if name not in PLACEHOLDERS})


def render_prompt(template: str, tools: Iterable[Tool], dialect: Dialect) -> str:
    """Fill the template. Raises :class:`PromptError` naming any unknown placeholder."""
    unknown = unknown_placeholders(template)
    if unknown:
        names = ", ".join("{" + n + "}" for n in unknown)
        raise PromptError(
            f"Unknown placeholder {names} in the system prompt; use {{tools}} and {{format}}."
        )
    values = {"tools": render_tools(tools, dialect), "format": FORMATS[dialect]}
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)
