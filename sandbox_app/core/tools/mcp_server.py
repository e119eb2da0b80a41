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
    def identity(self) -> tuple[object, ...]:
        """What the server is, whatever the scenario calls it: the program started (command,
        arguments, the variables it is given and the names of those filled with secrets), or
        the URL reached. Trust and a live connection follow this, never the name, so a file
        naming another program like a trusted one gets no trust (application/mcp_set.py). The
        working folder is the app's own for every server, so it adds nothing here."""
        if self.url:
            return ("url", self.url)
        return ("stdio", self.command, self.args, tuple(sorted(self.env.items())), self.secret_env)

    @property
    def where(self) -> str:
        """How the user recognises it: its command line or its URL."""
        return self.url or " ".join((self.command, *self.args))
