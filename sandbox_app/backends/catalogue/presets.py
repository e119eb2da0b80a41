"""The servers one can pick by name (OpenAI, Ollama, LM Studio, …), and one server's settings.

A preset has a stable ``id`` for files and settings ("lmstudio") and a display ``name`` for
people ("LM Studio"): names may be reworded, ids never change. Any other URL is the
:data:`CUSTOM` preset. Imports nothing heavy: the window and the CLI read this at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Preset:
    id: str  # stable: written to settings and scenario files
    name: str  # shown to people
    base_url: str
    key_env: str | None = None  # where the key is read from; None: local, no key needed
    hint: str = "is the server running?"


_NETWORK = "check your network."

PRESETS: tuple[Preset, ...] = (
    Preset(
        "openai", "OpenAI", "https://api.openai.com/v1", "OPENAI_API_KEY", "check your network."
    ),
    Preset(
        "ollama", "Ollama", "http://localhost:11434/v1", None, "is Ollama running (ollama serve)?"
    ),
    Preset(
        "lmstudio",
        "LM Studio",
        "http://localhost:1234/v1",
        None,
        "is LM Studio's local server started?",
    ),
    Preset("llamacpp", "llama.cpp", "http://localhost:8080/v1", None, "is llama-server running?"),
    Preset("vllm", "vLLM", "http://localhost:8000/v1", None, "is vllm serve running?"),
    Preset(
        "openrouter",
        "OpenRouter",
        "https://openrouter.ai/api/v1",
        "OPENROUTER_API_KEY",
        "check your network.",
    ),
    Preset("groq", "Groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY", "check your network."),
    # Hosted OpenAI-compatible APIs, each URL and key variable as its provider's docs give them.
    Preset("deepseek", "DeepSeek", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", _NETWORK),
    Preset("mistral", "Mistral", "https://api.mistral.ai/v1", "MISTRAL_API_KEY", _NETWORK),
    Preset("xai", "xAI", "https://api.x.ai/v1", "XAI_API_KEY", _NETWORK),
    Preset("together", "Together", "https://api.together.xyz/v1", "TOGETHER_API_KEY", _NETWORK),
    Preset(
        "fireworks",
        "Fireworks",
        "https://api.fireworks.ai/inference/v1",
        "FIREWORKS_API_KEY",
        _NETWORK,
    ),
    Preset("cerebras", "Cerebras", "https://api.cerebras.ai/v1", "CEREBRAS_API_KEY", _NETWORK),
)
# Any URL that is not a preset's: no key of a preset's, no server-specific hint. Compared by
# identity (``preset is CUSTOM``) where a custom server is worded differently.
CUSTOM = Preset("custom", "Custom URL", "", None)


def preset_named(name: str) -> Preset:
    """The preset with this display name, ignoring case (the CLI's ``--preset``)."""
    for preset in PRESETS:
        if preset.name.casefold() == name.casefold():
            return preset
    raise KeyError(name)


def preset_with_id(preset_id: str) -> Preset:
    """The preset with this stable id, :data:`CUSTOM` included; KeyError for any other."""
    for preset in (*PRESETS, CUSTOM):
        if preset.id == preset_id:
            return preset
    raise KeyError(preset_id)


def preset_for_url(base_url: str) -> Preset:
    for preset in PRESETS:
        if preset.base_url.rstrip("/") == base_url.rstrip("/"):
            return preset
    return CUSTOM


@dataclass(frozen=True)
class ServerConfig:
    """One server as a backend talks to it: its URL, the key resolved for it, its preset."""

    base_url: str
    api_key: str = ""
    preset: Preset = CUSTOM
    timeout_s: float = 60.0

    @property
    def host(self) -> str:
        return urlsplit(self.base_url).netloc or self.base_url

    @property
    def needs_key(self) -> bool:
        return self.preset.key_env is not None
