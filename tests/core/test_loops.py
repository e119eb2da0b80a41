"""Loop detection (core/running/loops.py): the same action a 3rd time, or two in turn, gives a
notice in the trace and a count in the metrics; Stop on loops (a yes/no lane setting) ends the
run with status "loop"; a reply saying one line over and over is cut while it streams
(core/react_format/scanner.py). Offline: the scripted model plays the replies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox_app.cli.evaluating.eval_command import _lane_from_spec
from sandbox_app.cli.main import main
from sandbox_app.core.react_format.parser import parse_turn
from sandbox_app.core.results.compare import LaneRecord
from sandbox_app.core.results.presentation import Presentation
from sandbox_app.core.running.events import (
    ActionParsed,
    Event,
    LoopNoticed,
    Observation,
    RepetitionCut,
    TokenDelta,
)
from sandbox_app.core.running.loops import LoopWatch
from sandbox_app.core.scenarios.lane_settings import LaneSettings, SettingError
from sandbox_app.core.scenarios.scenario import Scenario, Script
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir
from tests.helpers import builtin, finished, of_type, run_events, scripted
from tests.model_server import ModelScript, ModelServer

LOOPS = str(scenarios_dir() / "loops.json")


def _scripted(*replies: str, stop: bool = False) -> Scenario:
    """A scenario whose offline model writes ``replies``, Stop on loops as given."""
    scenario = builtin("brightgrid")
    return scenario.with_changes(
        script=Script(replies=replies, tokens_per_second=0),
        model=scenario.model.replace(stop_on_loops=stop),
        max_steps=len(replies),
    )


def _trace(events: list[Event]) -> str:
    presentation = Presentation()
    return "".join(piece.text for event in events for piece in presentation.feed(event))


SEARCH = "Thought: I need the price.\nAction: search[{}]"
ANSWER = "Thought: done.\nAnswer: $1,680 per year"


def test_the_third_identical_call_gives_a_notice_and_the_run_goes_on() -> None:
    # The same search three times, written in other case and spacing each time.
    scenario = _scripted(
        SEARCH.format("Brightgrid Pro price"),
        SEARCH.format("brightgrid  PRO price"),
        SEARCH.format(" Brightgrid Pro price "),
        ANSWER,
    )
    events = run_events(scenario, scripted(scenario))
    loops = of_type(events, LoopNoticed)
    assert [(n.step, n.times, n.text) for n in loops] == [
        (3, 3, "loop: search[Brightgrid Pro price] for the 3rd time")
    ]
    assert "loop: search[Brightgrid Pro price] for the 3rd time\n" in _trace(events)
    done = finished(events)
    assert (done.status, done.answer) == ("answered", "$1,680 per year")
    assert len(of_type(events, Observation)) == 3  # noticing never changes the run
    assert done.metrics.loops == 1


def test_two_different_inputs_are_not_a_loop() -> None:
    scenario = _scripted(SEARCH.format("price"), SEARCH.format("refunds"), SEARCH.format("plans"))
    events = run_events(scenario, scripted(scenario))
    assert of_type(events, LoopNoticed) == []
    assert finished(events).metrics.loops == 0


def test_an_a_b_a_b_cycle_is_noticed_on_its_fourth_call() -> None:
    calc = "Thought: now the total.\nAction: calculator[20 * 12]"
    scenario = _scripted(SEARCH.format("price"), calc, SEARCH.format("price"), calc, ANSWER)
    events = run_events(scenario, scripted(scenario))
    loops = of_type(events, LoopNoticed)
    assert [(n.step, n.action, n.other) for n in loops] == [
        (4, "calculator[20 * 12]", "search[price]")
    ]
    assert (
        loops[0].text == "loop: search[price] and calculator[20 * 12] in turn, twice (A, B, A, B)"
    )
    assert finished(events).status == "answered"


def test_stop_on_loops_ends_the_run_with_status_loop_before_the_call_runs() -> None:
    scenario = _scripted(
        SEARCH.format("price"), SEARCH.format("price"), SEARCH.format("price"), ANSWER, stop=True
    )
    events = run_events(scenario, scripted(scenario))
    done = finished(events)
    assert done.status == "loop"
    assert done.reason == "search[price] for the 3rd time (Stop on loops: not run again)."
    assert done.answer is None
    assert len(of_type(events, ActionParsed)) == 3
    assert len(of_type(events, Observation)) == 2  # the looping call was not run
    assert len(done.metrics.steps) == 3


def test_stop_on_loops_ends_on_a_cycle_too() -> None:
    calc = "Thought: now the total.\nAction: calculator[20 * 12]"
    scenario = _scripted(SEARCH.format("a"), calc, SEARCH.format("a"), calc, ANSWER, stop=True)
    done = finished(run_events(scenario, scripted(scenario)))
    assert (done.status, len(done.metrics.steps)) == ("loop", 4)


DEGENERATE = "Thought: I am not sure.\n" * 30 + "Action: search[price]"


def test_a_reply_repeating_one_line_is_cut_while_streaming_with_a_notice() -> None:
    scenario = _scripted(DEGENERATE, ANSWER)
    events = run_events(scenario, scripted(scenario))
    cuts = of_type(events, RepetitionCut)
    assert [(c.step, c.line, c.times) for c in cuts] == [(1, "Thought: I am not sure.", 8)]
    shown = "".join(e.text for e in of_type(events, TokenDelta) if e.step == 1)
    assert shown == "Thought: I am not sure.\n" * 8  # the rest never streamed to the trace
    assert "same line 8 times in a row: cut there" in _trace(events)
    assert of_type(events, ActionParsed) == []  # the action after the repeats was never read
    done = finished(events)
    assert (done.status, done.metrics.loops, done.metrics.fabrications_cut) == ("answered", 1, 0)


def test_seven_repeats_or_blank_lines_alone_are_not_cut() -> None:
    seven = "Thought: I am not sure.\n" * 7 + "\n" * 20 + "Action: search[price]"
    turn = parse_turn(seven)
    assert (turn.kind, turn.input, turn.dropped) == ("action", "price", "")
    broken = ("Thought: I am not sure.\n\n" * 8) + "Action: search[price]"
    assert parse_turn(broken).kind == "none"  # blank lines between repeats do not hide them


def test_the_compare_table_counts_loops() -> None:
    scenario = builtin("loops")
    events = run_events(scenario, scripted(scenario))
    lane = LaneRecord("A", "scripted")
    lane.history.start().add(events)
    row = lane.summary(scenario.expected, None)
    assert row["Loops"] == "2"  # a repeated search and a degenerate reply
    assert row["Status"] == "answered"


def test_the_builtin_example_loops_and_with_stop_on_loops_ends_with_loop() -> None:
    scenario = builtin("loops")
    events = run_events(scenario, scripted(scenario))
    assert [n.step for n in of_type(events, LoopNoticed)] == [3]
    assert len(of_type(events, RepetitionCut)) == 1
    assert finished(events).answer == "$1,680 per year"
    stopping = scenario.with_changes(model=scenario.model.replace(stop_on_loops=True))
    assert finished(run_events(stopping, scripted(stopping))).status == "loop"


def test_run_stop_on_loops_exits_6_and_json_holds_the_notice(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", LOOPS, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["settings"]["stop_on_loops"] is False
    notices = [e for e in document["events"] if e["type"] == "LoopNoticed"]
    assert [(n["step"], n["text"]) for n in notices] == [
        (3, "loop: search[Brightgrid Pro Price] for the 3rd time")
    ]
    assert main(["run", LOOPS, "--stop-on-loops", "--json"]) == 6
    document = json.loads(capsys.readouterr().out)
    assert (document["status"], document["settings"]["stop_on_loops"]) == ("loop", True)
    assert [e["type"] for e in document["events"]][-1] == "RunFinished"
    assert main(["run", LOOPS, "--stop-on-loops"]) == 6
    out = capsys.readouterr().out
    assert "[loop: search[Brightgrid Pro Price] for the 3rd time]" in out
    assert "loop: search[Brightgrid Pro Price] for the 3rd time (Stop on loops" in out


def test_run_help_lists_the_loop_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    assert "6  stopped on a loop" in out
    assert "--stop-on-loops, --no-stop-on-loops" in out


def test_no_stop_on_loops_turns_a_files_true_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = load_scenario(LOOPS)
    path = tmp_path / "stop.json"
    save_scenario(scenario.with_changes(model=scenario.model.replace(stop_on_loops=True)), path)
    assert main(["run", str(path)]) == 6
    assert main(["run", str(path), "--no-stop-on-loops"]) == 0
    capsys.readouterr()


def test_the_switch_round_trips_in_a_file_and_refuses_anything_but_true_or_false(
    tmp_path: Path,
) -> None:
    scenario = load_scenario(LOOPS).with_changes(model=LaneSettings(stop_on_loops=True))
    save_scenario(scenario, tmp_path / "s.json")
    data = json.loads((tmp_path / "s.json").read_text())
    assert data["model"]["stop_on_loops"] is True
    assert load_scenario(tmp_path / "s.json").model.stop_on_loops is True
    data["model"]["stop_on_loops"] = "yes"  # a file says JSON's true, never a word
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r'"model.stop_on_loops" must be true or false'):
        load_scenario(tmp_path / "bad.json")
    data["model"]["stop_on_loops"] = 1
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"must be true or false \(got 1\)"):
        load_scenario(tmp_path / "bad.json")


@pytest.mark.parametrize(
    ("word", "value"),
    [("true", True), ("YES", True), ("on", True), ("false", False), ("no", False), ("Off", False)],
)
def test_eval_lane_option_takes_the_switch_words(word: str, value: bool) -> None:
    lane = _lane_from_spec(f"scripted,stop_on_loops={word}", 60, LaneSettings())
    assert lane.settings.stop_on_loops is value


def test_eval_lane_option_refuses_another_word_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(
        SettingError, match=r"stop_on_loops must be one of true/yes/on/false/no/off"
    ):
        _lane_from_spec("scripted,stop_on_loops=maybe", 60, LaneSettings())
    test_set = str(scenarios_dir() / "test_set.json")
    assert main(["eval", test_set, "--lane", "scripted,stop_on_loops=2"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "stop_on_loops must be one of true/yes/on/false/no/off (got '2')" in err


def test_eval_results_count_loops(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The example as a test set of one case: its question, expected answer and replies.
    data = json.loads(Path(LOOPS).read_text())
    case = {"question": data["question"], "expected": data["expected"]}
    data["test_set"] = [{**case, "replies": data["script"]["replies"]}]
    path = tmp_path / "set.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "r.jsonl"
    assert main(["eval", str(path), "--lane", "scripted", "--out", str(out)]) == 0
    result = json.loads(out.read_text().splitlines()[0])
    assert result["metrics"]["loops"] == 2
    assert "· 2 loops ·" in capsys.readouterr().out


SORRY = "I'm sorry for the confusion."  # what SmolLM2-135M said five times to a real question


def test_a_model_giving_the_same_reply_again_and_again_is_named_as_stuck(
    fake_server: ModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_server.set_model("smollm2", ModelScript(replies=[SORRY], cycle=True))
    args = ["run", "--base-url", fake_server.base_url, "--model", "smollm2", "--max-steps", "5"]
    assert main(args) == 5  # max steps, as before
    lines = capsys.readouterr().out.splitlines()
    end = next(line for line in lines if line.startswith("max_steps: "))
    assert end == (
        "max_steps: Reached max steps without final answer; stuck: the same reply 5 times in "
        f"a row (“{SORRY}”)"
    )
    # Named from its REPLY_REPEATS-th time (the 3rd), as a repeated action is.
    named = [line for line in lines if "the same reply for the" in line]
    assert [line.split(" time")[0][-3:] for line in named] == ["3rd", "4th", "5th"]


def test_replies_that_differ_or_come_between_actions_are_not_stuck() -> None:
    watch = LoopWatch()
    assert [watch.see_reply(1, text) for text in ("a", "b", "a", "b")] == [None] * 4
    assert watch.see_reply(5, "x") is None
    assert watch.see_reply(6, "  X ") is None  # the same reply, twice
    watch.see(ActionParsed(7, "search", "q"))  # an action between: not in a row
    assert watch.see_reply(8, "x") is None
    assert watch.stuck_note() == ""
