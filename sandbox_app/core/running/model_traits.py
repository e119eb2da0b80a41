"""What the app has learnt about a model while it runs: does it think, does its template open
the thinking block itself. Learnt once, used for every later request to that model.

Keyed by the backend's label (a preset's name or the custom URL's host) and the model name;
kept for the life of the process, never saved: a server upgrade or another template may
change the answer by tomorrow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sandbox_app.core.scenarios.lane_settings import PLAIN_MAX_TOKENS as PLAIN_MAX_TOKENS
from sandbox_app.core.scenarios.lane_settings import THINKING_MAX_TOKENS as THINKING_MAX_TOKENS

# OpenAI's reasoning models, by name (also behind a provider prefix, "openai/o3-mini"):
# o1, o3, o4-mini…, and the gpt-5 family. They think without showing it and reject
# max_tokens, stop and a temperature other than 1.
_OPENAI_REASONING = re.compile(r"(?:^|/)(?:o\d+(?:$|[-.])|gpt-5)", re.IGNORECASE)


def is_openai_reasoning_model(model: str) -> bool:
    return _OPENAI_REASONING.search(model.strip()) is not None


@dataclass
class ModelTraits:
    # It sent reasoning: never give it a server-side stop (a server may apply the stop to the
    # raw text, thinking included), and Auto max tokens is THINKING_MAX_TOKENS.
    thinks: bool = False
    # Its replies start inside a thinking block: it wrote "…</think>" without "<think>".
    starts_inside: bool = False

    def auto_max_tokens(self) -> int:
        return THINKING_MAX_TOKENS if self.thinks else PLAIN_MAX_TOKENS


_known: dict[tuple[str, str], ModelTraits] = {}


def traits_for(backend: str, model: str) -> ModelTraits:
    """The traits of ``model`` on ``backend``; the same object every time, so learning sticks."""
    key = (backend, model)
    traits = _known.get(key)
    if traits is None:
        traits = _known[key] = ModelTraits(thinks=is_openai_reasoning_model(model))
    return traits


def forget_all() -> None:
    """Start again from nothing learnt (tests; a fresh comparison)."""
    _known.clear()
