"""The health check of a local server (backends/local_servers/health.py) against real HTTP
emulations of
Ollama, LM Studio, llama.cpp and vLLM (tests/model_server/local.py), and ``react-sandbox
doctor``'s lines and exit codes."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from openai import AsyncOpenAI

from sandbox_app.backends.local_servers.health import Health, check
from sandbox_app.cli.main import main
from sandbox_app.core.running.context_estimate import ContextNeed, context_need
from tests.model_server import ModelServer
from tests.model_server.local import (
    Imitated,
    LocalModel,
    fake_llamacpp,
    fake_lmstudio,
    fake_ollama_health,
    fake_vllm,
    nothing_listening,
)

__all__ = ["fake_llamacpp", "fake_lmstudio", "fake_ollama_health", "fake_vllm"]

NEED = ContextNeed(6412, 5)  # "about 6,500 for 5 steps"
QWEN = LocalModel("qwen3:8b", context=4096, max_context=40960, capabilities=("tools", "thinking"))


def checked(url: str, model: str, need: ContextNeed | None = NEED, **options: bool) -> Health:
    return asyncio.run(check(url, model, need, **options))


@pytest.mark.parametrize(
    ("server_class", "kind", "name", "fix"),
    [
        (
            "ollama",
            "ollama",
            "Ollama",
            "set Context to 8,192 (sent as num_ctx), or start Ollama with "
            "OLLAMA_CONTEXT_LENGTH=8192",
        ),
        (
            "lmstudio",
            "lmstudio",
            "LM Studio",
            "load it with a larger context (lms load qwen3:8b --context-length 8192)",
        ),
        (
            "llamacpp",
            "llamacpp",
            "llama.cpp",
            "restart llama-server with -c 8192 (with --parallel N, N times that)",
        ),
        ("vllm", "vllm", "vLLM", "restart vllm serve with --max-model-len 8192"),
    ],
)
def test_each_server_is_named_with_its_model_context_and_capabilities(
    server_class: Imitated, kind: str, name: str, fix: str
) -> None:
    with ModelServer(server_class) as server:
        server.add(QWEN)
        health = checked(server.base_url, "qwen3:8b")
    assert (health.server, health.state, health.model_state) == (kind, "reachable", "loaded")
    assert health.served_context == 4096  # as served now, not the model's 40,960
    assert health.can_run
    assert health.lines()[0].startswith(f"{name}")
    assert "qwen3:8b loaded, 4,096-token context" in health.lines()[0]
    assert health.lines()[1] == (
        f"⚠ {name} serves qwen3:8b with a 4,096-token context; this scenario needs about "
        f"6,500 for 5 steps: {fix}"
    )


@pytest.mark.parametrize(
    ("server_class", "capabilities"),
    [
        ("ollama", {"completion", "tools", "thinking"}),
        ("lmstudio", {"tools"}),  # LM Studio lists tool use only ("vlm" for vision)
        ("llamacpp", {"tools"}),  # the chat template's, and the vision modality
        ("vllm", None),  # vLLM does not say
    ],
)
def test_capabilities_as_each_server_says_them(
    server_class: Imitated, capabilities: set[str] | None
) -> None:
    with ModelServer(server_class) as server:
        server.add(QWEN)
        health = checked(server.base_url, "qwen3:8b")
    assert health.capabilities == (None if capabilities is None else frozenset(capabilities))


def test_a_context_that_fits_is_said_to_fit(fake_ollama_health: ModelServer) -> None:
    fake_ollama_health.add(LocalModel("qwen3:8b", context=16384))
    health = checked(fake_ollama_health.root, "qwen3:8b")  # the URL without /v1 works too
    assert health.lines()[1:] == [
        "✓ The 16,384-token context fits: this scenario needs about 6,500 for 5 steps"
    ]


def test_a_model_pulled_but_not_loaded(fake_ollama_health: ModelServer) -> None:
    fake_ollama_health.add(LocalModel("qwen3:8b", loaded=False))
    health = checked(fake_ollama_health.base_url, "qwen3:8b")
    assert (health.model_state, health.served_context, health.can_run) == ("present", None, True)
    assert "qwen3:8b not loaded" in health.lines()[0]


def test_lm_studio_lists_a_model_not_loaded(fake_lmstudio: ModelServer) -> None:
    fake_lmstudio.add(LocalModel("qwen3-8b", loaded=False, max_context=32768))
    health = checked(fake_lmstudio.base_url, "qwen3-8b")
    assert (health.model_state, health.max_context, health.can_run) == ("present", 32768, True)


def test_a_down_server_is_one_line_with_its_fix() -> None:
    url = nothing_listening()
    health = checked(url, "qwen3:8b")
    host = url.removeprefix("http://").removesuffix("/v1")
    assert (health.state, health.can_run) == ("down", False)
    assert health.lines() == [f"✗ Nothing answers at {host} — start the server, or check the URL"]


def test_a_loading_server_is_one_line_with_its_fix(fake_llamacpp: ModelServer) -> None:
    fake_llamacpp.add(QWEN)
    fake_llamacpp.loading = True
    health = checked(fake_llamacpp.base_url, "qwen3:8b")
    assert (health.state, health.can_run) == ("loading", False)
    assert health.lines() == ["✗ llama.cpp is still loading the model; try again in a moment"]


@pytest.mark.parametrize(
    ("server_class", "line"),
    [
        ("ollama", "✗ Ollama has no model qwen3:8b: ollama pull qwen3:8b, or Pull in the panel"),
        (
            "lmstudio",
            "✗ LM Studio has no model qwen3:8b: download it in LM Studio (lms get qwen3:8b); "
            "it has gemma3:4b",
        ),
        (
            "vllm",
            "✗ vLLM does not serve qwen3:8b: set Model to gemma3:4b, or start vllm serve qwen3:8b",
        ),
    ],
)
def test_a_missing_model_is_one_line_with_its_fix(server_class: Imitated, line: str) -> None:
    with ModelServer(server_class) as server:
        server.add(LocalModel("gemma3:4b"))
        health = checked(server.base_url, "qwen3:8b")
    assert (health.model_state, health.can_run) == ("missing", False)
    assert health.lines()[1:] == [line]


def test_native_tool_calls_with_a_model_without_tools(fake_ollama_health: ModelServer) -> None:
    fake_ollama_health.add(LocalModel("gemma3:4b", context=32768, capabilities=("vision",)))
    health = checked(fake_ollama_health.base_url, "gemma3:4b", native_tools=True)
    assert health.lines()[-1] == (
        "⚠ Ollama says gemma3:4b cannot call tools: set Tool calls to ReAct text, or choose a "
        "model with tools"
    )
    assert health.can_run  # a warning: the run can start


def test_a_run_starts_against_the_emulated_server(fake_ollama_health: ModelServer) -> None:
    """The emulations answer chats too (tests/model_server/chat.py's handlers), through the SDK."""
    fake_ollama_health.add(QWEN)

    async def ask() -> str:
        client = AsyncOpenAI(base_url=fake_ollama_health.base_url, api_key="x", max_retries=0)
        reply = await client.chat.completions.create(
            model="qwen3:8b", messages=[{"role": "user", "content": "?"}]
        )
        await client.close()
        return reply.choices[0].message.content or ""

    assert asyncio.run(ask()).endswith("Final Answer: 42")


def test_the_need_grows_with_steps_and_max_tokens() -> None:
    one = context_need("You are…" * 100, "What?", 1, 512)
    five = context_need("You are…" * 100, "What?", 5, 512)
    longer = context_need("You are…" * 100, "What?", 5, 2048)
    assert one.tokens < five.tokens < longer.tokens
    assert five.suggested_window >= five.tokens
    assert five.suggested_window & (five.suggested_window - 1) == 0  # a power of two


# ---- react-sandbox doctor --------------------------------------------------------------------


def test_doctor_exits_0_when_the_run_can_start(
    fake_ollama_health: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_ollama_health.add(QWEN)
    code = main(["doctor", "--base-url", fake_ollama_health.base_url, "--model", "qwen3:8b"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out[0].startswith("Ollama 0.12.6 at 127.0.0.1:")
    assert re.fullmatch(
        r"⚠ Ollama serves qwen3:8b with a 4,096-token context; this scenario needs about "
        r"[\d,]+ for 5 steps: set Context to 8,192 \(sent as num_ctx\), or start Ollama with "
        r"OLLAMA_CONTEXT_LENGTH=8192",
        out[1],
    ), out


def test_doctor_exits_1_when_it_cannot(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["doctor", "--base-url", nothing_listening(), "--model", "qwen3:8b"])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert len(out) == 1
    assert out[0].startswith("✗ Nothing answers at 127.0.0.1:")


def test_doctor_refuses_a_backend_that_is_no_server(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--backend", "scripted"]) == 1
    refused = "react-sandbox: doctor checks a server; 'scripted' is not one\n"
    assert capsys.readouterr().err == refused


def test_doctor_is_listed_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "react-sandbox doctor" in " ".join(capsys.readouterr().out.split())


def test_a_context_no_server_serves_is_not_believed(fake_vllm: ModelServer) -> None:
    fake_vllm.add(LocalModel("huge", context=10**30))
    health = checked(fake_vllm.base_url, "huge")
    assert health.served_context is None
    assert not any("000,000,000,000" in line for line in health.lines())


def test_a_million_model_list_is_a_model_list(capsys: pytest.CaptureFixture[str]) -> None:
    server = ModelServer()
    names = [f"m{n:07d}" for n in range(1_000_000)]
    listing = {"object": "list", "data": [{"id": name} for name in names]}  # 16 MB
    server.models_body = json.dumps(listing).encode()
    server.start()
    try:
        code = main(["doctor", "--base-url", server.base_url, "--model", names[-1]])
        out = capsys.readouterr().out
        assert "not an OpenAI-compatible server" not in out
        assert code == 0, out
        # Larger than any answer read (64 MB): still a server, its models unread.
        listing["data"] = [{"id": name, "description": "x" * 60} for name in names]
        server.models_body = json.dumps(listing).encode()
        code = main(["doctor", "--base-url", server.base_url, "--model", names[-1]])
        out = capsys.readouterr().out
        assert "not an OpenAI-compatible server" not in out
        assert code == 0, out
    finally:
        server.stop()


LLAMA_CPP_MODELS = json.loads(
    (Path(__file__).parent.parent / "data" / "llama_cpp_models.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize(
    ("listing", "asked"),
    [
        ("llama-cpp-python, --model_alias smollm2", "smollm2"),
        # No alias: its id is the path it was started with; the file's name is the model.
        ("llama-cpp-python, no alias", "SmolLM2-135M-Instruct-Q8_0"),
        ("llama-cpp-python, no alias", "SmolLM2-135M-Instruct-Q8_0.gguf"),
    ],
)
def test_a_model_llama_cpp_python_lists_is_never_called_not_loaded(
    listing: str, asked: str, capsys: pytest.CaptureFixture[str]
) -> None:
    server = ModelServer()
    server.models_body = json.dumps(LLAMA_CPP_MODELS[listing]).encode()
    server.start()
    host = server.host_port
    try:
        code = main(["doctor", "--base-url", server.base_url, "--model", asked])
    finally:
        server.stop()
    out = capsys.readouterr().out.splitlines()
    assert code == 0, out
    # Its list says the model is there, not whether it is loaded (it loads it at start).
    assert out[0] == f"The server at {host}: {asked} listed", out
    assert not any("not loaded" in line or "has no model" in line for line in out), out
