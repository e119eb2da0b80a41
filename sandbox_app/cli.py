"""Command line: ``react-sandbox`` opens the window; ``react-sandbox run`` prints a trace
(run_command.py); ``react-sandbox eval`` runs a test set (eval_command.py).

The CLI and the window are two front ends on one engine: ``run`` prints the same events the
window draws. Each command is imported only when asked for: the window's start does not
wait for the command line's modules, nor the command line for Qt.
"""

from __future__ import annotations

import argparse
import sys

from sandbox_app import __version__
from sandbox_app.cli_io import reader_gone
from sandbox_app.terminal import say


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] in (["run"], ["eval"]):
        from sandbox_app.core.tools.plugins import installed

        for problem in installed().problems:  # the window shows them in its status bar
            say(f"react-sandbox: {problem}")
    try:
        if args[:1] == ["run"]:
            from sandbox_app.run_command import run_command

            return run_command(args[1:])
        if args[:1] == ["eval"]:
            from sandbox_app.eval_command import eval_command

            return eval_command(args[1:])
    except BrokenPipeError:  # `run --json | head -c 10`: the reader has what it wanted
        return reader_gone()
    options = _window_parser().parse_args(args)
    if options.self_test:
        from sandbox_app.ui.self_test import self_test

        return self_test()
    from sandbox_app.ui.app import run_app  # Qt is only imported for the window

    return run_app(options.scenario)


def _window_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="react-sandbox",
        description="ReAct Sandbox: edit a ReAct prompt, run it against a model, watch the trace.",
        epilog="Headless: react-sandbox run [SCENARIO] … (see react-sandbox run --help); a "
        "test set: react-sandbox eval SCENARIO … (see react-sandbox eval --help).",
    )
    parser.add_argument("scenario", nargs="?", help="scenario file to open in the window")
    parser.add_argument("--version", action="version", version=f"react-sandbox {__version__}")
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="run the default scenario in the window, offscreen and offline; exit 0 if right",
    )
    return parser


