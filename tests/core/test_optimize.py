"""``react-sandbox optimize`` end to end: a real agent served over HTTP whose success depends
on the prompt's wording, a reflection model that proposes edits from the failures it is
shown (tests/model_server/optimizer.py), the history database and the scenario file.

What a user notices: a version that is better on the held-out cases by the paired verdict,
found within the budget; a run that stops at the budget when nothing helps; a refused
candidate with its reason; the prompt and the starred versions untouched; the offline
example's whole loop with no network.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from sandbox_app.cli.cli_io import EXIT_STOPPED
from sandbox_app.cli.optimize_command import optimize_command
from sandbox_app.core.history.history_arms import baseline_of
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.scenarios.judge_spec import JudgeSpec
from sandbox_app.core.scenarios.prompt_versions import PromptEntry, edited, record, version_of
from sandbox_app.core.scenarios.scenario import EvalCase, Expected, Scenario
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir
from sandbox_app.core.scenarios.trajectory_spec import TrajectorySpec
from sandbox_app.core.tools import tools_for
from tests.model_server import ModelScript, ModelServer
from tests.model_server import optimizer as fake_optimizer

BRIEF = (
    "You answer questions about {{product}} for {{customer}}.\n\n"
    "Available tools:\n{tools}\n\n{format}"
)
STARRED = "An old prompt the user starred.\n\nAvailable tools:\n{tools}\n\n{format}"


def write_scenario(path: Path, cases: int = 12) -> Scenario:
    """A scenario whose current prompt never says to look prices up, with a starred version
    in its history (which optimize must leave as it is)."""
    scenario = Scenario(
        title="Seats",
        question=fake_optimizer.questions(1)[0][0],
        system_prompt=BRIEF,
        documents=tuple(fake_optimizer.DOCUMENTS),
        variables={"product": "Brightgrid", "customer": "a buyer"},
        checks=TrajectorySpec(tools_called=("search", "calculator")),
        test_set=tuple(
            EvalCase(q, Expected(a, "contains")) for q, a in fake_optimizer.questions(cases)
        ),
    )
    starred = version_of(
        scenario.with_changes(system_prompt=STARRED), tools_for(("calculator", "search"))
    )
    history = record((), starred, _now())
    history = edited(history, starred.id, lambda e: _star(e))
    scenario = scenario.with_changes(prompt_history=history)
    save_scenario(scenario, path)
    return load_scenario(path)


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime(2026, 1, 1, tzinfo=UTC)


def _star(entry: PromptEntry) -> PromptEntry:
    from dataclasses import replace

    return replace(entry, starred=True, name="kept")


def optimize(*args: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    code = optimize_command([*args, "--json"], out)
    return code, json.loads(out.getvalue()) if out.getvalue() else {}


def lanes(server: ModelServer) -> list[str]:
    return ["--lane", f"{server.base_url}:agent", "--reflect", f"{server.base_url}:reflector"]


def test_finds_a_version_better_on_the_held_out_cases_within_its_budget(
    fake_server: ModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, script in fake_optimizer.scripts(fake_optimizer.teacher).items():
        fake_server.set_model(name, script)
    path = tmp_path / "seats.json"
    before = write_scenario(path)
    db = tmp_path / "h.sqlite3"
    code, outcome = optimize(str(path), *lanes(fake_server), "--runs", "60", "--db", str(db))
    assert code == 0
    assert outcome["better"] is True
    verdict = outcome["held_out_verdict"]
    assert verdict["verdict"] == "better"
    assert verdict["ci95_points"][0] > 0
    assert verdict["cases"] == len(outcome["held_out_cases"]) == 6
    assert outcome["runs"] <= 60
    # The progress as it went: runs, the best so far, each step in a line.
    progress = capsys.readouterr().err.splitlines()
    assert progress[1].startswith("[6 runs · 0 candidates · best: candidate 0 0%]")
    assert any("asking" in line and "failing cases" in line for line in progress)
    assert progress[-1].startswith(
        f"[{outcome['runs']} runs · 1 candidates · best: candidate 1 100%]"
    )
    winner = outcome["candidates"][outcome["winner"]]
    assert winner["training_pass_rate"] == 1.0
    assert winner["parent"] == 0
    # The reflection was shown the failing cases with their failed checks.
    asked = [r for r in fake_server.requests if r["model"] == "reflector"]
    assert "search never called" in asked[0]["messages"][-1]["content"]
    # The prompt and the starred version are as they were; the candidates are in the
    # history, unstarred, their origin in their note.
    after = load_scenario(path)
    assert after.system_prompt == before.system_prompt == BRIEF
    assert [e for e in after.prompt_history if e.starred] == list(before.prompt_history)
    added = [e for e in after.prompt_history if e.id == outcome["winner_version"]]
    assert added
    assert not added[0].starred
    assert "from " in added[0].note
    assert "reflector" in added[0].note
    assert fake_optimizer.PHRASE in added[0].version.template
    assert "diff" in outcome
    assert any(fake_optimizer.PHRASE in line for line in outcome["diff"])
    for entry in after.prompt_history:  # every candidate kept what the prompt fills in
        for kept in ("{tools}", "{format}", "{{product}}", "{{customer}}"):
            assert kept in entry.version.template or entry.starred


def test_stops_at_the_budget_when_no_candidate_is_better(
    fake_server: ModelServer, tmp_path: Path
) -> None:
    for name, script in fake_optimizer.scripts(fake_optimizer.idle()).items():
        fake_server.set_model(name, script)
    path = tmp_path / "seats.json"
    write_scenario(path, cases=6)
    args = [str(path), *lanes(fake_server), "--candidates", "3", "--patience", "9"]
    code, outcome = optimize(*args, "--db", str(tmp_path / "h.sqlite3"))
    assert code == 0
    assert outcome["stopped"] == "3 candidates proposed"
    assert outcome["winner"] is None
    assert outcome["better"] is False
    assert outcome["held_out_verdict"] is None  # no held-out runs spent on no winner
    reflections = [r for r in fake_server.requests if r["model"] == "reflector"]
    assert len(reflections) == 3
    assert outcome["runs"] == 4 * len(outcome["train_cases"])  # candidate 0 and three more


def test_patience_stops_when_candidates_in_a_row_are_no_better(
    fake_server: ModelServer, tmp_path: Path
) -> None:
    for name, script in fake_optimizer.scripts(fake_optimizer.idle()).items():
        fake_server.set_model(name, script)
    path = tmp_path / "seats.json"
    write_scenario(path, cases=4)
    args = [str(path), *lanes(fake_server), "--candidates", "9", "--patience", "2"]
    code, outcome = optimize(*args, "--db", str(tmp_path / "h.sqlite3"))
    assert code == 0
    assert outcome["stopped"] == "no better candidate in 2 tries"
    assert len(outcome["candidates"]) == 3


def test_a_candidate_that_drops_a_placeholder_is_refused_with_the_reason(
    fake_server: ModelServer, tmp_path: Path
) -> None:
    for name, script in fake_optimizer.scripts(fake_optimizer.careless).items():
        fake_server.set_model(name, script)
    path = tmp_path / "seats.json"
    write_scenario(path, cases=4)
    args = [str(path), *lanes(fake_server), "--candidates", "1"]
    code, outcome = optimize(*args, "--db", str(tmp_path / "h.sqlite3"))
    assert code == 0
    refused = outcome["candidates"][1]
    assert refused["refused"] == "it drops {format} of the version being improved"
    assert refused["version"] is None
    assert refused["runs"] == 0
    agent_runs = [r for r in fake_server.requests if r["model"] == "agent"]
    assert len({json.dumps(r["messages"][:2]) for r in agent_runs}) == 2  # candidate 0's only
    assert all(e.starred for e in load_scenario(path).prompt_history)  # nothing added


def test_the_offline_example_shows_a_whole_improvement_loop(tmp_path: Path) -> None:
    path = tmp_path / "improve_offline.json"
    shutil.copy(scenarios_dir() / "improve_offline.json", path)
    code, outcome = optimize(str(path), "--reflect", "scripted", "--db", str(tmp_path / "h"))
    assert code == 0
    refused, idle, grounded = outcome["candidates"][1:]
    assert "{format}" in refused["refused"]
    assert idle["training_pass_rate"] == 0.0
    assert grounded["training_pass_rate"] == 1.0
    assert outcome["winner"] == 3
    assert outcome["better"] is True
    assert outcome["stopped"] == "every training case passes"


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--held-out", "1"], "--held-out must be between 0 and 1"),
        (["--candidates", "0"], "--candidates must be at least 1"),
        (["--dollars", "1"], "--dollars needs the price of agent"),
        (["--resume"], "no unfinished optimization"),
        (["--runs", "5"], "a budget of 5 runs is too few"),
        (["--lane", "nosuchkind:m"], "nosuchkind"),
    ],
)
def test_bad_options_are_one_line_and_change_nothing(
    fake_server: ModelServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    said: str,
) -> None:
    path = tmp_path / "seats.json"
    write_scenario(path, cases=4)
    before = path.read_bytes()
    code, _ = optimize(str(path), *lanes(fake_server), *extra, "--db", str(tmp_path / "h"))
    assert code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert said in err[0]
    assert path.read_bytes() == before


def a_slow_optimization(
    server: ModelServer, folder: Path, args: list[str]
) -> subprocess.Popen[str]:
    """``optimize`` in a subprocess, the agent 30 ms a reply, one run at a time; returned
    once candidate 1's runs are under way (two of them stored)."""
    for name, script in fake_optimizer.scripts(fake_optimizer.teacher, delay=0.03).items():
        server.set_model(name, script)
    command = [sys.executable, "-m", "sandbox_app", "optimize", str(folder / "seats.json")]
    process = subprocess.Popen(
        [*command, *args, "--db", str(folder / "h.sqlite3")],
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl+C's default, whatever this process inherited (a CI runner's background job
        # starts with SIGINT ignored).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    # Candidate 0's 6 training runs (a request each), the reflection, then candidate 1's
    # runs (3 requests each, one run at a time): its third run asked means two are stored.
    assert server.wait_for_stat("completions", 6 + 1 + 2 * 3 + 1, timeout=60)
    return process


def test_killed_and_resumed_it_ends_as_an_uninterrupted_run_would(
    fake_server: ModelServer, tmp_path: Path
) -> None:
    killed, whole = tmp_path / "killed", tmp_path / "whole"
    for folder in (killed, whole):
        folder.mkdir()
        write_scenario(folder / "seats.json")
    args = [*lanes(fake_server), "--seed", "3", "--concurrency", "1", "--json"]
    db = killed / "h.sqlite3"
    process = a_slow_optimization(fake_server, killed, args)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    assert process.stderr is not None
    process.stderr.close()
    assert _runs_of(db, "candidate 1") >= 2
    assert _unfinished(db)  # killed mid-run: the optimization had not ended
    asked_before = len(fake_server.requests)

    code, resumed = optimize(str(killed / "seats.json"), *args[:-1], "--db", str(db), "--resume")
    assert code == 0
    reflections = [r for r in fake_server.requests[asked_before:] if r["model"] == "reflector"]
    assert reflections == []  # the stored reply is used: nothing asked twice
    code, uninterrupted = optimize(str(whole / "seats.json"), *args[:-1], "--db", str(whole / "h"))
    assert code == 0
    assert resumed == uninterrupted
    assert resumed["better"] is True


def _runs_of(db: Path, lane: str) -> int:
    with closing(sqlite3.connect(db, timeout=5)) as connection:
        (count,) = connection.execute(
            "SELECT COUNT(*) FROM results WHERE lane = ?", (lane,)
        ).fetchone()
    return int(count)


def _unfinished(db: Path) -> bool:
    with closing(sqlite3.connect(db, timeout=5)) as connection:
        rows = connection.execute("SELECT finished FROM optimizations").fetchall()
    return rows == [(None,)]


def test_ctrl_c_stops_with_exit_3_and_says_how_to_go_on(
    fake_server: ModelServer, tmp_path: Path
) -> None:
    write_scenario(tmp_path / "seats.json")
    process = a_slow_optimization(fake_server, tmp_path, [*lanes(fake_server)])
    process.send_signal(signal.SIGINT)  # what Ctrl+C in the terminal sends
    code = process.wait(timeout=30)
    assert process.stderr is not None
    said = process.stderr.read()
    process.stderr.close()
    assert code == EXIT_STOPPED, said
    assert "Traceback" not in said
    assert said.splitlines()[-1].endswith(
        "stopped; what it did is in the history, --resume goes on"
    )
    assert _unfinished(tmp_path / "h.sqlite3")


def test_the_reflection_is_shown_the_judges_reasons_and_the_trace(
    fake_server: ModelServer, tmp_path: Path
) -> None:
    for name, script in fake_optimizer.scripts(fake_optimizer.idle()).items():
        fake_server.set_model(name, script)
    path = tmp_path / "seats.json"
    scenario = write_scenario(path, cases=4)
    # A judge on the server, as the arm is: the offline judge grades offline lanes only.
    verdict = '{"pass": false, "reason": "the price is a guess, not a source"}'
    fake_server.set_model("judge", ModelScript(replies=[verdict], cycle=True))
    judge = JudgeSpec("custom", "judge", fake_server.base_url)
    save_scenario(scenario.with_changes(rubric="The price comes from a source.", judge=judge), path)
    args = [str(path), *lanes(fake_server), "--candidates", "1"]
    code, _ = optimize(*args, "--db", str(tmp_path / "h.sqlite3"))
    assert code == 0
    (asked,) = [r for r in fake_server.requests if r["model"] == "reflector"]
    shown = asked["messages"][-1]["content"]
    assert "✗ judge — fail — the price is a guess, not a source" in shown
    assert "✗ answer — does not match the expected answer" in shown
    assert "About $15 a seat a month, I think." in shown  # the trace's thought


def test_an_optimization_is_never_the_next_evaluations_latest_baseline(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    place = str(tmp_path / "seats.json")
    evaluated = store.begin_evaluation("Seats", place, {}, 4, 1, "eval")
    store.finish_evaluation(evaluated)
    optimized = store.begin_evaluation("Seats", place, {}, 4, 1, "optimize")
    store.finish_evaluation(optimized)
    assert baseline_of(store, place, optimized + 1) == evaluated
    store.close()


def test_without_a_usable_history_database_it_says_so_and_runs_nothing(
    fake_server: ModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "seats.json"
    write_scenario(path, cases=4)
    damaged = tmp_path / "h.sqlite3"
    damaged.write_bytes(b"not a database at all" * 100)
    code, _ = optimize(str(path), *lanes(fake_server), "--db", str(damaged))
    assert code == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == (
        f"react-sandbox optimize: {damaged}: not a history database (damaged, or another "
        "kind of file); optimize keeps its state in the history database"
    )
    assert fake_server.requests == []


def test_a_reflection_model_that_fails_stops_it_in_one_line_and_resume_goes_on(
    fake_server: ModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scripts = fake_optimizer.scripts(fake_optimizer.teacher)
    fake_server.set_model("agent", scripts["agent"])  # no reflector yet: a 404
    path = tmp_path / "seats.json"
    write_scenario(path, cases=4)
    args = [str(path), *lanes(fake_server), "--db", str(tmp_path / "h.sqlite3")]
    code, _ = optimize(*args)
    assert code == 1
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said.startswith("react-sandbox optimize: ")
    assert "reflector" in said
    assert said.endswith("; what it did is in the history, --resume goes on")
    assert _unfinished(tmp_path / "h.sqlite3")
    agent_requests = sum(r["model"] == "agent" for r in fake_server.requests)
    fake_server.set_model("reflector", scripts["reflector"])
    code, outcome = optimize(*args, "--resume")
    assert code == 0
    assert outcome["winner"] == 1  # (two held-out cases are too few for a verdict of better)
    # Candidate 0's training runs were not made again.
    again = sum(r["model"] == "agent" for r in fake_server.requests) - agent_requests
    assert again == 3 * 2 + (1 + 3) * 2  # candidate 1 on 2 training cases, then the check
