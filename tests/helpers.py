"""Helpers for tests that run the engine without a window."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import TypeVar

from sandbox_app.backends.catalogue.presets import ServerConfig
from sandbox_app.backends.chat_completions.openai_compat import OpenAICompatBackend
from sandbox_app.core.running.backend import Backend
from sandbox_app.core.running.engine import ReactEngine, drive
from sandbox_app.core.running.events import Event, RunFinished
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.scenarios.scenario_file import load_scenario, scenarios_dir

T = TypeVar("T")


def builtin(name: str, *, instant: bool = True) -> Scenario:
    scenario = load_scenario(scenarios_dir() / f"{name}.json")
    if instant:
        scenario = scenario.with_changes(script=replace(scenario.script, tokens_per_second=0))
    return scenario


def server_backend(base_url: str, *, timeout_s: float = 10.0) -> OpenAICompatBackend:
    return OpenAICompatBackend(ServerConfig(base_url, api_key="test-key", timeout_s=timeout_s))


async def collect(engine: ReactEngine, backend: Backend | None = None) -> list[Event]:
    events: list[Event] = []
    try:
        await drive(engine, events.append)
    finally:
        if backend is not None:
            await backend.aclose()
    return events


def run_events(scenario: Scenario, backend: Backend, **engine_options: object) -> list[Event]:
    engine = ReactEngine(scenario, backend, **engine_options)  # type: ignore[arg-type]
    return asyncio.run(collect(engine, backend))


def finished(events: list[Event]) -> RunFinished:
    last = events[-1]
    assert isinstance(last, RunFinished), last
    return last


def of_type(events: list[Event], kind: type[T]) -> list[T]:
    return [e for e in events if isinstance(e, kind)]


def replies_of(name: str) -> list[str]:
    data = json.loads((scenarios_dir() / f"{name}.json").read_text(encoding="utf-8"))
    return list(data["script"]["replies"])


def model_text(events: list[Event]) -> str:
    from sandbox_app.core.running.events import TokenDelta

    return "".join(e.text for e in events if isinstance(e, TokenDelta))


class SendEmail:
    """A tool with side effects (not read-only), to exercise the approval gate."""

    name = "send_email"
    description = "Sends an email."
    input_hint = "address"
    read_only = False
    max_input = 200

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def run(self, input: str) -> str:
        self.sent.append(input)
        return f"sent to {input}"


def scripted(scenario: Scenario) -> Backend:
    """The offline model for ``scenario`` (its own question and replies)."""
    from sandbox_app.backends.offline.scripted import ScriptedBackend

    return ScriptedBackend(scenario.script, scenario.question)
