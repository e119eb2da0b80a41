"""A small, real OpenAI Responses API server for tests: ``POST /v1/responses`` streamed over
SSE and ``GET /v1/models``, on 127.0.0.1 in a thread of its own (like tests/model_server/).

The stream is built from OpenAI's API reference, "Streaming events" (Responses,
https://platform.openai.com/docs/api-reference/responses-streaming), event for event:
``response.created``, ``response.in_progress``, ``response.output_item.added`` / ``.done``
around each output item (reasoning, message, function_call), ``response.reasoning_summary_part
.added`` / ``.done`` and ``response.reasoning_summary_text.delta`` / ``.done`` for each
summary part, ``response.content_part.added`` / ``.done`` and ``response.output_text.delta`` /
``.done`` for the message, ``response.function_call_arguments.delta`` / ``.done`` for a call,
then ``response.completed`` (usage with ``output_tokens_details.reasoning_tokens`` and
``input_tokens_details.cached_tokens``), ``response.incomplete`` (``incomplete_details.reason:
"max_output_tokens"``), ``response.failed`` or ``error``. A raw-reasoning reply streams
``response.reasoning_text.delta`` / ``.done`` as vLLM's Responses server does
(vllm/entrypoints/openai/serving_responses.py, its ``ResponseReasoningTextDeltaEvent``).

Reasoning items come with ``encrypted_content`` only when the request's ``include`` asks for
``reasoning.encrypted_content``, as OpenAI's do. Like OpenAI with ``store: false``, the server
keeps nothing: a request whose ``function_call`` comes without the reasoning item (and its
encrypted content) the reply that made the call held is answered with OpenAI's 400, "Item
'fc_…' of type 'function_call' was provided without its required 'reasoning' item: 'rs_…'."

    with FakeResponsesServer() as server:
        server.set_replies("m", [Reply("Answer: 2", summary=("Adding.",))])
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest
from aiohttp import web

from tests.model_server import tokenize
from tests.pacing import Pace
from tests.threaded_app import ThreadedApp

End = Literal["completed", "incomplete", "failed", "error"]
MISSING_REASONING = (
    "Item '{fc}' of type 'function_call' was provided without its required 'reasoning' "
    "item: '{rs}'."
)


@dataclass(frozen=True)
class Reply:
    """One scripted reply: reasoning (summary parts, or raw text as vLLM streams it), the
    message text, the function calls (name, arguments JSON), how the response ends."""

    text: str = ""
    summary: tuple[str, ...] = ()
    reasoning_text: str = ""
    calls: tuple[tuple[str, str], ...] = ()
    end: End = "completed"
    reasoning_tokens: int = 48  # reported when the reply reasons
    cached_tokens: int = 0


@dataclass
class Mode:
    replies: list[Reply] = field(default_factory=list)
    fail_status: int | None = None  # answer every request with this status (401, 429)
    fail_code: str | None = None
    fail_message: str | None = None  # the error's message (None: the status's usual one)
    retry_after: float | None = None
    # Reasoning items carry encrypted content when asked (OpenAI); False: never (vLLM's raw
    # reasoning, whose items hold their text instead).
    encrypts: bool = True
    # Delta events per second (None: as fast as the loop writes them); benchmarks pace lanes.
    rate: float | None = None


class FakeResponsesServer:
    """An OpenAI Responses server on 127.0.0.1: one loop in a daemon thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._models: dict[str, Mode] = {}
        self._requests: list[dict[str, Any]] = []
        self.authorizations: list[str] = []  # the Authorization header of each request
        # What a function call the server made needs back: call_id → (fc id, rs id, secret).
        self._needs: dict[str, tuple[str, str, str]] = {}
        self._ids = 0
        self._port: int | None = None
        self._server = ThreadedApp("FakeResponsesServer", self._app, handler_cancellation=True)

    def set_replies(self, model: str, replies: list[Reply], **mode: Any) -> None:
        with self._lock:
            self._models[model] = Mode(list(replies), **mode)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every /v1/responses JSON body received, in order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    # ---- lifecycle -----------------------------------------------------------------

    def __enter__(self) -> FakeResponsesServer:
        self._port = self._server.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.stop()

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/v1/models", self._handle_models)
        app.router.add_post("/v1/responses", self._handle_responses)
        return app

    def _id(self, prefix: str) -> str:
        with self._lock:
            self._ids += 1
            return f"{prefix}_{self._ids:040x}"

    # ---- handlers ------------------------------------------------------------------

    async def _handle_models(self, request: web.Request) -> web.Response:
        with self._lock:
            data = [{"id": name, "object": "model", "owned_by": "fake"} for name in self._models]
        return web.json_response({"object": "list", "data": data})

    async def _handle_responses(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        with self._lock:
            self._requests.append(body)
            self.authorizations.append(request.headers.get("Authorization", ""))
            mode = self._models.get(body.get("model", ""))
        if mode is None:
            return _error(404, f"The model '{body.get('model')}' does not exist", "model_not_found")
        if mode.fail_status is not None:
            headers = (
                {"retry-after": f"{mode.retry_after:g}"} if mode.retry_after is not None else {}
            )
            return _error(
                mode.fail_status,
                mode.fail_message or _FAILURES.get(mode.fail_status, "Failed"),
                mode.fail_code,
                headers,
            )
        items = body.get("input") or []
        refusal = self._missing_reasoning(items)
        if refusal is not None:
            return _error(400, refusal, None, param="input")
        turn = sum(
            1 for i in items if i.get("role") == "user" or i.get("type") == "function_call_output"
        )
        if not 0 < turn <= len(mode.replies):
            return _error(400, f"fake: no reply scripted for turn {turn}", None)
        encrypted = mode.encrypts and "reasoning.encrypted_content" in (body.get("include") or ())
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        pace = Pace(mode.rate)
        for event in self._events(mode.replies[turn - 1], body, encrypted):
            if event["type"].endswith(".delta"):
                await pace()
            await response.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
        await response.write_eof()
        return response

    def _missing_reasoning(self, items: list[dict[str, Any]]) -> str | None:
        """OpenAI's 400 for a function call sent back without the reasoning item before it."""
        sent: dict[str, str] = {}  # reasoning id → its encrypted content, as sent so far
        for item in items:
            if item.get("type") == "reasoning":
                sent[str(item.get("id"))] = str(item.get("encrypted_content"))
            elif item.get("type") == "function_call":
                with self._lock:
                    need = self._needs.get(str(item.get("call_id")))
                if need is not None and sent.get(need[1]) != need[2]:
                    return MISSING_REASONING.format(fc=item.get("id") or need[0], rs=need[1])
        return None

    def _events(
        self, reply: Reply, body: dict[str, Any], encrypted: bool
    ) -> Iterator[dict[str, Any]]:
        limit = int(body.get("max_output_tokens") or 1_000_000)
        resp_id = self._id("resp")
        shell = {"id": resp_id, "object": "response", "model": body.get("model"), "output": []}
        number = iter(range(1_000_000))

        def event(kind: str, **fields: Any) -> dict[str, Any]:
            return {"type": kind, "sequence_number": next(number), **fields}

        yield event("response.created", response={**shell, "status": "in_progress"})
        yield event("response.in_progress", response={**shell, "status": "in_progress"})
        output: list[dict[str, Any]] = []
        spent = 0
        rs_id = ""
        if reply.summary or reply.reasoning_text:
            rs_id = self._id("rs")
            secret = f"gAAAA-{rs_id}-sealed" if encrypted else None
            item: dict[str, Any] = {"id": rs_id, "type": "reasoning", "summary": []}
            where = {"item_id": rs_id, "output_index": len(output)}
            yield event("response.output_item.added", item=dict(item), output_index=len(output))
            for index, part in enumerate(reply.summary):
                at = {**where, "summary_index": index}
                yield event(
                    "response.reasoning_summary_part.added",
                    **at,
                    part={"type": "summary_text", "text": ""},
                )
                for piece in tokenize(part):
                    yield event("response.reasoning_summary_text.delta", **at, delta=piece)
                yield event("response.reasoning_summary_text.done", **at, text=part)
                yield event(
                    "response.reasoning_summary_part.done",
                    **at,
                    part={"type": "summary_text", "text": part},
                )
                item["summary"].append({"type": "summary_text", "text": part})
            if reply.reasoning_text:
                at = {**where, "content_index": 0}
                yield event(
                    "response.content_part.added", **at, part={"type": "reasoning_text", "text": ""}
                )
                for piece in tokenize(reply.reasoning_text):
                    yield event("response.reasoning_text.delta", **at, delta=piece)
                yield event("response.reasoning_text.done", **at, text=reply.reasoning_text)
                yield event(
                    "response.content_part.done",
                    **at,
                    part={"type": "reasoning_text", "text": reply.reasoning_text},
                )
                item["content"] = [{"type": "reasoning_text", "text": reply.reasoning_text}]
            item["encrypted_content"] = secret
            output.append(item)
            yield event("response.output_item.done", item=item, output_index=len(output) - 1)
        cut = False
        if reply.text:
            msg_id = self._id("msg")
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
            for piece in tokenize(reply.text):
                if spent == limit:
                    cut = True
                    break
                spent += 1
                shown += piece
                yield event("response.output_text.delta", **where, delta=piece, logprobs=[])
            part = {"type": "output_text", "text": shown, "annotations": []}
            yield event("response.output_text.done", **where, text=shown, logprobs=[])
            yield event("response.content_part.done", **where, part=part)
            message |= {"status": "incomplete" if cut else "completed", "content": [part]}
            output.append(message)
            yield event("response.output_item.done", item=message, output_index=len(output) - 1)
        for name, arguments in () if cut else reply.calls:
            fc_id, call_id = self._id("fc"), self._id("call")
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
            for piece in tokenize(arguments):
                spent += 1
                yield event("response.function_call_arguments.delta", **where, delta=piece)
            yield event("response.function_call_arguments.done", **where, arguments=arguments)
            call |= {"status": "completed", "arguments": arguments}
            output.append(call)
            yield event("response.output_item.done", item=call, output_index=len(output) - 1)
            if rs_id and encrypted:
                with self._lock:
                    self._needs[call_id] = (fc_id, rs_id, str(output[0]["encrypted_content"]))
        reasoning = reply.reasoning_tokens if rs_id else 0
        prompt = len(json.dumps(body.get("input"))) // 4 + len(body.get("instructions") or "") // 4
        usage = {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": min(reply.cached_tokens, prompt)},
            "output_tokens": spent + reasoning,
            "output_tokens_details": {"reasoning_tokens": reasoning},
            "total_tokens": prompt + spent + reasoning,
        }
        final = {**shell, "output": output, "usage": usage}
        if reply.end == "error":
            yield {
                "type": "error",
                "sequence_number": next(number),
                "code": "server_error",
                "message": "The model had an error while generating.",
                "param": None,
            }
        elif reply.end == "failed":
            error = {"code": "server_error", "message": "The model failed to answer.\nDetails."}
            yield event("response.failed", response={**final, "status": "failed", "error": error})
        elif cut or reply.end == "incomplete":
            details = {"reason": "max_output_tokens"}
            yield event(
                "response.incomplete",
                response={**final, "status": "incomplete", "incomplete_details": details},
            )
        else:
            yield event("response.completed", response={**final, "status": "completed"})


_FAILURES = {
    401: "Incorrect API key provided: sk-test. You can find your API key at "
    "https://platform.openai.com/account/api-keys.",
    429: "Rate limit reached for requests. Please try again in 1s.",
}


def _error(
    status: int,
    message: str,
    code: str | None,
    headers: dict[str, str] | None = None,
    param: str | None = None,
) -> web.Response:
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    return web.json_response({"error": error}, status=status, headers=headers)


@pytest.fixture
def responses_server() -> Iterator[FakeResponsesServer]:
    with FakeResponsesServer() as server:
        yield server
