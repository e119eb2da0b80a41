"""Arms are paired by what made them, never by a lane's position or title
(core/comparing/arms.py): the first bullet of "did my edit help?"."""

from __future__ import annotations

from sandbox_app.core.comparing.arms import (
    ArmPair,
    lane_title,
    pair_across,
    pairs_within,
    version_label,
    what_changed,
)
from sandbox_app.core.results.eval_result import Arm
from sandbox_app.core.scenarios.lane_settings import LaneSettings

SERVER = "http://127.0.0.1:8000/v1"


def arm(version: str, model: str, **settings: object) -> Arm:
    return Arm(version, "custom", SERVER, model, "bracket", 5, LaneSettings(**settings))


BRIEF, GROUNDED = "b" * 64, "g" * 64
NAMES = {BRIEF: "brief", GROUNDED: "grounded"}


def test_the_same_arms_in_another_order_pair_up_each_with_itself() -> None:
    first = [arm(BRIEF, "good-7b"), arm(GROUNDED, "good-7b"), arm(BRIEF, "sloppy-3b")]
    second = list(reversed(first))  # the window's lanes in another order, other titles
    pairing = pair_across(first, second)
    assert {(p.a, p.b, p.factor) for p in pairing.pairs} == {(a, a, "") for a in first}
    assert pairing.only_first == pairing.only_second == []


def test_after_a_prompt_edit_each_model_is_compared_with_itself() -> None:
    first = [arm(BRIEF, "good-7b"), arm(BRIEF, "sloppy-3b")]
    second = [arm(GROUNDED, "sloppy-3b"), arm(GROUNDED, "good-7b")]
    pairs = pair_across(first, second).pairs
    assert sorted((p.a.model, p.b.model, p.factor) for p in pairs) == [
        ("good-7b", "good-7b", "prompt"),
        ("sloppy-3b", "sloppy-3b", "prompt"),
    ]
    good = next(p for p in pairs if p.b.model == "good-7b")
    assert what_changed(good, NAMES) == ("prompt", "brief", "grounded", "on good-7b")


def test_an_unchanged_arm_is_compared_with_itself_beside_an_edited_one() -> None:
    first = [arm(BRIEF, "good-7b"), arm(GROUNDED, "good-7b")]
    edited = "e" * 64
    second = [arm(edited, "good-7b"), arm(BRIEF, "good-7b")]
    found = pair_across(first, second).pairs
    pairs = {(p.a.prompt_version, p.b.prompt_version, p.factor) for p in found}
    # brief is itself; the edit has one counterpart left (grounded), one factor away.
    assert pairs == {(BRIEF, BRIEF, ""), (GROUNDED, edited, "prompt")}


def test_two_possible_counterparts_are_never_guessed() -> None:
    first = [arm(BRIEF, "good-7b"), arm(BRIEF, "sloppy-3b")]
    second = [arm(BRIEF, "other-1b")]  # one model away from both
    pairing = pair_across(first, second)
    assert pairing.pairs == []
    assert pairing.only_second == second
    assert pairing.only_first == first


def test_settings_that_change_no_answer_do_not_make_another_arm() -> None:
    served = arm(BRIEF, "good-7b", keep_alive="1h", prompt_cache=True)
    assert pair_across([arm(BRIEF, "good-7b")], [served]).pairs[0].factor == ""
    warmer = arm(BRIEF, "good-7b", temperature=0.7)
    assert pair_across([arm(BRIEF, "good-7b")], [warmer]).pairs[0].factor == "temperature"


def test_a_trailing_slash_in_the_server_is_the_same_server() -> None:
    slashed = Arm(BRIEF, "custom", SERVER + "/", "good-7b", "bracket", 5, LaneSettings())
    assert pair_across([arm(BRIEF, "good-7b")], [slashed]).pairs[0].factor == ""


def test_within_one_evaluation_arms_one_factor_apart_are_compared() -> None:
    arms = [arm(BRIEF, "good-7b"), arm(GROUNDED, "good-7b"), arm(BRIEF, "sloppy-3b"),
            arm(GROUNDED, "sloppy-3b", temperature=0.5)]  # fmt: skip
    found = [(arms.index(p.a), arms.index(p.b), p.factor) for p in pairs_within(arms)]
    assert found == [(0, 1, "prompt"), (0, 2, "model")]
    assert what_changed(ArmPair(arms[0], arms[2], "model"), NAMES) == (
        "model", "good-7b", "sloppy-3b", "with prompt brief",
    )  # fmt: skip


def test_an_arm_from_before_arms_were_kept_pairs_by_version_and_model() -> None:
    old = Arm(BRIEF, model="good-7b")  # a schema-1 result: nothing else known
    pairing = pair_across([old], [arm(BRIEF, "good-7b"), arm(BRIEF, "sloppy-3b")])
    assert [(p.b.model, p.factor) for p in pairing.pairs] == [("good-7b", "")]


def test_a_version_is_said_by_name_first_and_a_lane_by_its_model_not_its_url() -> None:
    assert version_label(BRIEF, NAMES) == f"brief ({BRIEF[:8]})"
    assert version_label("c" * 64, NAMES) == "c" * 8
    # eval's lane specs (the same rule as cli/lane_spec.py: the URL ends where its path meets
    # the first colon), as titles; any other title as it is.
    assert lane_title("http://127.0.0.1:8000/v1:good-7b") == "good-7b (127.0.0.1:8000)"
    assert lane_title("http://localhost:11434/v1:qwen3:8b @ grounded") == (
        "qwen3:8b (localhost:11434) @ grounded"
    )
    assert lane_title("anthropic:http://127.0.0.1:8123:claude-x") == "claude-x (127.0.0.1:8123)"
    for title in ("scripted @ brief", "Lane 1", "ollama:llama3"):
        assert lane_title(title) == title
