"""Backends are named by stable ids; the labels older files and settings hold still read."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.backends.catalogue.presets import CUSTOM, PRESETS, preset_for_url, preset_with_id
from sandbox_app.backends.chat_completions import openai_kind
from sandbox_app.backends.offline import scripted
from sandbox_app.backends.offline.scripted import ScriptedBackend
from sandbox_app.backends.registry import (
    BackendConfig,
    backend_id,
    backend_ids,
    config_for,
    display_name,
    make_backend,
)
from tests.helpers import builtin

LEGACY_LABELS = {
    "Scripted (offline)": "scripted",
    "Custom URL": "custom",
    "Custom": "custom",
    "OpenAI": "openai",
    "Ollama": "ollama",
    "LM Studio": "lmstudio",
    "llama.cpp": "llamacpp",
    "vLLM": "vllm",
    "OpenRouter": "openrouter",
    "Groq": "groq",
}


def test_the_ids_are_the_scripted_model_each_preset_and_custom() -> None:
    assert backend_ids() == (
        "scripted",
        "openai",
        "ollama",
        "lmstudio",
        "llamacpp",
        "vllm",
        "openrouter",
        "groq",
        "deepseek",
        "mistral",
        "xai",
        "together",
        "fireworks",
        "cerebras",
        "custom",
        "anthropic",
        "responses",
        "gemini",
        "ollama-native",
    )


def test_every_preset_has_a_unique_id_and_name() -> None:
    presets = (*PRESETS, CUSTOM)
    assert len({p.id for p in presets}) == len(presets)
    assert len({p.name.casefold() for p in presets}) == len(presets)
    assert all(p.id == p.id.strip().lower() and p.id.isascii() for p in presets)


@pytest.mark.parametrize("backend", backend_ids())
def test_ids_round_trip_through_their_display_names(backend: str) -> None:
    assert backend_id(backend) == backend
    assert backend_id(display_name(backend)) == backend
    assert config_for(backend).backend_id == backend


def test_display_names_are_what_the_window_shows() -> None:
    assert [display_name(b) for b in backend_ids()] == [
        "Scripted (offline)",
        "OpenAI",
        "Ollama",
        "LM Studio",
        "llama.cpp",
        "vLLM",
        "OpenRouter",
        "Groq",
        "DeepSeek",
        "Mistral",
        "xAI",
        "Together",
        "Fireworks",
        "Cerebras",
        "Custom URL",
        "Anthropic (Claude)",
        "OpenAI Responses API",
        "Google Gemini",
        "Ollama (native API)",
    ]


@pytest.mark.parametrize(("label", "expected"), list(LEGACY_LABELS.items()))
def test_legacy_labels_normalise_to_ids_ignoring_case(label: str, expected: str) -> None:
    assert backend_id(label) == expected
    assert backend_id(label.upper()) == expected
    assert backend_id(f"  {label.lower()}\n") == expected


@pytest.mark.parametrize("label", ["", "Scripted offline", "lm-studio", "Acme AI", "Custom\nURL"])
def test_an_unknown_label_is_a_one_line_value_error(label: str) -> None:
    with pytest.raises(
        ValueError, match=r"^unknown backend .*; known: scripted, openai, "
    ) as caught:
        backend_id(label)
    assert "\n" not in str(caught.value)


def test_a_very_long_label_is_cut_in_the_message() -> None:
    with pytest.raises(ValueError, match=r"^unknown backend 'xxxxx") as caught:
        backend_id("x" * 10_000)
    # The label is cut to 60 characters; the list of known ids grows with the kinds.
    assert "x" * 61 not in str(caught.value)
    assert len(str(caught.value)) < 100 + len(", ".join(backend_ids()))


@pytest.mark.parametrize("function", [display_name, config_for])
def test_display_name_and_config_for_take_ids_not_labels(
    function: Callable[[str], object],
) -> None:
    with pytest.raises(ValueError, match=r"^unknown backend 'LM Studio'; known: "):
        function("LM Studio")


def test_config_for_picks_the_preset_and_keeps_the_rest() -> None:
    config = config_for("lmstudio", "http://gpu-box:1234/v1", "qwen3", 30.0, "sk-typed")
    assert config == BackendConfig(
        openai_kind.KIND, "lmstudio", "http://gpu-box:1234/v1", "qwen3", 30.0, "sk-typed"
    )
    assert display_name(config.backend_id) == "LM Studio"
    assert config.url == "http://gpu-box:1234/v1"
    assert config_for("lmstudio").url == preset_with_id("lmstudio").base_url
    assert config_for("custom", "http://x/v1").kind is openai_kind.KIND
    assert config_for("scripted") == BackendConfig(scripted.KIND, "scripted")


def test_a_config_from_an_id_builds_the_same_backend_as_before() -> None:
    scenario = builtin("brightgrid")
    assert isinstance(
        make_backend(config_for("scripted"), scenario, KeyStore()),
        ScriptedBackend,
    )
    server = make_backend(config_for("ollama", model="llama3"), scenario, KeyStore())
    assert server.label == "Ollama"
    custom = make_backend(config_for("custom", "http://127.0.0.1:9/v1"), scenario, KeyStore())
    assert custom.label == "127.0.0.1:9"


def test_a_preset_url_still_finds_its_preset_and_any_other_is_custom() -> None:
    for preset in PRESETS:
        assert preset_for_url(preset.base_url + "/") is preset
    assert preset_for_url("http://127.0.0.1:9/v1") is CUSTOM


def test_the_scenario_readers_label_migration_agrees_with_the_registry() -> None:
    # core cannot import the registry, so it migrates old labels by rule: check the rule.
    from sandbox_app.core.scenarios.scenario_file import _backend_id

    # Files held labels only before ids: the kinds there were then (the scripted model, the
    # presets, custom). A kind added since was only ever written by its id.
    labelled = {scripted.KIND, openai_kind.KIND}
    for backend in backend_ids():
        if config_for(backend).kind in labelled:
            assert _backend_id(display_name(backend)) == backend
        assert _backend_id(backend) == backend
