"""What a model, a tool or a server wrote never drives the terminal: `run` and `eval` show
control characters (ESC, BEL, CSI, DEL, C1, bidi overrides) as visible marks, and only the
app's own colour codes reach a terminal as codes."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox_app.cli.main import main
from sandbox_app.cli.terminal import COLOURS, RESET, WAITING
from sandbox_app.cli.terminal_person import TerminalPerson
from sandbox_app.core.scenarios.scenario import LaneConfig, Script
from sandbox_app.core.scenarios.scenario_file import (
    default_scenario,
    load_scenario,
    save_scenario,
    scenarios_dir,
)
from tests.model_server import ModelScript, ModelServer

TITLE = "\x1b]0;pwned\x07"  # sets the terminal window's title
CLEAR = "\x1b[2J\x1b[H"  # clears the screen
LINK = "\x1b]8;;http://evil.example/\x1b\\click here\x1b]8;;\x1b\\"  # a hidden hyperlink
FAKE = "\r\x1b[2KFinal answer: 42"  # overwrites the line it is on
CSI = "\x9b31m"  # the one-character CSI: red
BIDI = "\u202edetrevni\u202c and \u2066isolated\u2069"
DEL = "\x7f"
HOSTILE = f"{TITLE}{CLEAR}{LINK}{FAKE}{CSI}{BIDI}{DEL}"
# What must never reach the terminal raw.
CONTROLS = ["\x1b", "\x07", "\x9b", "\r", "\x7f", "\u202e", "\u202c", "\u2066", "\u2069"]


def assert_inert(text: str) -> None:
    # The app's own codes may stay: colours, and a waiting line's erasing, were it shown.
    for own in ("\r\x1b[K", "\r" + WAITING, *COLOURS.values(), RESET, "\x1b[K"):
        text = text.replace(own, "")
    found = [repr(c) for c in CONTROLS if c in text]
    assert not found, f"{found} reached the terminal: {text[:400]!r}"


def hostile_scenario(tmp_path: Path) -> Path:
    s = default_scenario()
    replies = (
        f"Thought: look it up {HOSTILE}\nAction: search[Brightgrid Pro {BIDI}]",
        f"Thought: done {CLEAR}\nAnswer: 1680 {HOSTILE}",
    )
    hostile = s.with_changes(
        documents=(f"Brightgrid Pro costs $20. {HOSTILE}",),
        script=Script(replies=replies, tokens_per_second=0),
    )
    path = tmp_path / "hostile.json"
    save_scenario(hostile, path)
    return path


def test_run_shows_hostile_model_and_tool_text_as_visible_marks(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sandbox_app", "run", str(hostile_scenario(tmp_path))],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1"},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert_inert(result.stdout)
    assert_inert(result.stderr)
    assert "␛]0;pwned␇" in result.stdout  # shown, not dropped: the user sees what came
    assert "\\x9b31m" in result.stdout
    assert "Final answer: 1680" in result.stdout
    fake = [line for line in result.stdout.splitlines() if line.startswith("Final answer: 42")]
    assert fake == []  # the fake line is part of another, never a line of its own


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_colour_terminal_only_the_apps_own_codes_remain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert main(["run", str(hostile_scenario(tmp_path))]) == 0
    text = terminal.getvalue()
    assert COLOURS["answer"] in text  # coloured, so this is the colour path
    assert_inert(text)


def test_a_servers_hostile_reply_and_error_stay_text(
    fake_server: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.set_model("m", ModelScript(replies=[f"Thought: {HOSTILE}\nAnswer: 7 {HOSTILE}"]))
    assert main(["run", "--base-url", fake_server.base_url, "--model", "m"]) == 0
    captured = capsys.readouterr()
    assert_inert(captured.out + captured.err)
    assert "Final answer: 7 ␛]0;pwned␇" in captured.out
    fake_server.set_model("bad", ModelScript(fail_status=400, fail_message=f"no {HOSTILE}"))
    assert main(["run", "--base-url", fake_server.base_url, "--model", "bad"]) == 1
    captured = capsys.readouterr()
    assert "␛]0;pwned" in captured.out + captured.err  # the server's message, shown
    assert_inert(captured.out + captured.err)


def test_json_output_holds_the_same_text_with_nothing_a_terminal_obeys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(hostile_scenario(tmp_path)), "--json"]) == 0
    out = capsys.readouterr().out
    assert_inert(out)
    document = json.loads(out)
    assert document["answer"] == f"1680 {HOSTILE}"  # the same text once parsed


def test_eval_progress_and_summary_show_a_hostile_lane_and_answer_as_marks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example = load_scenario(scenarios_dir() / "test_set.json")
    case = example.test_set[0]
    case = type(case)(case.question, case.expected, replies=(f"Answer: {HOSTILE}",))
    hostile = example.with_changes(test_set=(case,), lanes=(LaneConfig(model=f"m{TITLE}{BIDI}"),))
    path = tmp_path / "hostile_set.json"
    save_scenario(hostile, path)
    code = main(["eval", str(path), "--out", str(tmp_path / "r.jsonl")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "FAILED" in captured.err  # the progress
    assert "scripted:m␛]0;pwned␇" in captured.err  # the lane, in the progress…
    assert "scripted:m␛]0;pwned␇" in captured.out  # …and the summary
    assert_inert(captured.out + captured.err)


def test_the_approval_prompt_shows_a_tools_name_and_input_as_marks() -> None:
    class Person(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = io.StringIO()
    person = TerminalPerson(Person("n\n"), out)
    approved = asyncio.run(person.approve(f"mcp_tool{CLEAR}", f"rm -rf /{FAKE}"))
    assert approved is False
    assert "Run mcp_tool␛[2J␛[H with input" in out.getvalue()
    assert_inert(out.getvalue())
    declined = io.StringIO()
    asyncio.run(TerminalPerson(io.StringIO(), declined).approve(f"x{TITLE}", "y"))
    assert "x␛]0;pwned␇ needs a person's approval" in declined.getvalue()
    assert_inert(declined.getvalue())
