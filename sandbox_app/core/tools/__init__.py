"""The tools a model may call, and the router that guards them."""

from __future__ import annotations

from collections.abc import Iterable

from sandbox_app.core.tools.base import Tool
from sandbox_app.core.tools.calculator import Calculator
from sandbox_app.core.tools.finish import Finish
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
]

TOOL_NAMES = ("calculator", "search", "finish")


def builtin_tools(
    enabled: Iterable[str] = TOOL_NAMES, documents: Iterable[str] = BRIGHTGRID_DOCUMENTS
) -> list[Tool]:
    """The built-in tools that are enabled, in the order the prompt lists them."""
    wanted = set(enabled)
    every: list[Tool] = [Calculator(), Search(tuple(documents)), Finish()]
    return [tool for tool in every if tool.name in wanted]
