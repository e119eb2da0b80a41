"""The hosted OpenAI-compatible presets (DeepSeek, Mistral, xAI, Together, Fireworks,
Cerebras): each has its URL and key variable, and each key goes only to its own host."""

from __future__ import annotations

import pytest

from sandbox_app.backends.catalogue.keys import CUSTOM_KEY_ENV, KeyStore
from sandbox_app.backends.catalogue.presets import PRESETS, preset_named
from sandbox_app.backends.registry import config_for, key_decision, key_notice
from sandbox_app.cli.main import main
from tests.model_server import ModelScript, ModelServer

HOSTED = {
    "deepseek": ("https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
    "mistral": ("https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
    "xai": ("https://api.x.ai/v1", "XAI_API_KEY"),
    "together": ("https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    "fireworks": ("https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY"),
    "cerebras": ("https://api.cerebras.ai/v1", "CEREBRAS_API_KEY"),
}


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for _, env in HOSTED.values():
        monkeypatch.delenv(env, raising=False)
    monkeypatch.delenv(CUSTOM_KEY_ENV, raising=False)


def test_each_hosted_preset_has_its_url_and_key_variable() -> None:
    found = {p.id: (p.base_url, p.key_env) for p in PRESETS if p.id in HOSTED}
    assert found == HOSTED
    assert preset_named("xai").id == "xai"  # run --preset takes the name, any case


@pytest.mark.usefixtures("no_keys")
def test_a_presets_key_goes_to_its_own_host_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek-secret")
    keys = KeyStore(keyring_open=False)
    assert key_decision(config_for("deepseek"), keys).key == "sk-deepseek-secret"
    # Another preset's host, the same preset moved to another URL, a custom URL: none of it.
    for config in (
        config_for("mistral"),
        config_for("deepseek", "https://api.mistral.ai/v1"),
        config_for("custom", "https://proxy.example/v1"),
    ):
        assert key_decision(config, keys).key == "", config
    assert "DEEPSEEK_API_KEY goes only to https://api.deepseek.com/v1" in key_notice(
        config_for("deepseek", "https://proxy.example/v1"), keys
    )


@pytest.mark.usefixtures("no_keys")
def test_the_deepseek_key_never_reaches_another_server(
    fake_server: ModelServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek-secret")
    fake_server.set_model("m", ModelScript(replies=["Answer: 1"], cycle=True))
    url = fake_server.base_url
    assert main(["run", "--preset", "DeepSeek", "--base-url", url, "--model", "m"]) == 0
    assert main(["run", "--base-url", url, "--model", "m"]) == 0
    assert len(fake_server.authorizations) == 2
    assert all("secret" not in header for header in fake_server.authorizations)
    assert "DEEPSEEK_API_KEY goes only to" in capsys.readouterr().err
