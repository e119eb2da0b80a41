"""Lane settings only some backend kinds take: a local server's context window, a thinking
budget, Ollama's ``think`` and ``keep_alive``.

Each is ``kind_specific``: a kind lists the ones it reads in ``BackendKind.settings``
(backends/catalogue/kinds.py), and its panel shows their rows; every other kind ignores the value,
so
a file or a lane may set them for all lanes alike. The engine hands them to the backend in
``StreamParams`` (core/running/backend.py). Registered after lane_settings.py's own.
"""

from __future__ import annotations

from sandbox_app.core.scenarios.setting_registry import Setting, register
from sandbox_app.core.scenarios.setting_rules import Rule

THINK_LEVELS = ("off", "on", "low", "medium", "high")

register(
    Setting(
        "context_window",
        Rule("whole", 256, 10_000_000, nullable=True),
        None,
        "Context",
        "the context window in tokens the server holds for the model (Ollama: sent as "
        "num_ctx); the context meter measures each prompt against it (default: as served)",
        none_text="As served",
        kind_specific=True,
    )
)
register(
    Setting(
        "thinking_budget",
        Rule("whole", 0, 1_000_000, nullable=True),
        None,
        "Thinking budget",
        "tokens the model may think before it answers (Anthropic, Gemini); 0 turns thinking "
        "off where the model allows it (default: the model's own)",
        none_text="Model default",
        kind_specific=True,
    )
)
register(
    Setting(
        "think",
        Rule("choice", nullable=True, choices=THINK_LEVELS),
        None,
        "Think",
        "whether the model thinks first (Ollama's think: off, on, or low/medium/high for "
        "models that take a level; default: the model's)",
        none_text="Model default",
        kind_specific=True,
    )
)
register(
    Setting(
        "keep_alive",
        Rule("text", nullable=True),
        None,
        "Keep loaded",
        "how long the server keeps the model in memory after a request (Ollama's "
        'keep_alive: "5m", "1h", "-1" for ever, "0" to unload; default: the server\'s)',
        none_text="Server default",
        kind_specific=True,
        same_answer=True,
    )
)
register(
    Setting(
        "prompt_cache",
        Rule("switch"),
        False,
        "Prompt cache",
        "mark the system prompt for the provider's prompt cache (Anthropic's cache_control): "
        "later requests read it back cheaper, the first writes it; off by default",
        kind_specific=True,
        same_answer=True,
    )
)
