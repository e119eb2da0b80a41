"""Chat Completions (``POST /v1/chat/completions``, ``GET /v1/models``): the OpenAI-compatible
kind's wire encoding of a :class:`ModelScript` reply, as the ``openai`` SDK reads it.

Thinking models are reproduced on the shapes captured from real servers (tests/core/test_sse.py
quotes each capture and names its source; tests/data/streams/chat_completions.sse is one): the
reply's ``<think>…</think>`` sent raw in ``content``, or separated into
``delta.reasoning_content`` / ``delta.reasoning`` chunks the way DeepSeek, llama.cpp, vLLM and
OpenRouter send them, or hidden as OpenAI's o-series do (only
``usage.completion_tokens_details.reasoning_tokens``), plus the 400s OpenAI answers to
parameters a reasoning model does not take (:data:`OPENAI_REASONING_REJECTS`). Tool calls
stream as chat_calls.py says, passback refusals as passback.py says; the stream itself is
written by chat_stream.py.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiohttp import web

from tests.model_server import anthropic, gemini, passback
from tests.model_server.chat_calls import has_calls, unanswered_calls
from tests.model_server.chat_stream import stream, stream_calls
from tests.model_server.events import abort
from tests.model_server.local import models_answer
from tests.model_server.script import (
    ModelScript,
    Plan,
    choose_reply,
    chunk_style,
    cut_to_context,
    message_tokens,
    plan_reply,
    prompt_tokens,
    usage_of,
)

if TYPE_CHECKING:
    from tests.model_server.server import ModelServer


@dataclass(frozen=True)
class UnsupportedParam:
    """A request parameter a model answers with HTTP 400, in OpenAI's error shape."""

    param: str  # the body key, also the error's ``param``
    message: str  # ``{value}`` in it becomes the value sent (0.0 shown as 0, like OpenAI)
    code: str = "unsupported_parameter"
    # Values that pass anyway (temperature: only the default 1). A null value always passes.
    allowed: tuple[Any, ...] = ()

    def rejects(self, body: dict[str, Any]) -> bool:
        value = body.get(self.param)
        if value is None:
            return False
        return not any(
            isinstance(value, bool) == isinstance(ok, bool) and value == ok for ok in self.allowed
        )

    def message_for(self, body: dict[str, Any]) -> str:
        return self.message.replace("{value}", _format_value(body.get(self.param)))


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return f"'{value}'"
    return json.dumps(value)


# What OpenAI's o-series and gpt-5 answer on Chat Completions, verbatim as reported in
# https://github.com/microsoft/vscode-copilot-release/issues/9954 (max_tokens),
# https://github.com/huggingface/smolagents/pull/1662 (stop) and
# https://github.com/owndev/Open-WebUI-Functions/issues/98 (temperature), checked in this
# order: the first one the request has is reported.
OPENAI_REASONING_REJECTS: tuple[UnsupportedParam, ...] = (
    UnsupportedParam(
        "max_tokens",
        "Unsupported parameter: 'max_tokens' is not supported with this model."
        " Use 'max_completion_tokens' instead.",
    ),
    UnsupportedParam("stop", "Unsupported parameter: 'stop' is not supported with this model."),
    UnsupportedParam(
        "temperature",
        "Unsupported value: 'temperature' does not support {value} with this model."
        " Only the default (1) value is supported.",
        code="unsupported_value",
        allowed=(1,),
    ),
)


_ERROR_KINDS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    502: ("server_error", None),
    503: ("server_error", "service_unavailable"),
}

_DEFAULT_MESSAGES: dict[int, str] = {
    400: "Bad request.",
    401: "Incorrect API key provided.",
    403: "Forbidden.",
    404: "Not found.",
    429: "Rate limit reached. Please try again later.",
    500: "The server had an error while processing your request.",
    502: "Bad gateway.",
    503: "The engine is currently overloaded, please try again later.",
}


def error(
    status: int,
    message: str | None = None,
    *,
    retry_after: float | None = None,
    code: str | None = None,
    param: str | None = None,
) -> web.Response:
    err_type, default_code = _ERROR_KINDS.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None)
    )
    body = {
        "error": {
            "message": message or _DEFAULT_MESSAGES.get(status, f"HTTP {status}"),
            "type": err_type,
            "param": param,
            "code": code if code is not None else default_code,
        }
    }
    headers: dict[str, str] = {}
    if retry_after is not None:
        headers["Retry-After"] = (
            str(int(retry_after)) if float(retry_after).is_integer() else str(retry_after)
        )
    return web.json_response(body, status=status, headers=headers)


async def handle_chat(server: ModelServer, request: web.Request) -> web.StreamResponse:
    admitted = await server.admit(request, _error_shape)
    if isinstance(admitted, web.Response):
        return admitted
    body, name, script = admitted
    messages = body.get("messages")
    if not isinstance(messages, list):
        server.bump("errors")
        return error(400, "'messages' is a required property")
    for rule in script.reject_params:
        if rule.rejects(body):
            server.bump("errors")
            return error(400, rule.message_for(body), code=rule.code, param=rule.param)
    if body.get("tools") and script.rejects_tools is not None:
        server.bump("errors")
        return error(*script.rejects_tools)
    unanswered = unanswered_calls(messages)
    if unanswered:
        server.bump("errors")
        return error(
            400,
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have "
            f"response messages: {', '.join(unanswered)}",
            param="messages",
        )

    refused = None
    if script.passback:
        refused = passback.refusal(script.passback, messages, dict(server.sent))
    if refused is not None:
        server.bump("errors")
        await server.hold_together(name, script.refusals_together)
        return refused

    step = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
    users = (m for m in messages if isinstance(m, dict) and m.get("role") == "user")
    asked = next((m.get("content") for m in users), None)
    conversation = server.conversation(name, step) if script.runs else 0
    reply = choose_reply(script, step, asked, messages, conversation, bool(body.get("tools")))
    if reply is None:
        server.bump("errors")
        return error(
            400,
            f"Fake model script for `{name}` is exhausted: step {step} requested.",
            code="script_exhausted",
        )

    if body.get("tools") and script.tool_call_style and has_calls(reply) and body.get("stream"):
        return await stream_calls(server, request, script, name, reply, messages)
    limit = body.get("max_completion_tokens")
    if limit is None:
        limit = body.get("max_tokens")
    plan = plan_reply(
        script,
        reply,
        body.get("stop") if script.honor_stop else None,
        limit if script.honor_max_tokens else None,
    )

    prompt = prompt_tokens(messages)
    if script.context_length is not None:  # a small context: cut silently, as Ollama does
        kept = cut_to_context(messages, script.context_length)
        server.kept.append(kept)
        counted = sum(message_tokens(m) for m in messages)
        prompt = script.context_length if len(kept) < len(messages) else counted
    transport = request.transport
    if transport is not None:
        server.active.add(transport)
    try:
        if body.get("stream"):
            options = body.get("stream_options")
            include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
            return await stream(server, request, script, name, plan, prompt, include_usage)
        return await complete(server, request, script, name, plan, prompt)
    finally:
        if transport is not None:
            server.active.discard(transport)


async def complete(
    server: ModelServer,
    request: web.Request,
    script: ModelScript,
    model: str,
    plan: Plan,
    prompt_tokens: int,
) -> web.StreamResponse:
    """A non-streaming answer: wait as long as generating would take, then send."""
    tokens = plan.tokens
    try:
        wait = script.delay_first
        if script.rate:
            wait += len(tokens) / script.rate
        if wait > 0:
            await asyncio.sleep(wait)
        if script.stall_after is not None:
            await asyncio.Future()  # until the client or the server hangs up
        if script.cut_after is not None:
            abort(request)
            server.bump("cut")
            return web.Response()  # never reaches the wire
    except asyncio.CancelledError:
        if not server.stopping:
            server.bump("aborted")
        raise
    message: dict[str, Any] = {"role": "assistant", "content": "".join(tokens), "refusal": None}
    field_name = script.reasoning_field
    if field_name is not None:
        reasoning = "".join(tokens[: plan.reasoning_chunks]) or None
        message["content"] = "".join(tokens[plan.reasoning_chunks :])
        if reasoning is not None and not message["content"]:
            message["content"] = None  # all thinking, no answer (vLLM: content null)
        message[field_name] = reasoning
        if chunk_style(script) == "openrouter":
            message["reasoning_details"] = (
                [{"type": "reasoning.text", "text": reasoning, "format": "unknown", "index": 0}]
                if reasoning is not None
                else []
            )
    payload = {
        "id": f"chatcmpl-fake{server.next_id()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": plan.finish_reason,
            }
        ],
        "usage": usage_of(prompt_tokens, plan),
    }
    server.bump("finished")
    return web.json_response(payload)


def _error_shape(
    status: int, message: str | None, retry_after: float | None, code: str | None
) -> web.Response:
    return error(status, message, retry_after=retry_after, code=code)


async def handle_models(server: ModelServer, request: web.Request) -> web.Response:
    """The model list: the local server's own shape when it imitates one (local.py)."""
    if server.models_body is not None:
        return web.Response(body=server.models_body, content_type="application/json")
    if gemini.is_gemini(request):
        return await gemini.models(server, request)
    if "anthropic-version" in request.headers:
        return anthropic.models_answer(server)
    imitated = models_answer(server)
    if imitated is not None:
        return imitated
    names = server.model_names
    data = [{"id": n, "object": "model", "created": 0, "owned_by": "fake"} for n in names]
    return web.json_response({"object": "list", "data": data})


ROUTES = (
    ("GET", "/v1/models", handle_models),
    ("POST", "/v1/chat/completions", handle_chat),
)
