"""The optimizer's pure part (core/optimizing/): the split, what a candidate keeps, how a
reflection's reply is read, the Pareto front and the parents drawn from it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sandbox_app.core.optimizing import pareto
from sandbox_app.core.optimizing.keeping import Kept, refusal
from sandbox_app.core.optimizing.reflection import read_reply
from sandbox_app.core.optimizing.split import case_identity, split_cases
from sandbox_app.core.react_format.prompts import placeholders_in
from sandbox_app.core.react_format.variables import names_in

CASES = [case_identity(f"question {i}", str(i)) for i in range(20)]


def test_the_split_is_fixed_by_the_seed_and_each_cases_identity() -> None:
    split = split_cases(CASES, 0.5, seed=7)
    assert len(split.held_out) == 10
    assert len(split.train) == 10
    assert split == split_cases(CASES, 0.5, seed=7)
    assert split != split_cases(CASES, 0.5, seed=8)
    # Reordered, every case lands on the same side.
    reordered = list(reversed(CASES))
    again = split_cases(reordered, 0.5, seed=7)
    held = {CASES[i] for i in split.held_out}
    assert {reordered[i] for i in again.held_out} == held


def test_the_split_keeps_a_case_on_each_side() -> None:
    assert [len(s) for s in vars(split_cases(CASES[:2], 0.05, seed=0)).values()] == [1, 1]
    assert [len(s) for s in vars(split_cases(CASES[:2], 0.95, seed=0)).values()] == [1, 1]


CURRENT = "Help {{customer}} with {{product}}.\n\nAvailable tools:\n{tools}\n\n{format}"
KEPT = Kept.of(CURRENT)
DEFINED = {"customer", "product", "region"}


def test_refusals_name_what_is_wrong() -> None:
    assert KEPT.written() == ["{tools}", "{format}", "{{customer}}", "{{product}}"]
    assert refusal(CURRENT.replace("{format}", ""), KEPT, DEFINED, {}) == (
        "it drops {format} of the version being improved"
    )
    assert refusal(CURRENT.replace("{{product}}", "it"), KEPT, DEFINED, {}) == (
        "it drops {{product}} of the version being improved"
    )
    assert "{colour}" in (refusal(CURRENT + " {colour}", KEPT, DEFINED, {}) or "")
    assert "neither the scenario nor a case" in (
        refusal(CURRENT + " {{city}}", KEPT, DEFINED, {}) or ""
    )
    assert refusal(CURRENT + " {{region}}", KEPT, DEFINED, {}) is None
    assert refusal(CURRENT, KEPT, DEFINED, {CURRENT: 0}) == "it is the version being improved"
    assert refusal("  ", KEPT, DEFINED, {}) == "the reply's new prompt is empty"


_PIECES = st.sampled_from(
    [
        "{tools}",
        "{format}",
        "{{customer}}",
        "{{product}}",
        "{{region}}",
        "{{city}}",
        "{x}",
        " Look it up.",
        "\n",
        "{",
        "}",
        "{{",
        "Be brief.",
        '{"json": 1}',
    ]
)


@given(st.lists(_PIECES, max_size=12), st.lists(st.integers(0, 30), max_size=6))
def test_every_accepted_candidate_keeps_the_placeholders_and_variables(
    added: list[str], dropped: list[int]
) -> None:
    # A candidate made by dropping some of the current template's pieces and adding others.
    pieces = ["Help ", "{{customer}}", " with ", "{{product}}", ".\n", "{tools}", "\n", "{format}"]
    for i in dropped:
        if pieces:
            pieces.pop(i % len(pieces))
    template = "".join(pieces + added)
    if refusal(template, KEPT, DEFINED, {}) is None:
        assert set(KEPT.placeholders) <= set(placeholders_in(template))
        assert set(KEPT.variables) <= set(names_in(template))


@given(st.text(max_size=200).filter(lambda t: "</new_prompt>" not in t))
def test_a_template_between_the_tags_is_read_back_whatever_it_holds(template: str) -> None:
    draft = "<think>draft <new_prompt>no</new_prompt></think>"
    reply = f"{draft}Why.\n<new_prompt>\n{template}\n</new_prompt>"
    assert read_reply(reply).template == template.strip()


def test_replies_read_past_thinking_and_said_when_unreadable() -> None:
    pre_opened = (
        "thinking… <new_prompt>draft</new_prompt></think>Because.<new_prompt>B</new_prompt>"
    )
    assert read_reply(pre_opened).template == "B"
    assert read_reply(pre_opened).diagnosis == "Because."
    assert read_reply("<new_prompt>A</new_prompt> then <new_prompt>B</new_prompt>").template == "B"
    assert read_reply("Just advice, no prompt.").problem == (
        "the reply has no <new_prompt>…</new_prompt> block"
    )
    cut = read_reply("Why.<new_prompt>half a templ")
    assert cut.template is None
    assert "not closed" in cut.problem
    assert read_reply("<think>only thinking <new_prompt>x</new_prompt>").template is None


def test_the_front_keeps_each_cases_best_and_drops_the_dominated() -> None:
    cases = [0, 1, 2]
    scores = {
        0: {0: 0.0, 1: 0.0, 2: 0.0},
        1: {0: 1.0, 1: 0.0, 2: 0.0},  # alone best on case 0
        2: {0: 0.0, 1: 1.0, 2: 1.0},  # best on cases 1 and 2: the best on average
        3: {0: 0.0, 1: 1.0, 2: 0.0},  # best on case 1, but candidate 2 dominates it
    }
    assert pareto.front(scores, cases) == [1, 2]
    assert pareto.winner(scores, cases) == 2
    drawn = {pareto.parent(scores, cases, seed=1, number=n) for n in range(1, 40)}
    assert drawn == {1, 2}
    same = [pareto.parent(scores, cases, seed=1, number=n) for n in range(1, 40)]
    assert same == [pareto.parent(scores, cases, seed=1, number=n) for n in range(1, 40)]


def test_no_parent_when_every_training_case_passes() -> None:
    assert pareto.parent({0: {0: 0.0}, 1: {0: 1.0}}, [0], seed=0, number=1) is None
    assert pareto.winner({0: {0: 0.5}, 1: {0: 0.5}}, [0]) == 0  # a tie: the earlier


def test_a_template_that_speaks_of_thinking_tags_is_kept_as_written() -> None:
    template = "Think inside <think> and </think> first.\n{tools}\n{format}"
    reply = f"<think>plan</think>Reasons.\n<new_prompt>\n{template}\n</new_prompt>"
    assert read_reply(reply).template == template
    assert read_reply(reply).diagnosis == "Reasons."
