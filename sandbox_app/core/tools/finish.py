"""The ``finish`` tool: how the paren and paper dialects end a run with an answer.

The parser turns ``finish(…)`` / ``Finish[…]`` into a final answer before any tool runs; the
tool exists so the prompt can list it and a direct call still answers sensibly.
"""

from __future__ import annotations


class Finish:
    name = "finish"
    description = "Ends the task with the final answer."
    input_hint = "answer"
    read_only = True
    max_input = 500

    async def run(self, input: str) -> str:
        return input
