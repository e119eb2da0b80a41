"""Trace diff (core/results/trace_diff.py): two runs of the offline model, aligned by step,
and the first step where what they did parts: action, input, observation or answer; never
their wording or their timing."""

from __future__ import annotations

from dataclasses import replace

from sandbox_app.core.results import trace_diff
from sandbox_app.core.results.presentation import Role
from sandbox_app.core.results.trace_text import lines
from sandbox_app.core.running.records import RunRecord
from sandbox_app.core.scenarios.scenario import Scenario
from tests.helpers import builtin, run_events, scripted


def record_of(scenario: Scenario) -> RunRecord:
    record = RunRecord()
    record.add(run_events(scenario, scripted(scenario)))
    return record


def with_replies(scenario: Scenario, **changed: str) -> Scenario:
    """``scenario`` with reply ``r<n>`` (1-based) rewritten."""
    replies = list(scenario.script.replies)
    for key, text in changed.items():
        replies[int(key[1:]) - 1] = text
    return scenario.with_changes(script=replace(scenario.script, replies=tuple(replies)))


CHAIN = builtin("calculator_chain")  # paren dialect: calculator(…), four steps
BRIGHT = builtin("brightgrid")  # bracket dialect: search, calculator, answer


def test_two_runs_of_one_script_do_the_same() -> None:
    diff = trace_diff.diff_runs(record_of(CHAIN), record_of(CHAIN))
    assert diff.same
    assert diff.first is None
    assert [s.step for s in diff.steps] == [1, 2, 3, 4]
    assert all(s.differs is None and s.left == s.right for s in diff.steps)
    assert ("Final answer: 668", Role.ANSWER) in diff.left_end


def test_other_thoughts_and_thinking_are_no_difference() -> None:
    reworded = with_replies(
        CHAIN,
        r1="<think>brackets first, surely</think>Thought: add first\nAction: calculator(128 + 256)",
        r2="Thought: then double it, in other words\nAction: calculator(384 * 2)",
    )
    diff = trace_diff.diff_runs(record_of(CHAIN), record_of(reworded))
    assert diff.same
    right = diff.steps[0].right
    assert right is not None  # the thinking is still shown, as the trace shows it
    assert ("brackets first, surely", Role.THINKING) in right.lines


def test_another_input_is_marked_at_its_step_and_both_sides_keep_their_text() -> None:
    other = with_replies(CHAIN, r2="Thought: then triple it\nAction: calculator(384 * 3)")
    diff = trace_diff.diff_runs(record_of(CHAIN), record_of(other))
    assert diff.first == trace_diff.Difference(2, trace_diff.INPUT, "384 * 2", "384 * 3")
    assert diff.first.describe() == "First difference at step 2: action input (384 * 2 · 384 * 3)"
    assert [s.differs for s in diff.steps][:2] == [None, trace_diff.INPUT]
    step = diff.steps[1]
    assert step.left is not None
    assert step.right is not None
    assert ("Action: calculator(384 * 2)", Role.ACTION) in step.left.lines
    assert ("Action: calculator(384 * 3)", Role.ACTION) in step.right.lines
    assert ("Observation: 1152", Role.OBSERVATION) in step.right.lines
    # The lines are the trace's own: the same a text of the whole run says, in order.
    whole = lines(record_of(other).events, marks=False)
    assert all(line in whole for line in step.right.lines)


def test_another_tool_is_an_action_difference() -> None:
    other = with_replies(BRIGHT, r1="Thought: guess.\nAction: calculator[20 * 7]")
    diff = trace_diff.diff_runs(record_of(BRIGHT), record_of(other))
    assert diff.first == trace_diff.Difference(1, trace_diff.ACTION, "search", "calculator")


def test_the_same_call_read_back_otherwise_is_an_observation_difference() -> None:
    other = BRIGHT.with_changes(documents=("Brightgrid Pro costs $25 per developer per month.",))
    diff = trace_diff.diff_runs(record_of(BRIGHT), record_of(other))
    assert diff.first is not None
    assert (diff.first.step, diff.first.what) == (1, trace_diff.OBSERVATION)
    assert "$25" in diff.first.right
    assert "$25" not in diff.first.left


def test_another_answer_and_a_step_one_run_never_reached() -> None:
    answered = with_replies(BRIGHT, r3="Thought: total.\nAnswer: $1,700 per year")
    diff = trace_diff.diff_runs(record_of(BRIGHT), record_of(answered))
    assert diff.first == trace_diff.Difference(
        3, trace_diff.ANSWER, "$1,680 per year", "$1,700 per year"
    )
    short = BRIGHT.with_changes(max_steps=2)  # stops before its answer
    diff = trace_diff.diff_runs(record_of(short), record_of(BRIGHT))
    assert diff.first == trace_diff.Difference(3, trace_diff.MISSING, "not reached", "reached")
    assert diff.steps[-1].left is None
    assert diff.steps[-1].right is not None


def test_when_every_step_agrees_the_ending_is_compared() -> None:
    left, right = record_of(BRIGHT), record_of(BRIGHT)
    assert right.finished is not None
    right.finished = replace(right.finished, status="stopped", answer=None)
    diff = trace_diff.diff_runs(left, right)
    assert diff.first == trace_diff.Difference(
        0, trace_diff.OUTCOME, "answered: $1,680 per year", "stopped"
    )
    assert diff.first.describe().startswith("First difference at the end: how the run ended")
