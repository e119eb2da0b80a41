"""Every way a request to an OpenAI-compatible server fails, as one line that says what to do.

Failures are told apart by exception type and HTTP status only, never by an exception's
class name or message: the SDK's typed errors (``openai.APIError`` and its subclasses) for a
request, the HTTP library's public exception classes (http_library.py) for a body that breaks
while it is read. The server's own message, when it sent one, is kept, cut to one sentence.
``openai`` is imported inside the functions: this module loads with the window, the SDK later.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from sandbox_app.backends.catalogue.presets import CUSTOM, ServerConfig
from sandbox_app.backends.transport.http_library import timeout_errors, transport_errors
from sandbox_app.core.running.backend import BackendError

if TYPE_CHECKING:
    import openai

# A web page answering with one of these is a web server with no such route (python -m
# http.server answers POST with 501, most web apps GET/POST they don't know with 404/405, a
# TLS port spoken to in plain HTTP with 400): the base URL is not an API. An HTML 5xx outage
# page (a proxy's 502/503/504), 401/403 or 429 still means what its status says.
NOT_AN_API_STATUSES = frozenset({400, 404, 405, 501})
WEB_PAGE_TYPES = frozenset({"text/html", "application/xhtml+xml"})


SHOWN = 160  # characters of a server's message in a line


def clipped(text: str) -> str:
    """The first line, at most SHOWN characters: a longer one cut at the last word boundary
    before that and ended by an ellipsis."""
    lines = text.strip().splitlines()
    first = (lines[0] if lines else "").strip()
    if len(first) <= SHOWN:
        return first
    cut = first[: SHOWN - 1]
    if not first[SHOWN - 1].isspace():  # mid-word: back to the last space, if one is near
        space = cut.rfind(" ")
        cut = cut[:space] if space > SHOWN // 2 else cut
    return cut.rstrip(" .,;:") + "…"


def sentence(text: str) -> str:
    """:func:`clipped`, a whole line ending in exactly one full stop; a cut one keeps its
    ellipsis, never a full stop (that would say the server's sentence ended there)."""
    line = clipped(text)
    return line if line.endswith("…") else line.rstrip(". ") + "."


def short(err: BaseException) -> str:
    """The first line of an error's message, without the SDK's JSON dump, as :func:`sentence`."""
    body = getattr(err, "body", None)  # the SDK's APIError keeps the server's JSON here
    if isinstance(body, list) and body:  # Gemini's OpenAI-compatible endpoint: a list of them
        body = body[0]
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else None
        if isinstance(message, str) and message:
            return sentence(message)
    return sentence(str(err) or type(err).__name__)


def media_type(headers: Any) -> str:
    """The media type of a response's Content-Type, lower case, without parameters; "" if none."""
    value = headers.get("content-type") or ""
    return str(value).split(";", 1)[0].strip().lower()


def not_an_api(host: str, media_type: str, status: int = 200) -> BackendError:
    """The one line for a server that answered, but not as an OpenAI-compatible API does."""
    if media_type in WEB_PAGE_TYPES:
        what = "a web page"
    elif media_type:
        what = f"{media_type} content"
    else:
        what = "something that is not JSON"
    if status != 200:
        what += f" ({status})"
    return BackendError(
        f"{host} answered with {what}, not an OpenAI-compatible API — "
        "check the base URL (it usually ends in /v1)."
    )


def web_page_error(err: openai.APIError, host: str) -> BackendError | None:
    """The not-an-API line for an error status that came as a web server's own page."""
    import openai

    if not isinstance(err, openai.APIStatusError) or err.status_code not in NOT_AN_API_STATUSES:
        return None
    page_type = media_type(err.response.headers)
    if page_type not in WEB_PAGE_TYPES:
        return None
    return not_an_api(host, page_type, err.status_code)


def translate(err: openai.APIError, config: ServerConfig, model: str) -> BackendError:
    """The line for a request the SDK reported as failed; ``model`` is "" for the models list."""
    import openai

    host = config.host
    web_page = web_page_error(err, host)
    if web_page is not None:
        return web_page
    # APITimeoutError is an APIConnectionError: the narrower type first.
    if isinstance(err, openai.APITimeoutError):
        return BackendError(f"No answer from {host} after {config.timeout_s:g} s (timed out).")
    if isinstance(err, openai.APIConnectionError):
        return BackendError(f"Cannot connect to {host}: {config.preset.hint}")
    detail = short(err)
    if isinstance(err, openai.AuthenticationError):
        whose = "" if config.preset is CUSTOM else f" for {config.preset.name}"
        return BackendError(f"{host} rejected the API key (401); check the API key{whose}.")
    if isinstance(err, openai.PermissionDeniedError):
        return BackendError(f"{host} refused access (403): {detail}")
    if isinstance(err, openai.NotFoundError):
        what = f"model {model!r}" if model else "the models list"
        return BackendError(
            f"Not found at {host} (404): {what}. Check the model name and that the base URL "
            "ends in /v1."
        )
    status = (
        err.status_code
        if isinstance(err, openai.APIStatusError | openai.APIResponseValidationError)
        else None
    )
    if status is not None and status >= 500:
        return BackendError(f"Server error {status} from {host}: {detail} Try again later.")
    if status is not None:
        return BackendError(f"{host} refused the request ({status}): {detail}")
    return BackendError(f"Request to {host} failed: {detail}")


# How servers word "this model or build cannot take tools" (not a bad schema or a bad name,
# which are the user's to fix and keep the server's own words).
NO_TOOLS = re.compile(
    r"does not support (tools|function)|tools? param\w* (requires|is not supported)"
    r"|tools? (are|is) not supported|tool.choice requires"
    r"|function calling is not (supported|enabled)",
    re.IGNORECASE,
)


def no_tool_calls(err: openai.APIError, host: str, model: str) -> BackendError | None:
    """A request with ``tools`` refused because of them: Ollama's "… does not support tools"
    (400), llama.cpp's "tools param requires --jinja flag" (500), vLLM's "auto" tool choice
    needing --enable-auto-tool-choice (400). Any error status whose message names tools."""
    import openai

    if not isinstance(err, openai.APIStatusError) or not NO_TOOLS.search(short(err)):
        return None
    said = short(err).removesuffix(".")
    return BackendError(
        f"{host} cannot take native tool calls for {model or 'this model'} "
        f"({err.status_code}: {said}): set Tool calls to ReAct text for this "
        "model, or start the server with tool support."
    )


def unknown_model(host: str, model: str, models: list[str]) -> BackendError:
    """A 404 for a model the server does not have, with the ones it does (ten at most)."""
    shown = ", ".join(models[:10]) + (" …" if len(models) > 10 else "")
    return BackendError(
        f"Model {model!r} was not found at {host} (404). Available: {shown or 'none'}."
    )


def out_of_quota(err: openai.RateLimitError, host: str) -> BackendError | None:
    """A 429 that means out of credit, not busy: waiting and retrying cannot help."""
    if err.code != "insufficient_quota":
        return None
    return BackendError(f"{host}: {short(err)} (429, insufficient quota)")


def gave_up(host: str, retries: int) -> BackendError:
    return BackendError(
        f"Rate limited (429) by {host}: gave up after {retries} retries. "
        "Wait a minute or use another model."
    )


def stream_broke(err: Exception, config: ServerConfig, chunks: int) -> BackendError:
    """A stream that failed after it began: what happened, and that the text so far stays."""
    return BackendError(
        f"The stream from {config.host} broke after {chunks} chunks "
        f"({_stream_failure(err, config)}); the partial reply is kept."
    )


def _stream_failure(err: Exception, config: ServerConfig) -> str:
    import openai

    # A body read mid-stream raises the HTTP library's own errors, not the SDK's: both kinds
    # are checked, timeouts first (asyncio's TimeoutError is also an OSError).
    if isinstance(err, (openai.APITimeoutError, *timeout_errors())):
        return f"no data for {config.timeout_s:g} s"
    if isinstance(err, (openai.APIConnectionError, *transport_errors())):
        return "the connection was lost"
    if isinstance(err, UnicodeDecodeError):
        return "the server sent bytes that are not UTF-8"
    if isinstance(err, ValueError):
        return "the server sent a chunk that is not valid JSON"
    return short(err)
