"""``react-sandbox doctor``: the health check of a local server, the lines the window's Check
shows (backends/local_servers/health.py), for a scenario's run.

Exit codes: 0 the run can start (warnings may be printed), 1 it cannot (nothing answers, the
server is loading, no such model) or a bad option or file, 2 a usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import textwrap

from sandbox_app.backends.registry import backend_id, config_for
from sandbox_app.cli.cli_io import EXIT_ANSWERED, EXIT_ERROR, EXIT_USAGE, scenario_from
from sandbox_app.cli.terminal import say, visible
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.scenario_file import default_scenario

DOCTOR_EXIT_CODES = f"""exit codes:
  {EXIT_ANSWERED}  the run can start (a line marked ⚠ may still say why it will go wrong)
  {EXIT_ERROR}  it cannot: nothing answers, the server is loading, no such model; or a bad
     option or file
  {EXIT_USAGE}  a usage error: an unknown option, a missing value
"""


def doctor_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="react-sandbox doctor",
        description=textwrap.fill(
            "Check a local model server before a run: which server it is (Ollama, LM Studio, "
            "llama.cpp, vLLM, other), whether it is up or loading, whether it has the model "
            "and has loaded it, the context it serves now against what the scenario needs, and "
            "what the model can do (tools, thinking, vision). Each finding is one line with "
            "its fix. No API key is sent.",
            79,
        ),
        epilog=DOCTOR_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--base-url", help="the server, e.g. http://localhost:11434/v1 (/v1 optional)")
    p.add_argument("--model", default="", help="the model to check, e.g. qwen3:8b")
    p.add_argument(
        "--scenario",
        metavar="FILE",
        help="the scenario whose context need is measured (default: the Brightgrid example)",
    )
    p.add_argument(
        "--backend",
        help="a backend id (ollama, lmstudio, llamacpp, vllm, custom, …): its URL when "
        "--base-url is not given",
    )
    return p


def doctor_command(argv: list[str]) -> int:
    args = doctor_parser().parse_args(argv)
    try:
        backend = backend_id(args.backend) if args.backend else "custom"
        config = config_for(backend, (args.base_url or "").strip(), args.model.strip())
        scenario = scenario_from(args.scenario) if args.scenario else default_scenario()
    except (ScenarioError, ValueError) as err:
        say(f"react-sandbox: {err}")
        return EXIT_ERROR
    if not config.kind.server:
        say(f"react-sandbox: doctor checks a server; {backend!r} is not one")
        return EXIT_ERROR
    if not config.url:
        say("react-sandbox: doctor needs --base-url (or --backend with a URL of its own)")
        return EXIT_ERROR
    from sandbox_app.backends.local_servers.health import (
        check_run,  # the HTTP library only when checking
    )

    health = asyncio.run(check_run(config, scenario, scenario.tools()))
    # A server's words (a model's name, an error) are in the lines: shown visibly.
    sys.stdout.write("".join(visible(line) + "\n" for line in health.lines()))
    sys.stdout.flush()
    return EXIT_ANSWERED if health.can_run else EXIT_ERROR
