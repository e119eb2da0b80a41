"""The key rule's scheme and source: a preset's key never crosses the network in clear, and a
URL a file named gets no key until the user confirms its host. Each path (CLI ``run``,
``eval`` with the file's lanes, Copy as curl) is checked by the Authorization header the test
server really received.

The plain-HTTP cases reach the test server as an HTTP proxy (``HTTP_PROXY``), the way a
loopback proxy saw ``Bearer sk-…`` for ``--base-url http://api.openai.com/v1`` in the hostile
test: the request names the real host, the proxy reads every header.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from sandbox_app.backends.catalogue.keys import (
    CUSTOM_KEY_ENV,
    KeyStore,
    host_of,
    in_clear,
    origin_of,
)
from sandbox_app.backends.catalogue.presets import PRESETS
from sandbox_app.backends.registry import (
    config_for,
    curl_request,
    key_notice,
    server_config,
)
from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.cli.main import main
from sandbox_app.core.running.events import Exchange
from sandbox_app.core.running.fork import as_curl
from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir
from tests.model_server import ModelScript, ModelServer
from tests.model_server.anthropic import fake_anthropic
from tests.model_server.gemini import gemini_server
from tests.model_server.responses import responses_server

__all__ = ["fake_anthropic", "gemini_server", "responses_server"]  # fixtures, for pytest

KEY_PRESETS = [preset for preset in PRESETS if preset.key_env]


@pytest.fixture
def proxy(fake_server: ModelServer, monkeypatch: pytest.MonkeyPatch) -> ModelServer:
    """The test server as every client's HTTP proxy: it sees what goes out in clear."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", fake_server.base_url.removesuffix("/v1"))
    fake_server.set_model("m", ModelScript(replies=["Answer: 1"], cycle=True))
    return fake_server


@pytest.mark.parametrize("preset", KEY_PRESETS, ids=lambda p: p.id)
def test_a_presets_key_never_goes_over_plain_http_to_its_own_host(
    proxy: ModelServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    preset: object,
) -> None:
    from sandbox_app.backends.catalogue.presets import Preset

    assert isinstance(preset, Preset)
    assert preset.key_env
    monkeypatch.setenv(preset.key_env, "sk-preset-secret")
    monkeypatch.setenv(CUSTOM_KEY_ENV, "sk-catch-all-secret")
    # Its own host over http (the path is the test server's: only scheme and host matter).
    in_clear_url = f"http://{host_of(preset.base_url)}/v1"
    args = ["run", "--preset", preset.name, "--base-url", in_clear_url, "--model", "m"]
    assert main(args) == 0
    assert proxy.authorizations, "the request never reached the proxy"
    assert all("secret" not in header for header in proxy.authorizations)
    err = capsys.readouterr().err  # one line says why no key went
    assert err.count("\n") == 1
    assert "not sent in clear" in err
    monkeypatch.delenv(CUSTOM_KEY_ENV)
    assert main(args) == 0
    assert f"{preset.key_env} goes only to {preset.base_url}" in capsys.readouterr().err


def test_origins_count_the_scheme_and_the_default_port() -> None:
    assert origin_of("HTTPS://API.openai.com/v1") == origin_of("https://api.openai.com:443/x")
    assert origin_of("http://api.openai.com/v1") != origin_of("https://api.openai.com/v1")
    assert origin_of("https://api.openai.com:8443/v1") != origin_of("https://api.openai.com/v1")
    assert not in_clear("http://127.0.0.1:8080/v1")
    assert not in_clear("http://localhost:11434/v1")
    assert not in_clear("http://[::1]:8000/v1")
    assert in_clear("http://192.168.1.5:8000/v1")
    assert in_clear("http://api.openai.com/v1")
    assert not in_clear("https://example.com/v1")


def test_the_catch_all_key_is_not_sent_in_clear_but_a_key_typed_for_that_host_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(CUSTOM_KEY_ENV, "sk-catch-all")
    lan = config_for("custom", "http://192.168.1.5:8000/v1", "m")
    assert server_config(lan, KeyStore()).api_key == ""
    assert "not sent in clear" in key_notice(lan, KeyStore())
    typed = config_for("custom", "http://192.168.1.5:8000/v1", "m", typed_key="sk-typed")
    assert server_config(typed, KeyStore()).api_key == "sk-typed"
    local = config_for("custom", "http://127.0.0.1:8000/v1", "m")
    assert server_config(local, KeyStore()).api_key == "sk-catch-all"


def _scenario_with_file_lanes(tmp_path: Path, url: str) -> Path:
    scenario = load_scenario(scenarios_dir() / "test_set.json")
    lanes = (LaneConfig("custom", url, "good"),)
    path = tmp_path / "shared.json"
    save_scenario(scenario.with_changes(lanes=lanes), path)
    return path


def _evaluate(path: Path, tmp_path: Path, *args: str) -> int:
    out = tmp_path / f"results{len(list(tmp_path.glob('results*')))}.jsonl"
    return eval_command([str(path), "--out", str(out), *args], io.StringIO())


def test_eval_sends_no_key_to_a_url_the_scenario_file_named(
    fake_server: ModelServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.setenv(CUSTOM_KEY_ENV, "sk-custom-secret")
    fake_server.set_model("good", ModelScript(replies=["Answer: 1"], cycle=True))
    path = _scenario_with_file_lanes(tmp_path, fake_server.base_url)
    assert _evaluate(path, tmp_path) == 0
    assert fake_server.authorizations
    assert all("secret" not in header for header in fake_server.authorizations)
    err = capsys.readouterr().err
    assert err.count("was named by a file: no key sent until you confirm that host") == 1


def test_eval_sends_the_key_once_the_user_says_so(
    fake_server: ModelServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(CUSTOM_KEY_ENV, "sk-custom-secret")
    fake_server.set_model("good", ModelScript(replies=["Answer: 1"], cycle=True))
    path = _scenario_with_file_lanes(tmp_path, fake_server.base_url)
    assert _evaluate(path, tmp_path, "--trust-file-lanes") == 0
    assert set(fake_server.authorizations) == {"Bearer sk-custom-secret"}
    sent = len(fake_server.authorizations)
    assert _evaluate(path, tmp_path, "--lane", f"{fake_server.base_url}:good") == 0
    assert set(fake_server.authorizations[sent:]) == {"Bearer sk-custom-secret"}


def test_a_file_lane_on_openais_own_https_origin_needs_no_confirmation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    own = config_for("openai", "https://api.openai.com/v1", "m", url_source="file")
    assert server_config(own, KeyStore()).api_key == "sk-openai"
    in_clear_lane = config_for("openai", "http://api.openai.com/v1", "m", url_source="file")
    assert server_config(in_clear_lane, KeyStore()).api_key == ""
    keys = KeyStore()
    other = config_for("custom", "https://collector.example/v1", "m", url_source="file")
    monkeypatch.setenv(CUSTOM_KEY_ENV, "sk-custom")
    assert server_config(other, keys).api_key == ""
    keys.trust_host("https://collector.example/v1")
    assert server_config(other, keys).api_key == "sk-custom"


@pytest.mark.parametrize(
    ("backend", "url", "variable"),
    [
        ("custom", "http://127.0.0.1:8080/v1", CUSTOM_KEY_ENV),
        ("groq", "", "GROQ_API_KEY"),
        ("groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
        ("openai", "http://127.0.0.1:9/v1", CUSTOM_KEY_ENV),
        ("openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
        ("ollama", "", CUSTOM_KEY_ENV),
    ],
)
def test_copy_as_curl_names_the_variable_the_key_rule_reads(
    backend: str, url: str, variable: str
) -> None:
    request = curl_request(backend, url, "m")
    exchange = Exchange(1, {"model": "m", "messages": []}, "", "", None, None, None, None)
    curl = as_curl(exchange, request.url, request.headers)
    assert f'"Authorization: Bearer ${variable}"' in curl
    assert request.url.endswith("/chat/completions")
    assert curl.startswith(f"curl {request.url}")


@pytest.mark.parametrize("backend", ["custom", "anthropic", "responses", "gemini"])
def test_copy_as_curl_writes_no_key_for_plain_http_to_another_machine(backend: str) -> None:
    """N15: the app never sends REACT_SANDBOX_API_KEY there; a pasted command must not."""
    request = curl_request(backend, "http://192.0.2.7:8080/v1", "m")
    exchange = Exchange(1, {"model": "m"}, "", "", None, None, None, None)
    curl = as_curl(exchange, request.url, request.headers)
    assert CUSTOM_KEY_ENV not in curl
    assert "$" not in curl
    assert request.key_variable == ""
    assert "plain HTTP" in request.withheld


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_copied_curl_command_sends_the_key_the_rule_names(
    fake_server: ModelServer, tmp_path: Path
) -> None:
    """Pasted into a shell with the variable set, the command reaches the server with it."""
    fake_server.set_model("m", ModelScript(replies=["Answer: 1"], cycle=True))
    request = {"model": "m", "messages": [{"role": "user", "content": "Hi"}], "stream": False}
    assert shell_curl(request, "custom", fake_server.base_url, tmp_path).returncode == 0
    assert fake_server.authorizations == ["Bearer sk-from-the-shell"]


def shell_curl(
    request: dict[str, object], backend: str, base_url: str, tmp_path: Path, model: str = "m"
) -> subprocess.CompletedProcess[str]:
    """Copy as curl's command for ``request``, run by bash with the key's variable set."""
    copied = curl_request(backend, base_url, model)
    command = as_curl(
        Exchange(1, request, "", "", None, None, None, None), copied.url, copied.headers
    )
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    env[copied.key_variable] = "sk-from-the-shell"
    return subprocess.run(
        ["bash", "-c", command + " --fail --silent --show-error"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
@pytest.mark.parametrize("kind", ["anthropic", "responses", "gemini"])
def test_copy_as_curl_of_a_run_reaches_its_kinds_own_endpoint_with_its_key_header(
    kind: str,
    request: pytest.FixtureRequest,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """N15: a run's first request, copied as curl and pasted into a shell, is answered by
    that kind's test server, which got the key in the kind's own header."""
    from tests.core.test_anthropic_kind import text_turns
    from tests.core.test_gemini import text_replies
    from tests.core.test_responses_kind import TEXT_REPLIES

    monkeypatch.setenv(CUSTOM_KEY_ENV, "sk-of-the-run")
    server = request.getfixturevalue(
        {"anthropic": "fake_anthropic", "responses": "responses_server"}.get(kind, "gemini_server")
    )
    if kind == "anthropic":
        server.set_model("m", ModelScript(replies=text_turns()))
    elif kind == "responses":
        server.set_model("m", TEXT_REPLIES)
    else:
        server.set_model("m", text_replies())
    argv = ["run", "--backend", kind, "--base-url", server.base_url, "--model", "m", "--json"]
    assert main(argv) == 0
    events = json.loads(capsys.readouterr().out)["events"]
    first = next(e["request"] for e in events if e["type"] == "Exchange")
    done = shell_curl(first, kind, server.base_url, tmp_path)
    assert done.returncode == 0, done.stderr
    keys = server.authorizations if kind == "responses" else server.keys
    assert keys[-1] in ("sk-from-the-shell", "Bearer sk-from-the-shell")
