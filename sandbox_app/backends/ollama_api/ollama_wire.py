"""Ollama's own API in the app's terms: what /api/chat is sent, what its chunks mean, its
failures as one line each, and a model's size for the model list.

Shapes from Ollama's API reference (docs/api.md in github.com/ollama/ollama): a chat request
is ``{model, messages, tools, stream, think, options: {num_ctx, temperature, top_p, seed,
num_predict, stop}, keep_alive}``; each streamed chunk a JSON line with ``message.thinking``,
``message.content`` and whole ``message.tool_calls`` (arguments as an object, not JSON text);
the last ``done: true`` with ``done_reason`` and ``prompt_eval_count`` / ``eval_count``.

No import of the ``ollama`` library here: the chunks are read by attribute, whatever object
the library made of them, and its errors are told apart in ollama_kind.py.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import Any

from sandbox_app.backends.catalogue.request_fields import OLLAMA, place
from sandbox_app.backends.ollama_api.model_store import size_text
from sandbox_app.backends.transport.errors import NO_TOOLS, sentence
from sandbox_app.backends.transport.sse import _count as counted  # a server's count checked
from sandbox_app.core.running.backend import (
    BackendError,
    Delta,
    Message,
    StreamParams,
    ToolCallPiece,
    Usage,
)

DEFAULT_URL = "http://localhost:11434"
# Ollama's "think" for the Think setting's words; a level is sent as it is (gpt-oss).
_THINK = {"off": False, "on": True}


def host_url(base_url: str) -> str:
    """The server's root: a URL typed with the OpenAI-compatible path (…:11434/v1) reaches
    the same server's own API without it."""
    url = (base_url or DEFAULT_URL).strip().rstrip("/")
    return url.removesuffix("/v1")


def chat_request(messages: Sequence[Message], params: StreamParams) -> dict[str, Any]:
    """The /api/chat body (the request inspector shows it as it went out)."""
    options: dict[str, Any] = {
        "num_ctx": params.context_window,
        "stop": list(params.stop) or None,  # text ReAct only: the engine sets it there
    }
    request: dict[str, Any] = {
        "model": params.model,
        "messages": ollama_messages(messages),
        "stream": True,
        "options": {name: value for name, value in options.items() if value is not None},
    }
    place(request, params, OLLAMA)
    if params.tools:
        request["tools"] = list(params.tools)
    if params.think is not None:
        request["think"] = _THINK.get(params.think, params.think)
    if params.keep_alive is not None:
        request["keep_alive"] = params.keep_alive
    return request


def ollama_messages(messages: Sequence[Message]) -> list[Message]:
    """OpenAI Chat Completions messages (what the engine hands every backend) in Ollama's
    shape: a call's arguments as an object, a tool result named by its tool, not by an id."""
    names: dict[str, str] = {}  # call id → tool name, from the assistant messages so far
    out: list[Message] = []
    for message in messages:
        role = message.get("role", "user")
        content = message.get("content") or ""
        if role == "assistant" and message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                function = call.get("function", {})
                names[call.get("id", "")] = function.get("name", "")
                calls.append(
                    {
                        "function": {
                            "name": function.get("name", ""),
                            "arguments": _arguments(function.get("arguments", "")),
                        }
                    }
                )
            out.append({"role": "assistant", "content": content, "tool_calls": calls})
        elif role == "tool":
            tool_name = names.get(message.get("tool_call_id", ""), "")
            out.append({"role": "tool", "content": content, "tool_name": tool_name})
        else:  # system, user, a text ReAct reply: content only (never PROVIDER)
            out.append({"role": role, "content": content})
    return out


def _arguments(text: str) -> dict[str, Any]:
    """A call's JSON arguments as the object Ollama takes; text that is not an object (the
    model's mistake, already answered with an error) goes back as nothing."""
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class ChunkReader:
    """One reply's chunks into deltas. Each tool call arrives whole; it gets an index of its
    own and an id (Ollama sends none), so two calls of one tool stay two calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.chunks = 0  # chunks with text: the "broke after N chunks" count

    def read(self, chunk: Any) -> list[Delta]:
        message = getattr(chunk, "message", None)
        deltas: list[Delta] = []
        thinking = getattr(message, "thinking", None) or ""
        content = getattr(message, "content", None) or ""
        if thinking:
            deltas.append(Delta(reasoning=thinking))
        if content:
            self.chunks += 1
            deltas.append(Delta(text=content))
        pieces = []
        for call in getattr(message, "tool_calls", None) or ():
            function = call.function
            pieces.append(
                ToolCallPiece(
                    self.calls,
                    f"call_{self.calls}",
                    function.name,
                    json.dumps(dict(function.arguments or {})),
                )
            )
            self.calls += 1
        if pieces:
            deltas.append(Delta(tool_calls=tuple(pieces)))
        if getattr(chunk, "done", False):
            deltas.extend(_final(chunk))
        return deltas


def _final(chunk: Any) -> list[Delta]:
    """The last chunk: its counts (checked as sse.py checks one), and why it stopped
    ("length": cut by num_predict)."""
    out: list[Delta] = []
    if chunk.prompt_eval_count is not None or chunk.eval_count is not None:
        prompt, doubtful_in = counted(chunk.prompt_eval_count)
        completion, doubtful_out = counted(chunk.eval_count)
        out.append(Delta(usage=Usage(prompt, completion, doubtful=doubtful_in or doubtful_out)))
    reason = chunk.done_reason or "stop"
    if reason == "load":  # the model was loaded and nothing was asked of it
        out.append(Delta(notice="Ollama loaded the model but wrote no reply (done_reason load)."))
    elif reason == "unload":
        out.append(Delta(notice="Ollama unloaded the model instead of replying (keep_alive 0)."))
    else:
        out.append(Delta(finish_reason=reason))
    return out


# ---- failures, one line each ---------------------------------------------------------


class NotOllama(Exception):
    """A line of the stream the library could not read as Ollama's."""


async def read_lines(chunks: AsyncIterator[Any]) -> AsyncGenerator[Any, None]:
    """The library's chunks, each line parsed by it (json.loads, then its pydantic model): a
    line that is not JSON, nests past the json module's recursion, or is not an object of
    Ollama's shape (a list: AttributeError; a string: TypeError) is :class:`NotOllama`, one
    line, never Python's words for it. Errors of the reader of the chunks are not caught."""
    try:
        async for chunk in chunks:
            yield chunk
    except (ValueError, TypeError, AttributeError, RecursionError) as err:
        raise NotOllama(type(err).__name__) from None


def missing_model(host: str, model: str) -> BackendError:
    return BackendError(
        f"Ollama at {host} does not have the model {model!r}: pull it (ollama pull {model}, "
        "or Pull in the model panel)."
    )


def refused(status: int, message: str, host: str, model: str) -> BackendError:
    """The line for an error status Ollama answered with (its ``{"error": …}`` message)."""
    detail = sentence(message or "no message")
    if status == 404 and "not found" in message.lower():
        return missing_model(host, model)
    if NO_TOOLS.search(message):
        return BackendError(
            f"{model or 'This model'} cannot take native tool calls on Ollama ({detail[:-1]}): "
            "set Tool calls to ReAct text for it."
        )
    if "does not support thinking" in message.lower():
        return BackendError(
            f"{model or 'This model'} does not think on Ollama ({detail[:-1]}): set Think to "
            "Model default or off."
        )
    if status >= 500:
        return BackendError(f"Ollama at {host} failed ({status}): {detail}")
    if status < 0:  # an error line in the middle of a stream
        return BackendError(f"Ollama at {host} stopped with an error: {detail}")
    return BackendError(f"Ollama at {host} refused the request ({status}): {detail}")


def unreachable(host: str) -> BackendError:
    return BackendError(f"Cannot connect to {host} — is Ollama running (ollama serve)?")


def timed_out(host: str, timeout_s: float) -> BackendError:
    return BackendError(f"No answer from Ollama at {host} after {timeout_s:g} s (timed out).")


def broke(host: str, chunks: int, what: str) -> BackendError:
    return BackendError(
        f"The stream from {host} broke after {chunks} chunks ({what}); the partial reply is kept."
    )


# ---- the model list ------------------------------------------------------------------


def model_note(size: int | None, loaded: bool) -> str:
    """What the model list says beside a name: "5.2 GB, loaded"."""
    return ", ".join(part for part in (size_text(size), "loaded" if loaded else "") if part)
