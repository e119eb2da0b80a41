"""The OpenAI Responses API (``POST /v1/responses`` streamed over SSE): the Responses kind's
encoding of a :class:`ModelScript` reply.

The stream is built from OpenAI's API reference, "Streaming events" (Responses,
https://platform.openai.com/docs/api-reference/responses-streaming), event for event, and
matches the capture tests/data/streams/responses.sse: ``response.created``,
``response.in_progress``, ``response.output_item.added`` / ``.done`` around each output item
(reasoning, message, function_call), ``response.reasoning_summary_part.added`` / ``.done`` and
``response.reasoning_summary_text.delta`` / ``.done`` for each summary part (the reply's
thinking, a part per paragraph), ``response.content_part.added`` / ``.done`` and
``response.output_text.delta`` / ``.done`` for the message,
``response.function_call_arguments.delta`` / ``.done`` for a call, then
``response.completed`` (usage with ``output_tokens_details.reasoning_tokens`` and
``input_tokens_details.cached_tokens``), ``response.incomplete`` (``incomplete_details.reason:
"max_output_tokens"``), ``response.failed`` or ``error`` (``ModelScript.finish``). With
``ModelScript.reasoning_field`` set, the thinking streams raw as
``response.reasoning_text.delta`` / ``.done``, as vLLM's Responses server does
(vllm/entrypoints/openai/serving_responses.py, its ``ResponseReasoningTextDeltaEvent``), and
is never encrypted.

Reasoning items come with ``encrypted_content`` only when the request's ``include`` asks for
``reasoning.encrypted_content``, as OpenAI's do. Like OpenAI with ``store: false``, the server
keeps nothing: a request whose ``function_call`` comes without the reasoning item (and its
encrypted content) the reply that made the call held is answered with OpenAI's 400, "Item
'fc_…' of type 'function_call' was provided without its required 'reasoning' item: 'rs_…'."
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from aiohttp import web

from tests.model_server.events import send_events
from tests.model_server.script import ModelScript, choose_reply, reply_parts

if TYPE_CHECKING:
    from tests.model_server.server import ModelServer

MISSING_REASONING = (
    "Item '{fc}' of type 'function_call' was provided without its required 'reasoning' "
    "item: '{rs}'."
)
MALFORMED = b"event: response.output_text.delta\ndata: {this is not json\n\n"
_FAILURES = {
    401: "Incorrect API key provided: sk-test. You can find your API key at "
    "https://platform.openai.com/account/api-keys.",
    429: "Rate limit reached for requests. Please try again in 1s.",
}


def _error(
    status: int,
    message: str | None,
    retry_after: float | None = None,
    code: str | None = None,
    param: str | None = None,
) -> web.Response:
    text = message or _FAILURES.get(status, "Failed")
    error = {"message": text, "type": "invalid_request_error", "param": param, "code": code}
    headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else {}
    return web.json_response({"error": error}, status=status, headers=headers)


def _id(server: ModelServer, prefix: str) -> str:
    return f"{prefix}_{server.next_id():040x}"


def _needs(server: ModelServer) -> dict[str, tuple[str, str, str]]:
    """What each function call this server made needs back: call_id → (fc id, rs id, secret)."""
    found = {}
    for key, value in server.sent.items():
        if key.startswith("responses:"):
            fc_id, rs_id, secret = json.loads(value)
            found[key.removeprefix("responses:")] = (fc_id, rs_id, secret)
    return found


def _texts(calls: list[tuple[str, Any]]) -> list[tuple[str, str]]:
    """Each call's arguments as the JSON text the API streams (broken JSON as it is)."""
    return [(n, a if isinstance(a, str) else json.dumps(a)) for n, a in calls]


async def _handle(server: ModelServer, request: web.Request) -> web.StreamResponse:
    missing = "The model '{model}' does not exist"
    admitted = await server.admit(request, _error, missing=missing)
    if isinstance(admitted, web.Response):
        return admitted
    body, _, script = admitted
    items = body.get("input") or []
    refusal = _missing_reasoning(server, items)
    if refusal is not None:
        return _error(400, refusal, param="input")
    turn = sum(
        1 for i in items if i.get("role") == "user" or i.get("type") == "function_call_output"
    )
    reply = choose_reply(script, turn - 1, None, items, 0) if turn > 0 else None
    if reply is None:
        return _error(400, f"fake: no reply scripted for turn {turn}")
    encrypted = not script.reasoning_field and "reasoning.encrypted_content" in (
        body.get("include") or ()
    )
    events = (
        (f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode(), e["type"].endswith(".delta"))
        for e in _events(server, script, reply, body, encrypted)
    )
    return await send_events(server, request, script, events, "text/event-stream", MALFORMED)


def _missing_reasoning(server: ModelServer, items: list[dict[str, Any]]) -> str | None:
    """OpenAI's 400 for a function call sent back without the reasoning item before it."""
    sent: dict[str, str] = {}  # reasoning id → its encrypted content, as sent so far
    for item in items:
        if item.get("type") == "reasoning":
            sent[str(item.get("id"))] = str(item.get("encrypted_content"))
        elif item.get("type") == "function_call":
            need = _needs(server).get(str(item.get("call_id")))
            if need is not None and sent.get(need[1]) != need[2]:
                return MISSING_REASONING.format(fc=item.get("id") or need[0], rs=need[1])
    return None


def _events(
    server: ModelServer, script: ModelScript, reply: str, body: dict[str, Any], encrypted: bool
) -> Iterator[dict[str, Any]]:
    """The reply's events, in the order OpenAI streams them."""
    thinking, text, calls = reply_parts(reply)
    summary = (
        [part for part in thinking.split("\n\n") if part] if not script.reasoning_field else []
    )
    raw = thinking if script.reasoning_field else ""
    end = script.finish or "completed"
    limit = int(body.get("max_output_tokens") or 1_000_000)
    resp_id = _id(server, "resp")
    shell: dict[str, Any] = {
        "id": resp_id,
        "object": "response",
        "created_at": int(time.time()),
        "model": body.get("model"),
        "output": [],
        "usage": None,
    }
    number = iter(range(1_000_000))

    def event(kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": kind, "sequence_number": next(number), **fields}

    yield event("response.created", response={**shell, "status": "in_progress"})
    yield event("response.in_progress", response={**shell, "status": "in_progress"})
    output: list[dict[str, Any]] = []
    spent = 0
    rs_id = ""
    if summary or raw or script.hidden_reasoning_tokens:
        rs_id = _id(server, "rs")
        secret = f"gAAAA-{rs_id}-sealed" if encrypted else None
        item: dict[str, Any] = {"id": rs_id, "type": "reasoning", "summary": []}
        where = {"item_id": rs_id, "output_index": len(output)}
        yield event("response.output_item.added", item=dict(item), output_index=len(output))
        for index, part in enumerate(summary):
            at = {**where, "summary_index": index}
            yield event(
                "response.reasoning_summary_part.added",
                **at,
                part={"type": "summary_text", "text": ""},
            )
            for piece in script.tokenizer(part):
                yield event("response.reasoning_summary_text.delta", **at, delta=piece)
            yield event("response.reasoning_summary_text.done", **at, text=part)
            yield event(
                "response.reasoning_summary_part.done",
                **at,
                part={"type": "summary_text", "text": part},
            )
            item["summary"].append({"type": "summary_text", "text": part})
        if raw:
            at = {**where, "content_index": 0}
            yield event(
                "response.content_part.added", **at, part={"type": "reasoning_text", "text": ""}
            )
            for piece in script.tokenizer(raw):
                yield event("response.reasoning_text.delta", **at, delta=piece)
            yield event("response.reasoning_text.done", **at, text=raw)
            yield event(
                "response.content_part.done",
                **at,
                part={"type": "reasoning_text", "text": raw},
            )
            item["content"] = [{"type": "reasoning_text", "text": raw}]
        item["encrypted_content"] = secret
        output.append(item)
        yield event("response.output_item.done", item=item, output_index=len(output) - 1)
    cut = False
    if text:
        msg_id = _id(server, "msg")
        where = {"item_id": msg_id, "output_index": len(output), "content_index": 0}
        message: dict[str, Any] = {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        yield event("response.output_item.added", item=dict(message), output_index=len(output))
        yield event(
            "response.content_part.added",
            **where,
            part={"type": "output_text", "text": "", "annotations": []},
        )
        shown = ""
        for piece in script.tokenizer(text):
            if spent == limit:
                cut = True
                break
            spent += 1
            shown += piece
            yield event("response.output_text.delta", **where, delta=piece)  # as captured
        done = {"type": "output_text", "text": shown, "annotations": []}
        yield event("response.output_text.done", **where, text=shown, logprobs=[])
        yield event("response.content_part.done", **where, part=done)
        message |= {"status": "incomplete" if cut else "completed", "content": [done]}
        output.append(message)
        yield event("response.output_item.done", item=message, output_index=len(output) - 1)
    for name, arguments in () if cut else _texts(calls):
        fc_id, call_id = _id(server, "fc"), _id(server, "call")
        call = {
            "id": fc_id,
            "type": "function_call",
            "status": "in_progress",
            "call_id": call_id,
            "name": name,
            "arguments": "",
        }
        where = {"item_id": fc_id, "output_index": len(output)}
        yield event("response.output_item.added", item=dict(call), output_index=len(output))
        for piece in script.tokenizer(arguments):
            spent += 1
            yield event("response.function_call_arguments.delta", **where, delta=piece)
        yield event("response.function_call_arguments.done", **where, arguments=arguments)
        call |= {"status": "completed", "arguments": arguments}
        output.append(call)
        yield event("response.output_item.done", item=call, output_index=len(output) - 1)
        if rs_id and encrypted:
            needed = [fc_id, rs_id, str(output[0]["encrypted_content"])]
            server.sent[f"responses:{call_id}"] = json.dumps(needed)
    reasoning = script.hidden_reasoning_tokens + len(script.tokenizer(thinking)) if rs_id else 0
    prompt = len(json.dumps(body.get("input"))) // 4 + len(body.get("instructions") or "") // 4
    usage = {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": min(script.cached_tokens, prompt)},
        "output_tokens": spent + reasoning,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": prompt + spent + reasoning,
    }
    final = {**shell, "output": output, "usage": usage}
    if end == "error":
        yield {
            "type": "error",
            "sequence_number": next(number),
            "code": "server_error",
            "message": "The model had an error while generating.",
            "param": None,
        }
    elif end == "failed":
        error = {"code": "server_error", "message": "The model failed to answer.\nDetails."}
        yield event("response.failed", response={**final, "status": "failed", "error": error})
    elif cut or end == "incomplete":
        details = {"reason": "max_output_tokens"}
        yield event(
            "response.incomplete",
            response={**final, "status": "incomplete", "incomplete_details": details},
        )
    else:
        yield event("response.completed", response={**final, "status": "completed"})


ROUTES = (("POST", "/v1/responses", _handle),)


@pytest.fixture
def responses_server() -> Iterator[ModelServer]:
    """A started test server, for a Responses test."""
    from tests.model_server.server import ModelServer

    with ModelServer() as server:
        yield server
