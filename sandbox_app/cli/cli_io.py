"""The command line's conventions, shared by ``run`` and ``eval``: its exit codes (each listed
in ``--help``), ``-`` for standard input, and a reader that went away (``| head``).

Exit codes: 0 answered (``eval``: done), 1 an error, 2 a usage error (argparse's own), 3
stopped, 4 a lane below ``eval --min-pass-rate``, 5 max steps reached without an answer, 6
stopped on a loop (Stop on loops), 7 an arm that regressed (``eval``), 8 a trace that ends
without an answer (``open-trace``). Each means one thing, so a script can tell "the model ran
out of steps" from "I typed a flag wrong".
"""

from __future__ import annotations

import io
import os
import sys
from typing import BinaryIO

from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.scenario_file import (
    MAX_FILE_BYTES,
    load_scenario,
    load_scenario_stream,
)
from sandbox_app.core.untrusted.file_reader import ReadError, decode, read_stream

EXIT_ANSWERED = 0
EXIT_ERROR = 1
EXIT_USAGE = 2  # argparse exits with it on an unknown option or a bad choice
EXIT_STOPPED = 3
EXIT_BELOW_PASS_RATE = 4
EXIT_MAX_STEPS = 5
EXIT_LOOP = 6
EXIT_REGRESSED = 7
EXIT_TRACE_UNANSWERED = 8  # open-trace: the trace itself ends without an answer

RUN_EXIT_CODES = f"""exit codes:
  {EXIT_ANSWERED}  answered
  {EXIT_ERROR}  an error: a bad option or file, a server's error, the token budget used up
  {EXIT_USAGE}  a usage error: an unknown option, a missing value, an invalid choice
  {EXIT_STOPPED}  stopped (Ctrl+C)
  {EXIT_MAX_STEPS}  max steps reached without a final answer
  {EXIT_LOOP}  stopped on a loop: the model repeated an action (--stop-on-loops)"""

OPEN_TRACE_EXIT_CODES = f"""exit codes:
  {EXIT_ANSWERED}  answered: the trace (or, with --fork-from, the fork) ends with a final answer
  {EXIT_ERROR}  an error: a trace that cannot be read, a bad option, a server's error in a fork
  {EXIT_USAGE}  a usage error: an unknown option, a missing value, an invalid choice
  {EXIT_STOPPED}  stopped (Ctrl+C) during a fork
  {EXIT_MAX_STEPS}  the fork reached max steps without a final answer
  {EXIT_LOOP}  the fork stopped on a loop (--stop-on-loops)
  {EXIT_TRACE_UNANSWERED}  the trace ends without a final answer (printed as it is)"""

EVAL_EXIT_CODES = f"""exit codes:
  {EXIT_ANSWERED}  every planned run done (failed cases included)
  {EXIT_ERROR}  an error: a bad option or file, an output that cannot be written
  {EXIT_USAGE}  a usage error: an unknown option, a missing value, an invalid choice
  {EXIT_STOPPED}  stopped (Ctrl+C): the finished runs are in the results file; --resume goes on
  {EXIT_BELOW_PASS_RATE}  a lane passed less than --min-pass-rate
  {EXIT_REGRESSED}  --fail-on-regression: an arm worse than its --baseline arm past the interval"""

STDIN = "-"  # the usual name for standard input, where a file name would go
STDIN_NAME = "standard input"


def scenario_from(argument: str) -> Scenario:
    """The scenario a SCENARIO argument names: a file, or ``-`` for one piped in (read by the
    same rules as a file: its size and depth limits, then the same checks)."""
    if argument == STDIN:
        return load_scenario_stream(_stdin(), STDIN_NAME)
    return load_scenario(argument)


def question_from(argument: str) -> str:
    """``--question``'s text, or with ``-`` everything piped in (without its last newline)."""
    if argument != STDIN:
        return argument
    try:
        raw = read_stream(_stdin(), MAX_FILE_BYTES, "a question", STDIN_NAME)
        text = decode(raw, STDIN_NAME).rstrip("\r\n")
    except ReadError as err:
        raise ScenarioError(f"--question -: {err}") from None
    if not text.strip():
        raise ScenarioError("--question -: standard input held no question")
    return text


def _stdin() -> BinaryIO:
    # Looked up when read: a test (or a caller) may have replaced sys.stdin since import.
    stream = sys.stdin
    buffer = getattr(stream, "buffer", None)
    return buffer if buffer is not None else io.BytesIO(stream.read().encode("utf-8"))


def reader_gone() -> int:
    """Stdout's reader has gone (``run --json | head -c 10``): exit quietly, the way Python's
    documentation gives (the signal module's note on SIGPIPE). Stdout now writes to devnull, so
    the interpreter's last flush of what is still buffered raises nothing either."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # not a real file (a test's capture): nothing to redirect
        pass
    return EXIT_ERROR
