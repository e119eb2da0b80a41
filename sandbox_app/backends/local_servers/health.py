"""The health check of a local server: is it up, which one is it, does it have the model, and is
the context it serves now big enough for the scenario. Each finding is one line with its fix.

The commonest way a local run fails is invisible: the server's context window is smaller than
the prompt plus the steps so far, and it silently drops the start of the conversation; or the
model is not pulled, the server is still loading, the model has no tool calling. The window
(ui/lane/health_line.py, and its Check button) and ``react-sandbox doctor`` show the same
:meth:`Health.lines`. It never blocks a run: a run can start whatever it says.

Plain HTTP with a small timeout, no key (a local server needs none; the key rule of keys.py
stays the one place keys are sent), each server asked on its own endpoints
(backends/local_servers/server_probes.py). The window awaits :func:`check_in_background`: the
requests run
on the network loop, off the GUI thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from sandbox_app.backends.catalogue.kinds import BackendConfig
from sandbox_app.backends.local_servers.server_probes import (
    MAX_ANSWER,
    SERVER_NAMES,
    Answer,
    Http,
    ModelState,
    ServerFacts,
    ServerKind,
    identify,
)
from sandbox_app.backends.transport import network_loop
from sandbox_app.backends.transport.http_library import http_library, tls_context
from sandbox_app.core.running.context_estimate import ContextNeed, scenario_context_need
from sandbox_app.core.scenarios.run_input import RunInput
from sandbox_app.core.tools import Tool

PROBE_TIMEOUT_S = 3.0  # a local server answers these in milliseconds; a stuck one is news
# Bytes read of one answer: a model list with templates is ~100 kB, but a router's list of a
# million models is ~60 MB and is still a model list (server_probes.MAX_ANSWER reads as much).
MAX_BODY = MAX_ANSWER
# "stop": the run cannot work as chosen; "warn": it can start, and will likely go wrong.
Level = Literal["ok", "info", "warn", "stop"]
MARKS: dict[Level, str] = {"ok": "✓ ", "info": "• ", "warn": "⚠ ", "stop": "✗ "}
# How to start the server a default port belongs to, for "nothing answers".
START_BY_PORT = {
    11434: "ollama serve",
    1234: "lms server start",
    8080: "llama-server -m MODEL.gguf",
    8000: "vllm serve MODEL",
}


@dataclass(frozen=True)
class Finding:
    level: Level
    text: str

    @property
    def line(self) -> str:
        return MARKS[self.level] + self.text


@dataclass(frozen=True)
class Health:
    """What the check found at ``base_url`` about ``model``."""

    base_url: str
    host: str
    state: Literal["reachable", "loading", "down"]
    model: str
    server: ServerKind | None = None  # None: nothing answered, or not a server we know
    version: str = ""
    model_state: ModelState = "unknown"
    served_model: str = ""
    served_context: int | None = None  # the context a request gets now
    max_context: int | None = None
    capabilities: frozenset[str] | None = None  # "tools", "thinking", "vision"…; None: unsaid
    findings: tuple[Finding, ...] = ()

    @property
    def can_run(self) -> bool:
        """False when a run cannot work as chosen (down, loading, no such model)."""
        return not any(f.level == "stop" for f in self.findings)

    @property
    def server_name(self) -> str:
        return SERVER_NAMES[self.server] if self.server else "The server"

    def summary(self) -> str:
        """One line: the server, the model's state, its context and capabilities."""
        if self.state != "reachable" or self.server is None:
            return ""
        name = f"{self.server_name} {self.version}".strip()
        where = f"{name} at {self.host}"
        model = self.served_model or self.model
        if not model or self.model_state == "missing":
            return where
        state = {"loaded": "loaded", "present": "not loaded", "unknown": "listed"}.get(
            self.model_state, ""
        )
        parts = [f"{model} {state}".strip()]
        if self.served_context:
            parts.append(f"{self.served_context:,}-token context")
        if self.max_context and self.max_context != self.served_context:
            parts.append(f"its maximum {self.max_context:,}")
        line = f"{where}: {', '.join(parts)}"
        if self.capabilities is not None:
            shown = [c for c in ("tools", "thinking", "vision") if c in self.capabilities]
            line += f"; can use: {', '.join(shown)}" if shown else "; no tools, thinking or vision"
        return line

    def lines(self) -> list[str]:
        """What the window and ``doctor`` show: the summary, then each finding."""
        summary = self.summary()
        return [*([summary] if summary else []), *(f.line for f in self.findings)]


def server_root(base_url: str) -> str:
    """The server's own root: the URL without a trailing /v1 (native endpoints live there)."""
    root = base_url.strip().rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def host_port(base_url: str) -> tuple[str, int | None]:
    parts = urlsplit(base_url.strip())
    try:
        port = parts.port
    except ValueError:
        port = None
    return parts.netloc or base_url.strip(), port


async def check_in_background(
    config: BackendConfig, scenario: RunInput | None, tools: Sequence[Tool] = ()
) -> Health:
    """:func:`check_run` on the network loop, awaited from any other (the window's)."""
    return await network_loop.call(check_run(config, scenario, tools))


async def check(
    base_url: str,
    model: str,
    needed_context: ContextNeed | None = None,
    *,
    native_tools: bool = False,
    sent_context: int | None = None,
    timeout_s: float = PROBE_TIMEOUT_S,
) -> Health:
    """Ask the server at ``base_url`` (with or without /v1) about ``model``.

    ``needed_context``: what the scenario needs (core/running/context_estimate.py);
    ``native_tools``: the run calls tools natively (a model without tools is named);
    ``sent_context``: the Context the run sends (Ollama's num_ctx), which replaces the served
    one. Never raises for anything the server does: that is a finding.
    """
    host, port = host_port(base_url)
    model = model.strip()
    parts = urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        shown = base_url.strip() or "(empty)"
        line = f"The Base URL {shown!r} is not an http:// address: e.g. http://localhost:11434/v1"
        return Health(base_url, host, "down", model, findings=(Finding("stop", line),))
    lib = http_library()
    root = server_root(base_url)
    verify: Any = tls_context() if root.startswith("https") else False
    try:
        async with lib.AsyncClient(timeout=timeout_s, verify=verify) as client:

            async def fetch(method: str, path: str, body: dict[str, Any] | None) -> Answer:
                async with client.stream(method, root + path, json=body) as response:
                    data = bytearray()
                    async for chunk in response.aiter_bytes():
                        data += chunk
                        if len(data) > MAX_BODY:
                            break
                    cut = len(data) > MAX_BODY
                    return Answer(response.status_code, b"" if cut else bytes(data), cut)

            facts = await identify(
                Http(lambda p: fetch("GET", p, None), lambda p, b: fetch("POST", p, b), model)
            )
    except lib.ConnectError:
        start = START_BY_PORT.get(port or 0)
        fix = f"start the server ({start})" if start else "start the server, or check the URL"
        return _down(base_url, host, model, f"Nothing answers at {host} — {fix}")
    except lib.TimeoutException:
        line = (
            f"{host} accepted the connection but did not answer within {timeout_s:g} s: "
            "is the server busy or stuck? Restart it"
        )
        return _down(base_url, host, model, line)
    except (lib.HTTPError, OSError) as err:
        line = f"{host} could not be asked: {err or type(err).__name__}"
        return _down(base_url, host, model, line)
    if facts is None:
        line = (
            f"Something answers at {host}, but not an OpenAI-compatible server (no /v1/models):"
            " check the Base URL"
        )
        return Health(base_url, host, "reachable", model, findings=(Finding("stop", line),))
    found = _findings(facts, host, model, needed_context, native_tools, sent_context)
    return Health(
        base_url,
        host,
        "loading" if facts.loading else "reachable",
        model,
        facts.kind,
        facts.version,
        facts.model_state,
        facts.served_model,
        facts.served_context,
        facts.max_context,
        facts.capabilities,
        tuple(found),
    )


def _down(base_url: str, host: str, model: str, line: str) -> Health:
    return Health(base_url, host, "down", model, findings=(Finding("stop", line),))


def _listing(models: tuple[str, ...]) -> str:
    shown = ", ".join(models[:5])
    return shown + (f" and {len(models) - 5} more" if len(models) > 5 else "")


def _missing(facts: ServerFacts, host: str, model: str) -> str:
    has = f"; it has {_listing(facts.models)}" if facts.models else ""
    if facts.kind == "ollama":
        return f"Ollama has no model {model}: ollama pull {model}, or Pull in the panel"
    if facts.kind == "lmstudio":
        return f"LM Studio has no model {model}: download it in LM Studio (lms get {model}){has}"
    if facts.kind == "vllm":
        listing = _listing(facts.models)
        return f"vLLM does not serve {model}: set Model to {listing}, or start vllm serve {model}"
    return f"The server at {host} has no model {model}{has}"


def _context_fix(facts: ServerFacts, model: str, window: int) -> str:
    if facts.kind == "ollama":
        return (
            f"set Context to {window:,} (sent as num_ctx), or start Ollama with "
            f"OLLAMA_CONTEXT_LENGTH={window}"
        )
    if facts.kind == "lmstudio":
        return f"load it with a larger context (lms load {model} --context-length {window})"
    if facts.kind == "llamacpp":
        return f"restart llama-server with -c {window} (with --parallel N, N times that)"
    if facts.kind == "vllm":
        return f"restart vllm serve with --max-model-len {window}"
    return f"give the server a context of {window:,} or more"


def _findings(
    facts: ServerFacts,
    host: str,
    model: str,
    need: ContextNeed | None,
    native_tools: bool,
    sent_context: int | None,
) -> list[Finding]:
    name = SERVER_NAMES[facts.kind]
    if facts.loading:
        return [Finding("stop", f"{name} is still loading the model; try again in a moment")]
    if facts.wants_key:
        line = (
            f"{host} wants an API key: the health check asks local servers only, without one; "
            "Refresh lists its models with your key"
        )
        return [Finding("warn", line)]
    if not model and not facts.served_model:
        if facts.models:
            line = f"No model chosen: set Model to one of {name}'s: {_listing(facts.models)}"
        else:
            line = f"No model chosen, and {name} at {host} lists none"
        return [Finding("stop", line)]
    if facts.model_state == "missing":
        return [Finding("stop", _missing(facts, host, model))]
    if facts.model_type == "embeddings":
        line = f"{model} is an embedding model: it cannot chat; choose a language model"
        return [Finding("stop", line)]
    found: list[Finding] = []
    shown = facts.served_model or model
    if facts.model_state == "present" and facts.kind == "ollama":
        line = (
            f"Ollama has {model} but has not loaded it: the first step waits while it loads "
            "(with the context Context or OLLAMA_CONTEXT_LENGTH sets)"
        )
        found.append(Finding("info", line))
    elif facts.model_state == "present" and facts.kind == "lmstudio":
        line = (
            f"LM Studio has {model} but has not loaded it: the first request loads it, or "
            f"lms load {model}"
        )
        found.append(Finding("info", line))
    found.extend(_context_findings(facts, shown, need, sent_context))
    if native_tools and facts.capabilities is not None and "tools" not in facts.capabilities:
        line = (
            f"{name} says {shown} cannot call tools: set Tool calls to ReAct text, or choose a "
            "model with tools"
        )
        found.append(Finding("warn", line))
    return found


def _context_findings(
    facts: ServerFacts, model: str, need: ContextNeed | None, sent_context: int | None
) -> list[Finding]:
    if need is None:
        return []
    name = SERVER_NAMES[facts.kind]
    needs = f"this scenario needs about {need.rounded:,} for {need.steps} steps"
    window = need.suggested_window
    if facts.max_context is not None and facts.max_context < need.tokens:
        line = (
            f"{model} takes at most {facts.max_context:,} tokens of context; {needs}: lower "
            "Max steps or Max tokens, or choose a model with a longer context"
        )
        return [Finding("warn", line)]
    if sent_context is not None:  # the run sends its own Context (num_ctx): that is served
        if sent_context < need.tokens:
            line = f"Context is {sent_context:,} (sent as num_ctx); {needs}: set it to {window:,}"
            return [Finding("warn", line)]
        return [Finding("ok", f"Context {sent_context:,} fits: {needs}")]
    served = facts.served_context
    if served is None:
        return []
    if served < need.tokens:
        line = f"{name} serves {model} with a {served:,}-token context; {needs}: " + _context_fix(
            facts, model, window
        )
        return [Finding("warn", line)]
    return [Finding("ok", f"The {served:,}-token context fits: {needs}")]


async def check_run(
    config: BackendConfig, scenario: RunInput | None, tools: Sequence[Tool] = ()
) -> Health:
    """The check for a run of ``scenario`` (its lane settings applied) with ``tools`` against
    ``config``'s server: what the window's Check and ``doctor`` both ask, so they say the
    same lines. No scenario: the server and model only, no context need."""
    if scenario is None:
        return await check(config.url, config.model)
    settings = scenario.model
    sends_context = "context_window" in config.kind.settings  # the kind sends it (num_ctx)
    return await check(
        config.url,
        config.model,
        scenario_context_need(scenario, tools),
        native_tools=settings.tool_calling == "native",
        sent_context=settings.context_window if sends_context else None,
    )
