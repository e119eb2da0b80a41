"""System prompts: a user-editable template with ``{tools}`` and ``{format}`` filled per dialect,
and ``{{name}}`` variables from the scenario (core/react_format/variables.py).

The default template and each dialect's format text follow well-known ReAct prompts; the
format text and tool line live in the dialect's spec
(:mod:`sandbox_app.core.react_format.dialects`), next
to the call forms the parser reads, so a run asks for exactly the syntax it will parse.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from sandbox_app.core.react_format.dialects import Dialect, spec
from sandbox_app.core.react_format.variables import (
    VARIABLE,
    filler,
    oversize_line,
    undefined_line,
)
from sandbox_app.core.tools import Tool

PLACEHOLDERS = ("tools", "format")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# One pass over both kinds, a {{variable}} tried first (else its inner {name} would be read as
# a placeholder), so no filled-in value is read again.
_EITHER = re.compile(VARIABLE + r"|" + _PLACEHOLDER.pattern)

DEFAULT_TEMPLATE = (
    "You are a helpful assistant that solves problems step by step with tools.\n"
    "Facts and numbers must come from the tools, not from memory.\n\n"
    "Available tools:\n{tools}\n\n{format}"
)

# Native tool calling's {format}: the schemas go to the API, the prompt says how to use them.
NATIVE_FORMAT = (
    "Use the tools through tool calls. Before each call, say in one short sentence what you "
    "need and why. When you know the final answer, reply with it alone, without a tool call."
)


def tool_lines(tools: Iterable[Tool]) -> str:
    """The prompt's {tools} in native mode (the schemas carry the same, for the API)."""
    lines = [f"- {t.name}: {t.description}" for t in tools]
    return "\n".join(lines) if lines else "(no tools are enabled)"


class PromptError(ValueError):
    """A template the engine cannot fill, with a message that says how to fix it."""


def render_tools(tools: Iterable[Tool], dialect: Dialect) -> str:
    line = spec(dialect).tool_line
    rendered = [
        line.format(
            name=t.name, Name=t.name.capitalize(), hint=t.input_hint, description=t.description
        )
        for t in tools
    ]
    return "\n".join(rendered) if rendered else "(no tools are enabled)"


def placeholders_in(template: str) -> list[str]:
    """The single-brace placeholders the template uses, in order, each once (``{{name}}``
    variables and JSON braces are not placeholders)."""
    return list(dict.fromkeys(m.group(2) for m in _EITHER.finditer(template) if m.group(2)))


def unknown_placeholders(template: str) -> list[str]:
    """Placeholders other than ``{tools}`` and ``{format}``; JSON braces are not placeholders."""
    return sorted(name for name in placeholders_in(template) if name not in PLACEHOLDERS)


def render_prompt(
    template: str,
    tools: Iterable[Tool],
    dialect: Dialect,
    *,
    native: bool = False,
    variables: Mapping[str, str] | None = None,
    keep_undefined: bool = False,
) -> str:
    """Fill the template. Raises :class:`PromptError` naming any unknown placeholder or, unless
    ``keep_undefined`` (the prompt panel's view: left as written, flagged beside it), any
    undefined ``{{variable}}``.

    ``native``: the model calls tools through the API (core/running/native_tools.py), so
    {format}
    asks for tool calls instead of the dialect's Action lines."""
    unknown = unknown_placeholders(template)
    if unknown:
        names = ", ".join("{" + n + "}" for n in unknown)
        raise PromptError(
            f"Unknown placeholder {names} in the system prompt; use {{tools}} and {{format}}."
        )
    variables = variables or {}
    where = {"the system prompt": template}
    undefined = undefined_line(variables, where) or oversize_line(variables, where)
    if undefined and not keep_undefined:  # kept: left as written, as fill leaves them
        raise PromptError(undefined)
    use = filler(template, variables)
    if native:
        values = {"tools": tool_lines(tools), "format": NATIVE_FORMAT}
    else:
        values = {"tools": render_tools(tools, dialect), "format": spec(dialect).format}

    def filled(m: re.Match[str]) -> str:
        if m.group(1):
            return use(m.group(1), m.group(0))
        return values[m.group(2)]

    return _EITHER.sub(filled, template)
