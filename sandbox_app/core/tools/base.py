"""What every tool is: a named, described async function from a string to a string."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Tool(Protocol):
    """A tool the model may call.

    ``read_only`` tools run on their own; any other tool runs only after the user approves
    the exact input: sending emails, making payments or deleting things is not fine unless a
    person approves it.
    """

    name: str
    description: str  # shown to the model in the system prompt
    input_hint: str  # what goes between the brackets, e.g. "expression"
    read_only: bool
    max_input: int  # longer inputs are refused before the tool sees them

    async def run(self, input: str) -> str: ...


# A tool may also have ``parameters``: a JSON schema of its input (an MCP server's tools do).
# Native tool calling then sends that schema and hands the tool the call's JSON object as text.
# And ``timeout_s``: its own time limit in seconds, None for none (the router's is 10 s).
