"""`react-sandbox run` judges its answer against the scenario's expected answer, in the words
and colours the window's answer header uses, and `--json` says it too."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.cli.main import main
from sandbox_app.cli.terminal import COLOURS, RESET
from sandbox_app.core.results.presentation import Role
from sandbox_app.core.scenarios.scenario_file import scenarios_dir

RIGHT = "Final answer: $1,680 per year"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def brightgrid(tmp_path: Path, expected: dict[str, Any] | str | None = "as shipped") -> str:
    """The shipped Brightgrid scenario, fast, with its expected answer replaced if asked."""
    data = json.loads((scenarios_dir() / "brightgrid.json").read_text(encoding="utf-8"))
    data["script"]["tokens_per_second"] = 4000
    if expected != "as shipped":
        data["expected"] = expected
    path = tmp_path / "brightgrid.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_run_says_correct_under_a_right_answer_and_nothing_without_an_expected_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", brightgrid(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    verdict = lines[lines.index(RIGHT) + 1]
    assert verdict == "✔ Correct · answered in 3 steps"  # the window's line, word for word
    assert main(["run", brightgrid(tmp_path, None)]) == 0
    out = capsys.readouterr().out
    assert RIGHT in out
    assert "Correct" not in out


def test_run_says_wrong_and_what_was_expected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = brightgrid(tmp_path, {"answer": "$2,000", "match": "contains"})
    assert main(["run", scenario]) == 0  # the exit code says how the run ended, as before
    lines = capsys.readouterr().out.splitlines()
    assert lines[lines.index(RIGHT) + 1] == "✘ Wrong (expected $2,000) · answered in 3 steps"


def coloured_lines(scenario: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The run on a terminal: each line's text → the colour it was printed in."""
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert main(["run", scenario]) == 0
    colours: dict[str, str] = {}
    colour, line, line_colour = "", "", ""
    for part in re.split(r"(\033\[[0-9;]*m)", terminal.getvalue()):
        if part.startswith("\033["):
            colour = "" if part == RESET else part
            continue
        pieces = part.split("\n")
        for ended, piece in enumerate(pieces):
            if ended:
                colours.setdefault(line, line_colour)
                line, line_colour = "", ""
            if piece:
                line, line_colour = line + piece, colour  # the colour its text was printed in
    return colours


def test_a_wrong_answer_is_printed_in_the_error_colour_never_the_answer_colour(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = brightgrid(tmp_path, {"answer": "$2,000", "match": "contains"})
    colours = coloured_lines(wrong, monkeypatch)
    assert colours[RIGHT] == COLOURS[Role.ERROR]
    assert colours["✘ Wrong (expected $2,000) · answered in 3 steps"] == COLOURS[Role.ERROR]


def test_a_right_answer_and_its_verdict_are_printed_in_the_answer_colour(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    colours = coloured_lines(brightgrid(tmp_path), monkeypatch)
    assert colours[RIGHT] == COLOURS[Role.ANSWER]
    assert colours["✔ Correct · answered in 3 steps"] == COLOURS[Role.ANSWER]


@pytest.mark.parametrize(
    ("expected", "correct"),
    [
        ("as shipped", True),
        ({"answer": "$2,000", "match": "contains"}, False),
        (None, None),
    ],
    ids=["right", "wrong", "no expected answer"],
)
def test_json_says_whether_the_answer_was_correct(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    expected: dict[str, Any] | str | None,
    correct: bool | None,
) -> None:
    assert main(["run", brightgrid(tmp_path, expected), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["correct"] is correct
    if expected is None:
        assert document["expected"] is None
    else:
        wanted = "$1,680" if expected == "as shipped" else "$2,000"
        assert document["expected"] == {"answer": wanted, "match": "contains", "tolerance": 1e-9}
