"""Command line: ``react-sandbox`` opens the window; ``react-sandbox run`` prints a trace.

The CLI and the window are two front ends on one engine: ``run`` prints the same events the
window draws. Exit codes (cli_io.py): 0 answered, 1 error, 2 usage, 3 stopped, 5 max steps.
"""

from __future__ import annotations

import argparse
import sys

# Only what opening the window needs is imported here: a command's modules (the engine, MCP,
# the exports…) are imported when that command runs, the version when --version asks for it.


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    commands = ("run", "eval", "optimize", "prompts", "doctor", "history", "open-trace")
    if args[:1] and args[0] in commands:
        return _headless(args[0], args[1:])
    options = _window_parser().parse_args(args)
    if options.self_test:
        from sandbox_app.ui.window.self_test import self_test

        return self_test()
    from sandbox_app.ui.window.app import run_app  # Qt is only imported for the window

    return run_app(options.scenario)


def _headless(command: str, argv: list[str]) -> int:
    from sandbox_app.cli.cli_io import reader_gone
    from sandbox_app.cli.terminal import say
    from sandbox_app.core.tools.plugins import installed

    for problem in installed().problems:  # the window shows them in its status bar
        say(f"react-sandbox: {problem}")
    try:
        if command == "run":
            from sandbox_app.cli.run_command import run_command

            return run_command(argv)
        if command == "prompts":
            from sandbox_app.cli.prompts_command import prompts_command

            return prompts_command(argv)
        if command == "open-trace":
            from sandbox_app.cli.open_trace_command import open_trace_command

            return open_trace_command(argv)
        if command == "doctor":
            from sandbox_app.cli.doctor_command import doctor_command

            return doctor_command(argv)
        if command == "optimize":
            from sandbox_app.cli.optimize_command import optimize_command

            return optimize_command(argv)
        if command == "history":
            from sandbox_app.cli.history_command import history_command

            return history_command(argv)
        from sandbox_app.cli.evaluating.eval_command import eval_command

        return eval_command(argv)
    except BrokenPipeError:  # `run --json | head -c 10`: the reader has what it wanted
        return reader_gone()


def _window_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="react-sandbox",
        description="ReAct Sandbox: edit a ReAct prompt, run it against a model, watch the trace.",
        epilog="Headless: react-sandbox run [SCENARIO] … (see react-sandbox run --help); a "
        "test set: react-sandbox eval SCENARIO … (see react-sandbox eval --help); prompt "
        "versions: react-sandbox prompts list|show|diff … FILE; a local server's health: "
        "react-sandbox doctor --base-url URL [--model M] (see react-sandbox doctor --help); "
        "improve a prompt on its test set: react-sandbox optimize SCENARIO (see its --help); "
        "past evaluations: react-sandbox history list|show ID|diff A B; a trace from "
        "elsewhere: react-sandbox open-trace FILE [--fork-from K] (see its --help).",
    )
    parser.add_argument("scenario", nargs="?", help="scenario file to open in the window")
    parser.add_argument("--version", action=_Version)
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="run the default scenario in the window, offscreen and offline; exit 0 if right",
    )
    return parser


class _Version(argparse.Action):
    """argparse's ``version`` action, with the version read only when it is asked for."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        help = "show program's version number and exit"
        super().__init__(option_strings, argparse.SUPPRESS, nargs=0, help=help)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        import sandbox_app

        print(f"react-sandbox {sandbox_app.__version__}")
        parser.exit()
