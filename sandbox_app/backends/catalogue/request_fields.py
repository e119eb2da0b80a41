"""Where each backend kind sends the lane settings that are request parameters: one table per
kind, and the one rule for a setting a kind has no field for.

A request setting (``Setting.sent``, or one with a ``request_key``: core/scenarios) is named
once, generically ("temperature", "max_tokens"); each kind's :class:`RequestFields` says
where its body takes it: a path (``"generationConfig.topP"``: ``topP`` inside
``generationConfig``), :data:`OWN_RULE` when the kind's request builder works it out itself
(Anthropic's and Gemini's thinking from ``reasoning_effort``), or nothing, when it cannot send
it. A run that sets a setting its kind cannot send is refused before it starts, with one line
naming both (:func:`refusal`), never sent without it. The builders write the body's own
structure (messages, tools, stop) and call :func:`place`; their rules for some models (a
reasoning model's refusals, a thinking budget counted in max_tokens) then apply to what it
wrote. A new request setting is its register() call and a line per kind here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sandbox_app.core.running.backend import BackendError, StreamParams
from sandbox_app.core.scenarios.lane_settings import SETTINGS, LaneSettings

OWN_RULE = "*"  # taken, and written by the kind's request builder by rules of its own


@dataclass(frozen=True, eq=False)  # one table a kind, told apart by identity (a kind is hashed)
class RequestFields:
    """One kind's request parameters: each generic setting → its path in the kind's body."""

    paths: Mapping[str, str]
    # Where a setting's ``request_key`` goes, sent as it is: "" the body's top level, a path
    # for inside an object there (Ollama's model options); None: the kind sends none.
    passed_through: str | None = None
    offline: bool = False  # no request at all (the offline model): every setting is moot

    def path(self, name: str) -> str | None:
        """Where setting ``name`` goes; None when this kind cannot send it."""
        if name in self.paths:
            return self.paths[name]
        key = SETTINGS[name].request_key if name in SETTINGS else ""
        if not key or self.passed_through is None:
            return None
        return f"{self.passed_through}.{key}" if self.passed_through else key


NO_FIELDS = RequestFields({})  # a kind that declared none: it refuses every setting set
OFFLINE = RequestFields({}, offline=True)
# OpenAI's Chat Completions and the servers that copy it: the settings' own names.
CHAT = RequestFields(
    {
        "temperature": "temperature",
        "max_tokens": "max_tokens",
        "top_p": "top_p",
        "seed": "seed",
        "reasoning_effort": "reasoning_effort",
    },
    passed_through="",
)
ANTHROPIC = RequestFields(
    {
        "temperature": "temperature",
        "max_tokens": "max_tokens",
        "top_p": "top_p",
        "reasoning_effort": OWN_RULE,  # a thinking budget (anthropic_messages.py)
    },
    passed_through="",
)
RESPONSES = RequestFields(
    {
        "temperature": "temperature",
        "max_tokens": "max_output_tokens",
        "top_p": "top_p",
        "reasoning_effort": "reasoning.effort",
    },
    passed_through="",
)
GEMINI = RequestFields(
    {
        "temperature": "generationConfig.temperature",
        "max_tokens": "generationConfig.maxOutputTokens",
        "top_p": "generationConfig.topP",
        "seed": "generationConfig.seed",
        "reasoning_effort": OWN_RULE,  # a thinking level or budget (gemini_contents.py)
    },
    # The API reads a field's proto name (top_k) as well as its JSON one (topK).
    passed_through="generationConfig",
)
OLLAMA = RequestFields(
    {
        "temperature": "options.temperature",
        "max_tokens": "options.num_predict",
        "top_p": "options.top_p",
        "seed": "options.seed",
    },
    passed_through="options",  # a model's parameters, as a Modelfile's PARAMETER names them
)


def refusal(kind_name: str, fields: RequestFields, settings: LaneSettings) -> str:
    """One line for the first request setting ``settings`` set that the kind cannot send
    ("" for none)."""
    if fields.offline:
        return ""
    for name, setting in SETTINGS.items():
        sent = setting.sent or bool(setting.request_key)
        if sent and settings[name] is not None and fields.path(name) is None:
            return f"{name}: {kind_name} cannot send it; leave it unset for this backend"
    return ""


def place(body: dict[str, Any], params: StreamParams, fields: RequestFields) -> dict[str, Any]:
    """``body`` with each request setting ``params`` carries written where the kind takes
    it, never over what the builder wrote there (its own structure wins)."""
    for name, value in params.sent().items():
        path = fields.path(name)
        if path is None:  # refused before the run; a caller that skipped the check learns here
            raise BackendError(f"{name}: this backend cannot send it; leave it unset")
        if path == OWN_RULE:
            continue
        *parents, leaf = path.split(".")
        target = body
        for parent in parents:
            target = target.setdefault(parent, {})
        target.setdefault(leaf, value)
    return body
