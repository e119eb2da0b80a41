"""Command line: ``react-sandbox`` opens the window; ``react-sandbox run`` prints a trace.

The CLI and the window are two front ends on one engine: ``run`` prints the same events the
window draws. Exit codes: 0 answered, 2 max steps, 3 stopped, 1 error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
import time
from collections.abc import Callable
from contextlib import suppress
from typing import TextIO

from sandbox_app.backends.keys import CUSTOM_KEY_ENV
from sandbox_app.core.backend import Backend
from sandbox_app.core.engine import ReactEngine, drive
from sandbox_app.core.events import (
    Event,
    FabricationCut,
    FinalAnswer,
    FormatError,
    Notice,
    Observation,
    RunFinished,
    StepStarted,
    TokenDelta,
    event_to_dict,
    metrics_to_dict,
)
from sandbox_app.core.parser import DIALECTS
from sandbox_app.core.scenario import Scenario
from sandbox_app.core.scenario_file import ScenarioError, default_scenario, load_scenario
from sandbox_app.core.tools import TOOL_NAMES

EXIT_CODES = {"answered": 0, "failed": 1, "max_steps": 2, "stopped": 3}
_COLOURS = {
    "thought": "\033[36m",
    "action": "\033[33m",
    "observation": "\033[35m",
    "answer": "\033[1;32m",
    "error": "\033[31m",
    "dim": "\033[2;9m",
    "step": "\033[1m",
    "waiting": "\033[2m",
}
_RESET = "\033[0m"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["run"]:
        return run_command(args[1:])
    options = _window_parser().parse_args(args)
    from sandbox_app.ui.app import run_app  # Qt is only imported for the window

    return run_app(options.scenario)


def _window_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="react-sandbox",
        description="ReAct Sandbox: edit a ReAct prompt, run it against a model, watch the trace.",
        epilog="Headless: react-sandbox run [SCENARIO] … (see react-sandbox run --help).",
    )
    parser.add_argument("scenario", nargs="?", help="scenario file to open in the window")
    return parser


def _run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="react-sandbox run",
        description="Run a scenario headless and print its trace. The API key comes from the "
        "preset's variable (OPENAI_API_KEY, OPENROUTER_API_KEY, GROQ_API_KEY) or, for any "
        f"other server, {CUSTOM_KEY_ENV}; never from the command line.",
    )
    p.add_argument("scenario", nargs="?", help="scenario file (default: the Brightgrid example)")
    p.add_argument("--question", help="ask this instead of the scenario's question")
    p.add_argument("--backend", choices=["scripted", "openai"], help="default: scripted")
    p.add_argument(
        "--preset", help="OpenAI, Ollama, 'LM Studio', llama.cpp, vLLM, OpenRouter, Groq"
    )
    p.add_argument(
        "--base-url", help="any OpenAI-compatible server, e.g. http://localhost:11434/v1"
    )
    p.add_argument("--model", default="", help="model name on the server")
    p.add_argument("--max-steps", type=int, help="1-50")
    p.add_argument("--tools", help=f"comma-separated, from: {', '.join(TOOL_NAMES)}")
    p.add_argument("--dialect", choices=["auto", *DIALECTS])
    p.add_argument(
        "--token-budget", type=int, help="stop when the run has used this many tokens (≥ 1)"
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="seconds to wait for the server before giving up (default 60)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON document instead")
    return p


def run_command(argv: list[str]) -> int:
    parser = _run_parser()
    args = parser.parse_args(argv)
    try:
        scenario = _scenario(args)
        backend = _backend(args, scenario)
    except (ScenarioError, ValueError, KeyError) as err:
        print(f"react-sandbox: {err}", file=sys.stderr)
        return 1
    printer = None if args.json else TracePrinter(sys.stdout)
    # With --json stdout holds only the document: the wait shows on stderr, and only if that
    # is a terminal (a status line that leaves nothing behind), never in a log.
    out = sys.stderr if args.json else sys.stdout
    waiting = WaitingNotice(out, backend.label) if out is sys.stdout or out.isatty() else None
    events: list[Event] = []

    def emit(event: Event) -> None:
        events.append(event)
        if waiting is not None:
            waiting.saw(event)  # first: its status line is erased before the event shows
        if printer is not None:
            printer.show(event)

    engine = ReactEngine(scenario, backend, model=args.model, token_budget=args.token_budget)
    try:
        finished = asyncio.run(_run(engine, backend, emit, waiting))
    except KeyboardInterrupt:  # Ctrl+C: asyncio.run cancelled the run, then re-raised this
        finished = engine.stopped()
    if args.json:
        document = {
            "status": finished.status,
            "answer": finished.answer,
            "reason": finished.reason,
            "metrics": metrics_to_dict(finished.metrics),
            "events": [event_to_dict(e) for e in events],
        }
        json.dump(document, sys.stdout, ensure_ascii=False, indent=1)
        print()
    return EXIT_CODES[finished.status]


async def _run(
    engine: ReactEngine,
    backend: Backend,
    emit: Callable[[Event], None],
    waiting: WaitingNotice | None = None,
) -> RunFinished:
    """Drive the run; meanwhile ``waiting`` (fed the events by ``emit``) watches the clock."""
    watcher = asyncio.create_task(waiting.watch()) if waiting is not None else None
    try:
        return await drive(engine, emit)
    finally:
        if watcher is not None:
            watcher.cancel()  # which erases its status line, if any
            with suppress(asyncio.CancelledError):
                await watcher
        await backend.aclose()


def _scenario(args: argparse.Namespace) -> Scenario:
    scenario = load_scenario(args.scenario) if args.scenario else default_scenario()
    if args.question:
        scenario = scenario.with_changes(question=args.question)
    if args.token_budget is not None and args.token_budget < 1:
        raise ValueError(f"--token-budget must be at least 1 (got {args.token_budget})")
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        raise ValueError(f"--timeout must be a number of seconds above 0 (got {args.timeout})")
    if args.max_steps is not None:
        if not 1 <= args.max_steps <= 50:
            raise ValueError("--max-steps must be from 1 to 50")
        scenario = scenario.with_changes(max_steps=args.max_steps)
    if args.tools is not None:
        tools = tuple(t.strip() for t in args.tools.split(",") if t.strip())
        unknown = [t for t in tools if t not in TOOL_NAMES]
        if unknown:
            raise ValueError(f"unknown tool {unknown[0]!r}; known: {', '.join(TOOL_NAMES)}")
        scenario = scenario.with_changes(enabled_tools=tools)
    if args.dialect:
        scenario = scenario.with_changes(dialect=args.dialect)
    return scenario


def _backend(args: argparse.Namespace, scenario: Scenario) -> Backend:
    from sandbox_app.backends.keys import KeyStore
    from sandbox_app.backends.openai_compat import preset_for_url, preset_named
    from sandbox_app.backends.registry import BackendConfig, make_backend

    wants_server = args.backend == "openai" or args.base_url or args.preset
    if not wants_server:
        return make_backend(BackendConfig(None), scenario, KeyStore())
    if args.preset:
        try:
            preset = preset_named(args.preset)
        except KeyError:
            raise ValueError(f"unknown preset {args.preset!r}") from None
    else:
        preset = preset_for_url(args.base_url) if args.base_url else preset_named("OpenAI")
    if not args.model:
        raise ValueError("--model is required for an OpenAI-compatible backend")
    # The registry's key rule: a preset's key only ever goes to that preset's own host.
    config = BackendConfig(preset, args.base_url or preset.base_url, args.model, args.timeout)
    return make_backend(config, scenario, KeyStore())


class WaitingNotice:
    """Shows that a request is waiting: from a step's start until its first text or event.

    A server that accepts the connection and never answers would otherwise leave only the
    step's header on screen until the timeout. On a terminal one status line, rewritten in
    place every second, says so and is erased when the wait ends; in a pipe or a log a plain
    line appears at 1, 2, 4, 8… s, so a minute's wait is six lines, not sixty.
    """

    def __init__(self, out: TextIO, host: str) -> None:
        self.out = out
        self.host = host
        self.live = out.isatty()  # a status line rewritten in place
        self.colour = self.live and "NO_COLOR" not in os.environ
        self._since: float | None = None  # when the current wait began
        self._next_s = 1  # the wait's next notice is due at this many seconds
        self._status_shown = False
        self._wait_began = asyncio.Event()  # wakes watch() when a new wait begins

    def saw(self, event: Event) -> None:
        """Note an event before it is shown: a step's start begins a wait, the rest end it."""
        self._erase()
        restart = isinstance(event, Notice) and self._since is not None  # a 429: still no text
        if isinstance(event, StepStarted) or restart:
            self._since = time.monotonic()
            self._next_s = 1
            self._wait_began.set()
        else:
            self._since = None

    async def watch(self) -> None:
        """Run for the whole run (cancelled at its end), showing each wait as it goes."""
        try:
            while True:
                since = self._since
                due = None if since is None else since + self._next_s - time.monotonic()
                if due is not None and due <= 0:
                    waited = int(self._next_s - due)
                    self._show(waited)
                    # Every second on a terminal; 1, 2, 4, 8… s elsewhere.
                    self._next_s = waited + 1 if self.live else 1 << waited.bit_length()
                    continue
                self._wait_began.clear()  # sleep until the notice is due or a new wait begins
                with suppress(TimeoutError):
                    async with asyncio.timeout(due):
                        await self._wait_began.wait()
        finally:
            self._erase()

    def _show(self, waited: int) -> None:
        text = f"waiting for {self.host}… {waited} s"
        if not self.live:
            self.out.write(f"[{text}]\n")
        elif self.colour:
            self.out.write(f"\r{_COLOURS['waiting']}{text}{_RESET}\033[K")
        else:
            self.out.write(f"\r{text}\033[K")
        self._status_shown = self.live
        self.out.flush()

    def _erase(self) -> None:
        if self._status_shown:
            self.out.write("\r\033[K")
            self.out.flush()
            self._status_shown = False


class TracePrinter:
    """Writes events as a terminal trace; on a terminal, lines are coloured by who wrote them."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.colour = out.isatty() and "NO_COLOR" not in os.environ
        self._line = ""  # model text of the current line, held to colour it by its label
        self._mid_line = False  # the last thing written did not end a line

    def show(self, event: Event) -> None:
        if isinstance(event, TokenDelta):
            self._model_text(event.text)
            return
        self._flush_line()
        if isinstance(event, StepStarted):
            self._write(f"── Step {event.step} ──\n", "step")
        elif isinstance(event, FabricationCut):
            self._write(f"[cut, never used: {event.text.strip()}]\n", "dim")
        elif isinstance(event, Observation):
            self._write(event.message + "\n", "error" if event.error else "observation")
        elif isinstance(event, FormatError):
            self._write(event.message + "\n", "error")
        elif isinstance(event, Notice):
            self._write(f"[{event.text}]\n", "dim")
        elif isinstance(event, FinalAnswer):
            pass  # already on screen as the model's own Answer line
        elif isinstance(event, RunFinished):
            self._finish(event)

    def _finish(self, event: RunFinished) -> None:
        if event.answer is not None:
            self._write(f"\nFinal answer: {event.answer}\n", "answer")
        if event.status != "answered":
            self._write(f"\n{event.status}: {event.reason}\n", "error")
        self._write(event.metrics.summary() + "\n", None)

    def _model_text(self, text: str) -> None:
        if not self.colour:
            self._write(text, None)
            return
        self._line += text
        while "\n" in self._line:
            line, self._line = self._line.split("\n", 1)
            self._write(line + "\n", _label_role(line))

    def _flush_line(self) -> None:
        if self._line:
            self._write(self._line, _label_role(self._line))
            self._line = ""
        if self._mid_line:
            self._write("\n", None)

    def _write(self, text: str, role: str | None) -> None:
        if not text:
            return
        self._mid_line = not text.endswith("\n")
        if self.colour and role:
            body = text.rstrip("\n")
            text = f"{_COLOURS[role]}{body}{_RESET}" + text[len(body) :]
        self.out.write(text)
        self.out.flush()


def _label_role(line: str) -> str | None:
    head = line.lstrip(" *#>`").lower()
    labels = (("thought", "thought"), ("action", "action"), ("final answer", "answer"))
    for label, role in (*labels, ("answer", "answer")):
        if head.startswith(label):
            return role
    return None
