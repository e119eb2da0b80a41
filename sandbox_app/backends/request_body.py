"""What a chat completion request sends, per model: one place for every parameter rule.

OpenAI's reasoning models (o1, o3, o4-mini, the gpt-5 family) reject ``max_tokens`` (they
take ``max_completion_tokens``), ``stop`` and any temperature but 1, so they are sent none
of them. Other servers have their own refusals: when one
answers 400 naming a parameter, the request is sent again once without it (or with its
replacement), and that is remembered for the model while the app runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set
from typing import Any

from sandbox_app.core.running.backend import PROVIDER, Message, StreamParams
from sandbox_app.core.running.model_traits import is_openai_reasoning_model

# Parameters a request may do without, and what goes instead ("" for nothing).
REPLACEMENTS = {
    "max_tokens": "max_completion_tokens",
    "max_completion_tokens": "",
    "stop": "",
    "temperature": "",
    "top_p": "",
    "seed": "",
    "reasoning_effort": "",
    "stream_options": "",
}
# "Unsupported parameter: 'stop' is not supported…", "Unsupported value: 'temperature' does
# not support 0…"; other servers word it "… 'stop' is not supported".
_NAMED = re.compile(
    r"['\"`](\w+)['\"`][^.]{0,40}\bnot supported|unsupported \w+: ['\"`](\w+)", re.IGNORECASE
)

UNSUPPORTED_CODES = ("unsupported_parameter", "unsupported_value")  # OpenAI's codes for these 400s

# (base URL, model) → the parameters that model refused; kept while the app runs.
_refused: dict[tuple[str, str], set[str]] = {}


def refused_by(base_url: str, model: str) -> set[str]:
    """The parameters ``model`` at ``base_url`` refused so far (the same set every time)."""
    return _refused.setdefault((base_url, model), set())


def forget_refusals() -> None:
    _refused.clear()


def request_body(
    messages: Sequence[Message], params: StreamParams, refused: Set[str] = frozenset()
) -> dict[str, Any]:
    reasoning_model = is_openai_reasoning_model(params.model)
    request: dict[str, Any] = {
        "model": params.model,
        # A reply's provider data (PROVIDER) is never sent as it is: what a server requires
        # back is written into the message by the passback rules, by name.
        "messages": [_sendable(message) for message in messages],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    limit = "max_completion_tokens" if reasoning_model else "max_tokens"
    while limit in refused:
        limit = REPLACEMENTS[limit]
    if limit:
        request[limit] = params.max_tokens
    if params.stop and not reasoning_model:
        request["stop"] = list(params.stop)[:4]  # OpenAI accepts at most four
    sampling: dict[str, float | None] = {"seed": params.seed}
    if not reasoning_model:
        sampling |= {"temperature": params.temperature, "top_p": params.top_p}
    for name, value in sampling.items():
        if value is not None:
            request[name] = value
    if params.reasoning_effort:
        request["reasoning_effort"] = params.reasoning_effort
    if params.tools:  # native tool calling; no tool_choice: "auto" is the API's default
        request["tools"] = list(params.tools)
    for name, value in params.extra:  # never over what the rules above wrote
        request.setdefault(name, value)
    for name in refused:
        request.pop(name, None)
    return request


def _sendable(message: Message) -> Message:
    if PROVIDER not in message:
        return message
    return {k: v for k, v in message.items() if k != PROVIDER}


# The keys request_body writes by its own rules, each a keyword the SDK's create() takes; any
# other (a lane setting's request_key) goes through the SDK's extra_body, into the same JSON.
SDK_KEYWORDS = frozenset(
    {
        "model", "messages", "stream", "stream_options", "max_tokens", "max_completion_tokens",
        "stop", "seed", "temperature", "top_p", "reasoning_effort", "tools",
    }
)  # fmt: skip


def sdk_arguments(request: dict[str, Any]) -> dict[str, Any]:
    """``request`` as the SDK's create() takes it: the body's other keys in ``extra_body``."""
    extra = {k: v for k, v in request.items() if k not in SDK_KEYWORDS}
    known = {k: v for k, v in request.items() if k in SDK_KEYWORDS}
    return {**known, "extra_body": extra} if extra else known


def refused_parameter(err: Exception, request: dict[str, Any]) -> str | None:
    """The parameter a 400 says is not supported, if the request sent it and can do without.

    Only a refusal counts ("unsupported_parameter", "unsupported_value", or "… not
    supported" in the message): a value out of range ("max_tokens is too large") is the
    user's to fix, not a parameter to drop.
    """
    body = getattr(err, "body", None)
    message = str((body.get("message") if isinstance(body, dict) else None) or err)
    found = _NAMED.search(message)
    param = getattr(err, "param", None)
    if getattr(err, "code", None) not in UNSUPPORTED_CODES:
        if found is None:
            return None
        param = None  # named by the wording, not by a field about some other problem
    if not isinstance(param, str) or param not in request:
        param = (found.group(1) or found.group(2)) if found else None
    if param in REPLACEMENTS and param in request:
        return param
    return None


def refusal_notice(param: str, model: str) -> str:
    instead = REPLACEMENTS[param]
    how = f"with {instead} instead" if instead else "without it"
    return (
        f"The server does not take {param!r} for {model or 'this model'}: sent again {how} "
        "(remembered for this model while the app runs)."
    )
