"""Command line entry point: the window by default, ``run`` for a headless trace."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="react-sandbox",
        description="ReAct Sandbox: edit a ReAct prompt, run it against a model, watch the trace.",
    )
    parser.add_argument("scenario", nargs="?", help="scenario file to open in the window")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    from sandbox_app.ui.app import run_app

    return run_app(args.scenario)
