"""The one key rule: a preset's key goes only to that preset's own host (CLI and registry).

Checked against the Authorization headers the test server really received.
"""

from __future__ import annotations

import pytest

from sandbox_app.backends.catalogue.keys import CUSTOM_KEY_ENV, KeyStore, account_for, host_of
from sandbox_app.backends.catalogue.presets import preset_named
from sandbox_app.backends.registry import config_for, server_config
from sandbox_app.cli.main import main
from tests.model_server import ModelScript, ModelServer


@pytest.mark.parametrize(
    ("preset", "env_var"), [("OpenAI", "OPENAI_API_KEY"), ("Groq", "GROQ_API_KEY")]
)
def test_a_preset_with_its_base_url_edited_never_sends_the_preset_key(
    fake_server: ModelServer,
    monkeypatch: pytest.MonkeyPatch,
    preset: str,
    env_var: str,
) -> None:
    monkeypatch.setenv(env_var, "sk-provider-secret")
    monkeypatch.delenv(CUSTOM_KEY_ENV, raising=False)
    fake_server.set_model("m", ModelScript(replies=["Answer: 1"]))
    args = ["run", "--preset", preset, "--base-url", fake_server.base_url, "--model", "m"]
    assert main(args) == 0
    assert fake_server.authorizations == ["Bearer not-needed"]
    monkeypatch.setenv(CUSTOM_KEY_ENV, "sk-for-this-server")
    assert main(args) == 0
    assert fake_server.authorizations[-1] == "Bearer sk-for-this-server"


def test_the_preset_key_still_goes_to_the_presets_own_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    monkeypatch.setenv(CUSTOM_KEY_ENV, "sk-other")
    own = server_config(config_for("openai", "https://API.openai.com/v1/"), KeyStore())
    assert (own.api_key, own.preset.name) == ("sk-openai", "OpenAI")
    elsewhere = server_config(config_for("openai", "http://127.0.0.1:9/v1"), KeyStore())
    assert (elsewhere.api_key, elsewhere.needs_key) == ("sk-other", False)


def test_a_typed_key_belongs_to_its_host_and_wins_there(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    account = account_for(preset_named("OpenAI"), "https://api.openai.com/v1")
    assert KeyStore().resolve(account, typed="sk-typed") == ("sk-typed", "typed")
    assert KeyStore().resolve(account) == ("sk-env", "environment")


def test_hosts_compare_without_case_credentials_or_path() -> None:
    assert host_of("https://user:pw@API.OpenAI.com/v1") == "api.openai.com"
    assert host_of("http://localhost:11434/v1") != host_of("http://localhost:1234/v1")


def test_the_cli_names_presets_by_id_or_by_name(
    fake_server: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.set_model("m", ModelScript(replies=["Answer: 1"], cycle=True))
    for preset in ("lmstudio", "LM Studio", "custom"):
        assert (
            main(["run", "--preset", preset, "--base-url", fake_server.base_url, "--model", "m"])
            == 0
        )
    assert main(["run", "--preset", "nope", "--model", "m"]) == 1
    assert "unknown backend 'nope'" in capsys.readouterr().err
