"""The tools a model may call, and the router that guards them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sandbox_app.core.tools.base import Tool
from sandbox_app.core.tools.calculator import Calculator
from sandbox_app.core.tools.finish import Finish
from sandbox_app.core.tools.mock import AskUser, MockTool, MockToolSpec
from sandbox_app.core.tools.plugins import installed
from sandbox_app.core.tools.router import Approver, ToolResult, ToolRouter
from sandbox_app.core.tools.search import BRIGHTGRID_DOCUMENTS, Search

__all__ = [
    "BRIGHTGRID_DOCUMENTS",
    "TOOL_NAMES",
    "Approver",
    "Tool",
    "ToolResult",
    "ToolRouter",
    "builtin_tools",
    "tool_names",
    "tools_for",
]

TOOL_NAMES = ("calculator", "search", "finish")


def builtin_tools(
    enabled: Iterable[str] = TOOL_NAMES, documents: Iterable[str] = BRIGHTGRID_DOCUMENTS
) -> list[Tool]:
    """The built-in tools that are enabled, in the order the prompt lists them."""
    wanted = set(enabled)
    every: list[Tool] = [Calculator(), Search(tuple(documents)), Finish()]
    return [tool for tool in every if tool.name in wanted]


def tools_for(
    enabled: Iterable[str],
    documents: Iterable[str] = BRIGHTGRID_DOCUMENTS,
    custom: Iterable[MockToolSpec] = (),
    *,
    ask: AskUser | None = None,
    plugins: Sequence[Tool] | None = None,
    sources: Sequence[Tool] = (),
) -> list[Tool]:
    """The one place a run's tools are made: the enabled built-ins, the scenario's own (mock)
    tools, the installed plugins' (default: plugins.installed()) and those of connected
    sources (MCP servers, backends/mcp_client/mcp_tools.py), in prompt order."""
    wanted = set(enabled)
    every = _every(wanted, documents, custom, ask, plugins, sources)
    # One tool a name (any case): the first kept, in this order, so nothing shadows a
    # built-in or the scenario's own (MCP tools that clash are renamed on connecting).
    kept: dict[str, Tool] = {}
    for tool in every:
        if tool.name in wanted:
            kept.setdefault(tool.name.casefold(), tool)
    return list(kept.values())


def tool_names(
    custom: Iterable[MockToolSpec] = (),
    *,
    plugins: Sequence[Tool] | None = None,
    sources: Sequence[Tool] = (),
) -> list[str]:
    """Every name a run could enable (``--tools``): what :func:`tools_for` makes of them all."""
    custom = tuple(custom)
    names = [tool.name for tool in _every(set(TOOL_NAMES), (), custom, None, plugins, sources)]
    return [tool.name for tool in tools_for(names, (), custom, plugins=plugins, sources=sources)]


def _every(
    builtins: set[str],
    documents: Iterable[str],
    custom: Iterable[MockToolSpec],
    ask: AskUser | None,
    plugins: Sequence[Tool] | None,
    sources: Sequence[Tool],
) -> list[Tool]:
    return [
        *builtin_tools(builtins, documents),
        *(MockTool(spec, ask) for spec in custom),
        *(installed().tools if plugins is None else plugins),
        *sources,
    ]
