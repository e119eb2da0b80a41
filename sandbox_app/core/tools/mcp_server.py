"""An MCP server a scenario names as a source of tools: a program over stdio, or a URL
(streamable HTTP). Only what starts or reaches it: its tools are listed when it is connected
(backends/mcp_client/mcp_tools.py), and no secret is ever here (``secret_env`` names variables whose
values come from the keyring or the environment)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class McpServerSpec:
    name: str
    command: str = ""  # stdio: the program to start…
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)  # …with these variables (no secrets)
    secret_env: tuple[str, ...] = ()  # variables read from the keyring or the environment
    url: str = ""  # streamable HTTP, instead of a command
    timeout_s: float = 10.0  # for one call

    @property
    def where(self) -> str:
        """How the user recognises it: its command line or its URL."""
        return self.url or " ".join((self.command, *self.args))
