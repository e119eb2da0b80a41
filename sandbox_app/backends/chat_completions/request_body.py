"""What a chat completion request sends, per model: one place for every parameter rule.

OpenAI's reasoning models (o1, o3, o4-mini, the gpt-5 family) reject ``max_tokens`` (they
take ``max_completion_tokens``), ``stop``, any temperature but 1 and ``parallel_tool_calls``
(even false), so they are sent none of them. Other servers have their own refusals: when one
answers 400 naming a parameter, the request is sent again once without it (or with its
replacement: ``max_tokens`` for a server that refuses ``max_completion_tokens``); a refused
``reasoning_effort`` value is sent again as the nearest value the 400 lists; a field the
server requires back in a tool-calling turn is sent from then on (passback.py). Each is
remembered for the model while the app runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set
from dataclasses import dataclass, field
from typing import Any

from sandbox_app.backends.catalogue.request_fields import CHAT, place
from sandbox_app.backends.transport import passback
from sandbox_app.core.running.backend import Message, StreamParams
from sandbox_app.core.running.model_traits import is_openai_reasoning_model
from sandbox_app.core.scenarios.setting_rules import REASONING_EFFORTS

# Parameters a request may do without, and what goes instead ("" for nothing).
REPLACEMENTS = {
    "max_tokens": "max_completion_tokens",
    "max_completion_tokens": "max_tokens",
    "stop": "",
    "temperature": "",
    "top_p": "",
    "seed": "",
    "reasoning_effort": "",
    "stream_options": "",
    "parallel_tool_calls": "",
}
# "Unsupported parameter: 'stop' is not supported…", "Unsupported value: 'temperature' does
# not support 0…"; other servers word it "… 'stop' is not supported"; a server checking its
# body with pydantic lists "[{'type': 'extra_forbidden', 'loc': ('body',
# 'max_completion_tokens'), 'msg': 'Extra inputs are not permitted', …}]" (voideditor/void#128).
_NAMED = re.compile(
    r"['\"`](\w+)['\"`][^.]{0,40}\bnot supported|unsupported \w+: ['\"`](\w+)"
    r"|extra_forbidden['\"], ['\"]loc['\"]: \(['\"]body['\"], ['\"](\w+)['\"]\)",
    re.IGNORECASE,
)

UNSUPPORTED_CODES = ("unsupported_parameter", "unsupported_value")  # OpenAI's codes for these 400s


@dataclass
class ModelFacts:
    """What one model at one server taught the app by its 400s (the same object every time)."""

    refused: set[str] = field(default_factory=set)  # parameters it does not take
    efforts: dict[str, str] = field(default_factory=dict)  # refused effort → the one sent
    passback: set[str] = field(default_factory=set)  # fields it requires back (passback.py)


# (base URL, model) → what that model taught; kept while the app runs, never saved.
_facts: dict[tuple[str, str], ModelFacts] = {}


def facts_for(base_url: str, model: str) -> ModelFacts:
    return _facts.setdefault((base_url, model), ModelFacts())


def refused_by(base_url: str, model: str) -> set[str]:
    """The parameters ``model`` at ``base_url`` refused so far (the same set every time)."""
    return facts_for(base_url, model).refused


def forget_refusals() -> None:
    _facts.clear()


def request_body(
    messages: Sequence[Message],
    params: StreamParams,
    refused: Set[str] = frozenset(),
    *,
    efforts: dict[str, str] | None = None,
    passback_fields: Set[str] = frozenset(),
) -> dict[str, Any]:
    """The body for ``params``; ``passback_fields``: what the model requires back on its
    tool-calling assistant messages (passback.py), written from each message's PROVIDER."""
    reasoning_model = is_openai_reasoning_model(params.model)
    fields = frozenset(passback_fields) if params.tools else frozenset()
    request: dict[str, Any] = {
        "model": params.model,
        # A reply's provider data (PROVIDER) is never sent as it is: what a server requires
        # back is written into the message by the passback rules, by name.
        "messages": [passback.passed_back(message, fields) for message in messages],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if params.stop and not reasoning_model:
        request["stop"] = list(params.stop)[:4]  # OpenAI accepts at most four
    if params.tools:  # native tool calling; no tool_choice: "auto" is the API's default
        request["tools"] = list(params.tools)
    place(request, params, CHAT)  # the settings, by their own names
    for name, value in params.extra:  # never over what the rules above wrote
        request.setdefault(name, value)
    # The first limit the server has not refused: a server may refuse both, then none.
    limits = ("max_completion_tokens", "max_tokens")
    limit = next((n for n in limits[:: 1 if reasoning_model else -1] if n not in refused), "")
    request[limit or "max_tokens"] = request.pop("max_tokens")
    if "reasoning_effort" in request:
        effort = request["reasoning_effort"]
        request["reasoning_effort"] = (efforts or {}).get(effort, effort)
    if reasoning_model:  # no sampling, nor parallel_tool_calls even when false (langchain-
        for name in ("temperature", "top_p", "parallel_tool_calls"):  # ai/langchain#29416)
            request.pop(name, None)
    for name in refused:
        request.pop(name, None)
    return request


# The keys request_body writes by its own rules, each a keyword the SDK's create() takes; any
# other (a lane setting's request_key) goes through the SDK's extra_body, into the same JSON.
SDK_KEYWORDS = frozenset(
    {
        "model", "messages", "stream", "stream_options", "max_tokens", "max_completion_tokens",
        "stop", "seed", "temperature", "top_p", "reasoning_effort", "tools",
        "parallel_tool_calls",
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
    message = error_message(err)
    found = _NAMED.search(message)
    param = getattr(err, "param", None)
    if getattr(err, "code", None) not in UNSUPPORTED_CODES:
        if found is None:
            return None
        param = None  # named by the wording, not by a field about some other problem
    if not isinstance(param, str) or param not in request:
        param = next((g for g in found.groups() if g), None) if found else None
    if param in REPLACEMENTS and param in request:
        return param
    return None


def refusal_notice(param: str, model: str, refused: Set[str] = frozenset()) -> str:
    instead = REPLACEMENTS[param]
    instead = "" if instead in refused else instead
    how = f"with {instead} instead" if instead else "without it"
    return (
        f"The server does not take {param!r} for {model or 'this model'}: sent again {how} "
        "(remembered for this model while the app runs)."
    )


# "Unsupported value: 'reasoning_effort' does not support 'xhigh' with this model. Supported
# values are: 'minimal', 'low', 'medium', and 'high'." (gpt-5-mini, kaitranntt/ccs#344);
# "Unsupported value: 'minimal' is not supported with the 'gpt-5.1' model. Supported values
# are: 'none', 'low', 'medium', and 'high'." (anomalyco/opencode#4451).
_SUPPORTED = re.compile(r"supported values are:?(.*)", re.IGNORECASE | re.DOTALL)
_QUOTED = re.compile(r"['\"`](\w+)['\"`]")


def nearest_effort(err: Exception, request: dict[str, Any]) -> str | None:
    """The accepted ``reasoning_effort`` nearest the one a 400 refused, when the 400 lists
    the accepted ones: the closest on none…xhigh, the higher of two as close (the user asked
    for some thinking). None for any other 400."""
    sent = request.get("reasoning_effort")
    if not isinstance(sent, str) or sent not in REASONING_EFFORTS:
        return None
    message = error_message(err)
    param = getattr(err, "param", None)
    about_effort = param in ("reasoning_effort", "reasoning.effort") or (
        "reasoning_effort" in message or f"'{sent}'" in message
    )
    listed = _SUPPORTED.search(message)
    if not about_effort or listed is None:
        return None
    accepted: list[str] = [v for v in _QUOTED.findall(listed.group(1)) if v in REASONING_EFFORTS]
    if not accepted or sent in accepted:
        return None
    rank = REASONING_EFFORTS.index
    return min(accepted, key=lambda v: (abs(rank(v) - rank(sent)), -rank(v)))


def effort_notice(refused: str, instead: str, model: str) -> str:
    return (
        f"The server does not take reasoning_effort {refused!r} for {model or 'this model'}: "
        f"sent again with {instead!r}, the nearest it takes (remembered for this model while "
        "the app runs)."
    )


def error_message(err: Exception) -> str:
    """A 400's message as the server wrote it. The SDK keeps the error object as ``body``;
    Gemini's OpenAI-compatible endpoint sends a list of them, OpenRouter the upstream's own
    error in ``metadata.raw`` under its "Provider returned error"."""
    body = getattr(err, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], dict):
        body = body[0].get("error", body[0])
    if not isinstance(body, dict) or not isinstance(body.get("message"), str):
        return str(err)
    metadata = body.get("metadata")
    raw = metadata.get("raw") if isinstance(metadata, dict) else None
    message: str = body["message"]
    return message + (f": {raw}" if isinstance(raw, str) else "")
