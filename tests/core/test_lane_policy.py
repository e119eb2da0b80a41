"""A lane's policy, without a window (application/lane_policy.py): the version a start is told
joins the scenario's prompt history, counted by its runs; a finished run is graded by the
expected answer, stored in the run history with its verdict, and counted for its version's
pass rate; a run with no answer counts for neither; a replayed run is not stored again."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sandbox_app.application.backend_choice import BackendChoice
from sandbox_app.application.history import History
from sandbox_app.application.lane_policy import LanePolicy, Versions
from sandbox_app.application.run_builder import RunSpec, build_run
from sandbox_app.backends.registry import config_for
from sandbox_app.core.running.engine import drive
from sandbox_app.core.running.records import RunRecord
from sandbox_app.core.scenarios.prompt_versions import History as PromptHistory
from sandbox_app.core.scenarios.scenario import Expected, Scenario, Script

QUESTION = "What is 6 times 7?"


class Kept:
    """The prompt history where a front end keeps it (the window: its workspace)."""

    def __init__(self) -> None:
        self.history: PromptHistory = ()

    def write(self, history: PromptHistory) -> None:
        self.history = history

    def versions(self) -> Versions:
        return Versions(lambda: self.history, self.write)


def _spec(expected: str, answer: str = "42") -> RunSpec:
    """A run whose offline model answers ``answer`` (the script is no part of the prompt
    version: every answer here is one version's)."""
    reply = f"Thought: I know this.\nFinal Answer: {answer}"
    scenario = Scenario(
        question=QUESTION,
        enabled_tools=(),
        expected=Expected(expected),
        script=Script((reply,), tokens_per_second=0, question=QUESTION),
    )
    return BackendChoice(config_for("scripted")).spec(scenario)


def _finished(spec: RunSpec) -> tuple[str | None, RunRecord]:
    engine, _ = build_run(spec)
    record = RunRecord(spec.record_settings())
    record.scenario = spec.scenario
    finished = asyncio.run(drive(engine, lambda event: record.add([event])))
    return finished.answer, record


def _stored(path: Path) -> list[tuple[str, str, int | None]]:
    store = History(path).store
    assert store is not None
    return [tuple(row) for row in store.read("SELECT place, answer, passed FROM runs ORDER BY id")]


def test_a_start_is_counted_and_each_answer_graded_for_its_version(tmp_path: Path) -> None:
    kept, db = Kept(), tmp_path / "history.sqlite"
    policy = LanePolicy("Lane 2", lambda: History(db), kept.versions())
    right = _spec("42")
    policy.started(right, repeats=2)
    (entry,) = kept.history
    assert (entry.id, entry.runs, entry.checked) == (right.prompt_version.id, 2, 0)

    wrong = _spec("42", answer="41")
    assert wrong.prompt_version == right.prompt_version
    assert policy.finished(*_finished(right)) is True
    assert policy.finished(*_finished(wrong)) is False  # the second repeat, wrong
    (entry,) = kept.history
    assert (entry.runs, entry.checked, entry.passed) == (2, 2, 1)
    assert _stored(db) == [("Lane 2", "42", 1), ("Lane 2", "41", 0)]


def test_no_answer_counts_for_nothing_and_a_replayed_run_is_not_stored(tmp_path: Path) -> None:
    kept, db = Kept(), tmp_path / "history.sqlite"
    policy = LanePolicy("Run tab", lambda: History(db), kept.versions())
    spec = _spec("42")
    policy.started(spec)
    assert policy.finished(None, None) is None  # stopped before an answer
    answer, record = _finished(spec)
    record.replayed = True  # played back from a recording: stored when it was run
    assert policy.finished(answer, record) is True
    (entry,) = kept.history
    assert (entry.runs, entry.checked, entry.passed) == (1, 1, 1)
    assert _stored(db) == []


def test_without_a_place_for_versions_only_the_run_history_is_written(tmp_path: Path) -> None:
    """`react-sandbox run`: the scenario file is left as it is."""
    db = tmp_path / "history.sqlite"
    policy = LanePolicy("react-sandbox run", lambda: History(db))
    spec = _spec("43")
    policy.started(spec)
    assert policy.finished(*_finished(spec)) is False
    assert _stored(db) == [("react-sandbox run", "42", 0)]
