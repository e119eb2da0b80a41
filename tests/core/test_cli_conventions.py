"""The command line's conventions: one meaning per exit code (listed in ``--help``), ``-`` for
standard input (a scenario read by the file reader's rules, or the question), a reader that
goes away (``| head``) ends the run quietly, and ``eval`` keeps stdout for its results.
Through a subprocess, as a shell script would meet them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox_app.cli.main import main
from sandbox_app.core.scenarios.scenario_file import save_scenario, scenario_to_dict, scenarios_dir
from tests.helpers import builtin


def environment() -> dict[str, str]:
    """The test's environment as it is now: the history folder the autouse fixture set (an
    environment taken at import went to the user's own history, whatever its schema)."""
    return {**os.environ, "NO_COLOR": "1"}


def cli(*argv: str, stdin: str | bytes = b"") -> subprocess.CompletedProcess[str]:
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    done = subprocess.run(
        [sys.executable, "-m", "sandbox_app", *argv],
        input=data,
        capture_output=True,
        timeout=120,
        env=environment(),
        check=False,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
    )


# ---- exit codes -----------------------------------------------------------------------------


def test_max_steps_and_a_usage_error_have_different_exit_codes() -> None:
    out_of_steps = cli("run", "--max-steps", "1")
    assert out_of_steps.returncode == 5, out_of_steps.stderr
    assert "Reached max steps without final answer" in out_of_steps.stdout
    usage = cli("run", "--frobnicate")
    assert usage.returncode == 2
    assert "unrecognized arguments: --frobnicate" in usage.stderr


@pytest.mark.parametrize(
    ("command", "codes"),
    [
        (
            "run",
            [
                "0  answered",
                "1  an error",
                "2  a usage error",
                "3  stopped",
                "5  max steps",
                "6  stopped on a loop",
            ],
        ),
        (
            "eval",
            [
                "0  every planned run done",
                "1  an error",
                "2  a usage error",
                "3  stopped",
                "4  a lane",
                "7  --fail-on-regression: an arm worse",
            ],
        ),
        (
            "open-trace",
            [
                "0  answered",
                "1  an error",
                "2  a usage error",
                "3  stopped (Ctrl+C) during a fork",
                "5  the fork reached max steps",
                "6  the fork stopped on a loop",
                "8  the trace ends without a final answer",
            ],
        ),
    ],
)
def test_help_lists_every_exit_code(
    command: str, codes: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    listed = lines[lines.index("exit codes:") + 1 :]
    assert [line[: len(code)] for line, code in zip(listed, codes, strict=True)] == codes


# ---- standard input -------------------------------------------------------------------------


def test_a_scenario_piped_in_runs() -> None:
    text = json.dumps(scenario_to_dict(builtin("calculator_chain")))
    done = cli("run", "-", "--json", stdin=text)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert (document["status"], document["answer"]) == ("answered", "668")


def test_a_question_piped_in_is_asked() -> None:
    question = "How much does Brightgrid Pro cost per year for a team of 7 developers?"
    done = cli("run", "--question", "-", "--json", stdin=question + "\n")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["settings"]["question"] == question  # the last newline is not the question
    assert document["answer"] == "$1,680 per year"


@pytest.mark.parametrize(
    ("stdin", "error"),
    [
        (b"{" * 5_000, "react-sandbox: standard input nests its JSON too deeply"),
        (b" " * (5 * 1024 * 1024 + 1), "react-sandbox: standard input is too large (over 5.2 MB)"),
        (b'{"version": 1, "max_steps": "many"}', "react-sandbox: standard input: "),
        (b"", "react-sandbox: standard input"),
    ],
    ids=["deep", "large", "invalid", "empty"],
)
def test_a_bad_scenario_piped_in_is_one_line(stdin: bytes, error: str) -> None:
    done = cli("run", "-", stdin=stdin)
    assert done.returncode == 1
    assert done.stderr.startswith(error), done.stderr
    assert done.stderr.count("\n") == 1
    assert done.stdout == ""


def test_the_scenario_and_the_question_cannot_both_be_piped_in() -> None:
    done = cli("run", "-", "--question", "-", stdin="{}")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "react-sandbox: the scenario and --question cannot both be - (one standard input)\n"
    )


def test_eval_reads_a_scenario_piped_in(tmp_path: Path) -> None:
    text = (scenarios_dir() / "test_set.json").read_text(encoding="utf-8")
    results = tmp_path / "results.jsonl"
    done = cli("eval", "-", "--out", str(results), stdin=text)
    assert done.returncode == 0, done.stderr
    assert "scripted: 92% (11/12" in done.stdout
    assert len(results.read_text(encoding="utf-8").splitlines()) == 12
    without_out = cli("eval", "-", stdin=text)
    assert without_out.returncode == 1
    assert without_out.stderr == (
        "react-sandbox eval: a scenario from standard input needs --out (its results file)\n"
    )


# ---- a reader that goes away ----------------------------------------------------------------


@pytest.mark.parametrize("form", [["--json"], []], ids=["json", "trace"])
def test_a_closed_pipe_ends_the_run_quietly(tmp_path: Path, form: list[str]) -> None:
    # Far more than a pipe holds (64 KB), so the run is still writing when the reader leaves.
    long = builtin("brightgrid")
    script = long.script.__class__(replies=("Answer: " + "word " * 50_000,), tokens_per_second=0)
    model = long.model.replace(max_tokens=100_000)  # the whole reply, not a default's share
    path = tmp_path / "long.json"
    save_scenario(long.with_changes(script=script, model=model), path)
    process = subprocess.Popen(
        [sys.executable, "-m", "sandbox_app", "run", str(path), *form],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(),
    )
    assert process.stdout is not None
    assert process.stderr is not None
    assert len(process.stdout.read(10)) == 10  # `| head -c 10`
    process.stdout.close()
    err = process.stderr.read().decode("utf-8")
    process.stderr.close()
    assert process.wait(timeout=60) == 1
    assert "Traceback" not in err
    assert "BrokenPipeError" not in err
    assert err == ""


# ---- eval: results on stdout, progress on stderr ---------------------------------------------


def test_eval_prints_progress_on_stderr_and_the_summary_on_stdout(tmp_path: Path) -> None:
    example = str(scenarios_dir() / "test_set.json")
    done = cli("eval", example, "--out", str(tmp_path / "r.jsonl"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines() == [
        line for line in done.stdout.strip().splitlines() if line.startswith("scripted: ")
    ]
    assert "scripted: 92% (11/12" in done.stdout
    progress = [line for line in done.stderr.splitlines() if " scripted case " in line]
    assert len(progress) == 12
    assert "12/12 scripted case" in done.stderr
