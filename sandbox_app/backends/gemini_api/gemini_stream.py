"""Gemini's stream, read by us: ``POST …/models/{model}:streamGenerateContent?alt=sse``.

Why not the SDK's ``generate_content_stream``: it validates every chunk into pydantic objects
(``GenerateContentResponse``) after converting it field by field, over 90 % of the CPU a
chunk cost, which held one pane to ~3,700 tokens/s; and the SDK gives no raw streaming
response to read instead. So the request goes out on the kind's own httpx2 client (the
network loop's), its SSE ``data:`` payloads come from sse.py's one reader
(:func:`~sandbox_app.backends.transport.sse.sse_payloads`; Gemini's stream ends without ``[DONE]``)
and each is decoded here as a plain dict by the file reader's JSON rules.

Each payload is one ``GenerateContentResponse`` in the REST API's JSON (Gemini API
reference, "models.streamGenerateContent"): ``candidates[0].content.parts`` (``text``,
``thought: true`` for a thought summary, ``functionCall`` with its ``thoughtSignature``),
``candidates[0].finishReason``, ``usageMetadata`` (on every chunk; the last one's counts
are the reply's) and ``promptFeedback.blockReason``. Every other field is ignored.

Errors have Google's shape, ``{"error": {"code", "message", "status"}}``, as the reply to
a refused request and, rarely, as a payload mid-stream: both become :class:`GeminiError`,
which gemini_kind.explain turns into one line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from sandbox_app.backends.gemini_api.gemini_contents import CARRY_KEY, LOCAL_ID, TEXT_SIGNATURE
from sandbox_app.backends.transport import errors
from sandbox_app.backends.transport.sse import (
    _count as counted,  # sse.py's check of a server's count
)
from sandbox_app.core.running.backend import BackendError, Delta, ToolCallPiece, Usage
from sandbox_app.core.untrusted.file_reader import parse_json_text

# Why a reply ended early, in words; MAX_TOKENS is the engine's "length" line instead.
STOPPED = {
    "SAFETY": "its safety filters",
    "RECITATION": "recitation of its training data",
    "BLOCKLIST": "a blocklisted term",
    "PROHIBITED_CONTENT": "prohibited content",
    "SPII": "personal information in it",
    "LANGUAGE": "an unsupported language",
    "MALFORMED_FUNCTION_CALL": "a malformed function call",
    "UNEXPECTED_TOOL_CALL": "a tool call when no tools were given",
    "OTHER": "an unspecified reason",
}
KEY_HEADER = "x-goog-api-key"  # where the API (and its SDK) takes the key


class GeminiError(Exception):
    """An error the API reported: its HTTP code, its status name and its message."""

    def __init__(self, code: int, status: str, message: str) -> None:
        super().__init__(message)
        self.code, self.status, self.message = code, status, message


def stream_url(base_url: str, version: str, model: str) -> str:
    """The method's URL; a bare model name is under ``models/`` (a tuned model's full name,
    ``tunedModels/…``, is used as given). Quoted: a typed name never reaches the query."""
    name = model if model.startswith(("models/", "tunedModels/")) else f"models/{model}"
    return f"{base_url}/{version}/{quote(name, safe='/')}:streamGenerateContent?alt=sse"


def headers(api_key: str) -> dict[str, str]:
    """The key only when there is one: a keyless server (a local test server) gets none."""
    return {KEY_HEADER: api_key} if api_key else {}


async def refused(response: Any, host: str) -> Exception:
    """What a reply with an error status says (its body read here): Google's error JSON as a
    :class:`GeminiError`; a web server's own page (no such route) as the not-Gemini line."""
    body = await response.aread()
    code = response.status_code
    try:
        document = parse_json_text(body.decode("utf-8", "replace"), "an error")
    except ValueError:  # not JSON, or nested past the file reader's limit
        document = None
    error = document.get("error") if isinstance(document, dict) else None
    if isinstance(error, dict):
        return api_error(error, code)
    media_type = errors.media_type(response.headers)
    page = media_type in errors.WEB_PAGE_TYPES
    if code in errors.NOT_AN_API_STATUSES and page:
        return not_gemini(host, media_type, code)
    # A proxy's own page (a 502, a 503) says no more than its status: its markup is no line.
    text = "" if page else body.decode("utf-8", "replace").strip()
    return GeminiError(code, "", text or response.reason_phrase or str(code))


def api_error(error: dict[str, Any], code: int = 0) -> GeminiError:
    """Google's ``error`` object (a reply's or a payload's). The reply's own status is the
    code when there is one (``code``); a payload mid-stream has only the ``code`` it names,
    taken when it is an HTTP status (a 24-digit one is not: "Server error 1234…")."""
    number = error.get("code")
    status, message = error.get("status"), error.get("message")
    said = number if isinstance(number, int) and not isinstance(number, bool) else 0
    return GeminiError(
        code or (said if 100 <= said <= 599 else 0),
        status if isinstance(status, str) else "",
        message if isinstance(message, str) else "",
    )


def check_media_type(response: Any, host: str) -> None:
    """A 200 that is not an event stream is a web page or another API at that address: said
    in Gemini's words before sse.py's reader (whose own line names OpenAI's API) sees it."""
    media_type = errors.media_type(response.headers)
    if media_type and media_type != "text/event-stream" and not media_type.endswith("json"):
        raise not_gemini(host, media_type, response.status_code)


def not_gemini(host: str, media_type: str, status: int) -> BackendError:
    what = "a web page" if media_type in errors.WEB_PAGE_TYPES else f"{media_type} content"
    if status != 200:
        what += f" ({status})"
    return BackendError(
        f"{host} answered with {what}, not Gemini's API — check the base URL "
        "(Google's is https://generativelanguage.googleapis.com)."
    )


@dataclass
class Decoder:
    """One reply's payloads into deltas; remembers what only the end can report."""

    calls: int = 0
    chunks: int = 0  # payloads that carried text, for a broken stream's line
    signatures: dict[str, str] = field(default_factory=dict)
    usage: dict[str, Any] | None = None  # the latest usageMetadata, read at the end
    finish: str | None = None

    def feed(self, data: str) -> list[Delta]:
        """The deltas of one payload. Raises GeminiError for an error payload, ValueError for
        one that is not a JSON object."""
        chunk = parse_json_text(data, "a chunk")  # the file reader's depth limit
        if not isinstance(chunk, dict):
            raise ValueError("chunk is not a JSON object")
        error = chunk.get("error")
        if isinstance(error, dict):
            raise api_error(error)
        deltas: list[Delta] = []
        usage = chunk.get("usageMetadata")
        if isinstance(usage, dict):
            self.usage = usage
        candidates = chunk.get("candidates")
        if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):
            candidate = candidates[0]
            content = candidate.get("content")
            parts = content.get("parts") if isinstance(content, dict) else None
            for part in parts if isinstance(parts, list) else ():
                delta = self._part(part) if isinstance(part, dict) else None
                if delta is not None:
                    deltas.append(delta)
            reason = candidate.get("finishReason")
            if isinstance(reason, str):
                self.finish = reason
        feedback = chunk.get("promptFeedback")
        blocked = feedback.get("blockReason") if isinstance(feedback, dict) else None
        if blocked:
            deltas.append(Delta(notice=f"Gemini blocked the prompt ({blocked})."))
            self.finish = self.finish or "BLOCKED"
        return deltas

    def _part(self, part: dict[str, Any]) -> Delta | None:
        signature = part.get("thoughtSignature")
        signature = signature if isinstance(signature, str) else ""
        call = part.get("functionCall")
        if isinstance(call, dict):
            call_id = _text(call.get("id")) or f"{LOCAL_ID}{self.calls}"
            if signature:
                self.signatures[call_id] = signature
            args = call.get("args")
            piece = ToolCallPiece(
                self.calls,
                call_id,
                _text(call.get("name")),
                json.dumps(args if args is not None else {}, ensure_ascii=False),
            )
            self.calls += 1
            return Delta(tool_calls=(piece,))
        thought = part.get("thought") is True
        if signature and not thought:
            self.signatures.setdefault(TEXT_SIGNATURE, signature)
        text = part.get("text")
        if not isinstance(text, str) or not text:
            return None
        if thought:
            return Delta(reasoning=text)
        self.chunks += 1
        return Delta(text=text)

    def end(self) -> list[Delta]:
        """The usage, what must go back, and why the reply ended."""
        out: list[Delta] = []
        if self.usage is not None:
            out.append(Delta(usage=usage(self.usage)))
        if self.signatures:
            out.append(Delta(carry={CARRY_KEY: dict(self.signatures)}))
        if self.finish == "MAX_TOKENS":
            out.append(Delta(finish_reason="length"))
        elif self.finish in STOPPED:
            out.append(
                Delta(notice=f"Gemini stopped the reply ({self.finish}): {STOPPED[self.finish]}.")
            )
            out.append(Delta(finish_reason=self.finish.lower()))
        elif self.finish is not None:
            out.append(Delta(finish_reason="tool_calls" if self.calls else "stop"))
        return out


def usage(meta: dict[str, Any]) -> Usage:
    """``usageMetadata`` as the engine's usage; each count checked as sse.py checks one."""
    prompt, doubtful_in = counted(meta.get("promptTokenCount"))
    answer, doubtful_out = counted(meta.get("candidatesTokenCount"))
    thoughts, doubtful_thought = counted(meta.get("thoughtsTokenCount"))
    cached, doubtful_cached = counted(meta.get("cachedContentTokenCount"))
    return Usage(
        prompt_tokens=prompt,
        # Gemini counts thoughts apart; the engine's completion count includes them.
        completion_tokens=answer + thoughts,
        reasoning_tokens=thoughts if meta.get("thoughtsTokenCount") is not None else None,
        doubtful=doubtful_in or doubtful_out or doubtful_thought or doubtful_cached,
        cache_read_tokens=cached if meta.get("cachedContentTokenCount") is not None else None,
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
