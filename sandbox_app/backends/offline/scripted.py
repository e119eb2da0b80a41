"""The built-in offline model: replays a scenario's written replies, token by token.

The whole loop runs "without a model" on sample replies while the tools stay real, streaming
at a human-readable pace so a workshop sees the trace grow. The replies answer one question
(``Script.question``): asked another, it says so instead of replaying them. Replies written
for one prompt version (``Script.by_prompt``) are played when the run is told that version;
any other version gets the default replies, the same whatever the prompt says, and the run's
trace says which of the two it got (``notes``: a notice before the first step), so an edited
prompt that "guessed wrong" offline is never taken for the prompt's doing.
Asked with tools (native tool calling), it plays the same replies as a tool-calling model
would send them: the thought as content, the action as a streamed tool call.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncGenerator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from sandbox_app.backends.catalogue import request_fields
from sandbox_app.backends.catalogue.kinds import BackendConfig, BackendKind
from sandbox_app.core.react_format.parser import parse_turn
from sandbox_app.core.running.backend import (
    Backend,
    BackendError,
    Delta,
    Message,
    StreamParams,
    ToolCallPiece,
    Usage,
)
from sandbox_app.core.scenarios.run_input import RunInput, Script, ToldVersion
from sandbox_app.lazy_import import lazy_import

if TYPE_CHECKING:
    import asyncio
else:
    asyncio = lazy_import("asyncio")


_TOKEN = re.compile(r"\s*[\w$]+|\s*[^\w\s]|\s+")


def split_tokens(text: str) -> list[str]:
    """Word-ish pieces whose concatenation is exactly ``text``."""
    return _TOKEN.findall(text)


def _same_question(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


class ScriptedBackend:
    """Streams reply *n* at step *n* (counted by the assistant turns already in the messages)."""

    label = "Scripted (offline)"

    def __init__(self, script: Script, question: str) -> None:
        self.script = script
        self.question = question

    async def stream(
        self, messages: Sequence[Message], params: StreamParams
    ) -> AsyncGenerator[Delta, None]:
        asked = next((m["content"] for m in messages if m["role"] == "user"), "")
        answers = self.script.question or self.question
        if not _same_question(asked, answers):
            shown = answers if len(answers) <= 80 else answers[:79] + "…"
            raise BackendError(
                "The offline model has no replies for this question (its replies answer "
                f"{shown!r}); choose a model server to ask a new one."
            )
        step = sum(1 for m in messages if m["role"] == "assistant")  # tool messages aside
        if step >= len(self.script.replies):
            raise BackendError(
                f"Stopped: no reply (the script has {len(self.script.replies)} replies "
                f"and this is step {step + 1})."
            )
        request = {"model": "scripted", "messages": list(messages), "stop": list(params.stop)}
        yield Delta(sent_at=time.perf_counter(), request=request)
        reply = self.script.replies[step]
        if not self.script.ignore_stop:
            reply = _cut_at_stop(reply, params.stop)
        deltas = _as_tool_calls(reply, params, step) if params.tools else _as_text(reply)
        deltas = deltas[: params.max_tokens]
        rate = self.script.tokens_per_second
        started = time.perf_counter()
        for i, delta in enumerate(deltas):
            if rate > 0:
                # Pace against the start time so the rate holds however slow the consumer is.
                delay = started + i / rate - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
            yield delta
        prompt_tokens = sum(len(split_tokens(m.get("content") or "")) for m in messages)
        yield Delta(usage=Usage(prompt_tokens, len(deltas)))

    async def list_models(self) -> list[str]:
        return ["scripted"]

    async def aclose(self) -> None:
        return None


def _as_text(reply: str) -> list[Delta]:
    return [Delta(token) for token in split_tokens(reply)]


def _as_tool_calls(reply: str, params: StreamParams, step: int) -> list[Delta]:
    """A written ReAct reply as a tool-calling model sends it: its thought as content, its
    action as a call with the tool's one parameter (the schema's), or its answer as content."""
    turn = parse_turn(reply)
    if turn.kind != "action":
        return _as_text(turn.answer if turn.kind == "answer" else reply)
    schema = next((t for t in params.tools if t["function"]["name"] == turn.tool), None)
    names = list(schema["function"]["parameters"]["properties"]) if schema else ["input"]
    arguments = json.dumps({names[0]: turn.input})
    pieces = [ToolCallPiece(0, f"call_scripted_{step}", turn.tool)]
    pieces += [ToolCallPiece(0, arguments=token) for token in split_tokens(arguments)]
    return _as_text(turn.thought or "") + [Delta(tool_calls=(piece,)) for piece in pieces]


def _cut_at_stop(text: str, stops: Sequence[str]) -> str:
    cuts = [i for i in (text.find(s) for s in stops if s) if i != -1]
    return text[: min(cuts)] if cuts else text


def make(_config: BackendConfig, run: RunInput, _key: str, told: ToldVersion) -> Backend:
    # The question as asked: its {{variables}} filled, in the script's question as in the run's.
    script = run.script
    asked = replace(
        script,
        question=run.fill(script.question),
        replies=script.replies_for(told.id, told.name),
        by_prompt=(),
    )
    return ScriptedBackend(asked, run.asked_question)


SAME_FOR_EVERY_PROMPT = "offline: the same replies for every prompt (none written for this version)"


def notes(run: RunInput, told: ToldVersion) -> tuple[str, ...]:
    """Whether the replies this run plays were written for the version it is told (the
    RunSpec's: its tools, MCP servers' included, and a lane's pinned version counted; named as
    the history names it, else its short id) or are the ones every other prompt gets."""
    if run.script.written_for(told.id, told.name) is None:
        return (SAME_FOR_EVERY_PROMPT,)
    return (f"offline replies written for {told.name or told.id[:8]}",)


KIND = BackendKind(
    "scripted",
    "Scripted (offline)",
    make,
    fixed_model="scripted",
    about="Offline: replays the scenario's written replies.",
    who="the offline model",
    request=request_fields.OFFLINE,
    notes=notes,
)
