"""Each dialect is one complete spec, and one label grammar serves every reader of a reply."""

from __future__ import annotations

import dataclasses
import re
from typing import get_args

import pytest

from sandbox_app.core.react_format.dialects import (
    DIALECTS,
    LABEL_ROLES,
    SPECS,
    Dialect,
    Label,
    label_role,
    match_label,
)
from sandbox_app.core.react_format.parser import TurnScanner, parse_turn
from sandbox_app.core.react_format.prompts import DEFAULT_TEMPLATE, render_prompt
from sandbox_app.core.running.engine import STOP_SEQUENCES
from sandbox_app.core.tools import builtin_tools
from tests.label_lines import LABEL_LINES


def test_there_is_one_spec_per_dialect_and_no_other() -> None:
    assert get_args(Dialect) == DIALECTS
    assert tuple(SPECS) == DIALECTS
    assert all(SPECS[d].name == d for d in DIALECTS)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_field_of_a_spec_is_filled(dialect: Dialect) -> None:
    spec = SPECS[dialect]
    for field in dataclasses.fields(spec):
        value = getattr(spec, field.name)
        assert value, f"{dialect}.{field.name} is empty"
        if isinstance(value, str):
            assert value.strip(), f"{dialect}.{field.name} is blank"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_examples_parse_in_their_own_dialect_and_in_auto(dialect: Dialect) -> None:
    spec = SPECS[dialect]
    for chosen in (dialect, None):
        assert parse_turn(spec.example_action, chosen).kind == "action", chosen
        assert parse_turn(spec.example_answer, chosen).kind == "answer", chosen


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_format_text_asks_for_the_labels_the_examples_use(dialect: Dialect) -> None:
    spec = SPECS[dialect]
    for line in (spec.example_action + "\n" + spec.example_answer).splitlines():
        found = match_label(line)
        assert found is not None, line
        label = re.sub(r"[\s\d:]+$", "", line[: found.end])  # "Thought 2: " -> "Thought"
        assert label + (" " if found.numbered else ":") in spec.format, (dialect, label)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_dialect_accepts_its_own_call_form_and_only_the_forms_it_lists(dialect: Dialect) -> None:
    spec = SPECS[dialect]
    assert dialect in spec.forms
    assert spec.forms <= set(DIALECTS)
    for other in DIALECTS:
        example = SPECS[other].example_action
        form = parse_turn(example).dialect  # the call form, as read with no dialect chosen
        assert form is not None
        accepted = parse_turn(example, dialect).kind == "action"
        assert accepted == (form in spec.forms), (dialect, other)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_rendered_prompt_carries_the_format_and_the_tool_lines(dialect: Dialect) -> None:
    spec = SPECS[dialect]
    tools = builtin_tools()
    prompt = render_prompt(DEFAULT_TEMPLATE, tools, dialect)
    assert spec.format in prompt
    for tool in tools:
        line = spec.tool_line.format(
            name=tool.name,
            Name=tool.name.capitalize(),
            hint=tool.input_hint,
            description=tool.description,
        )
        assert line in prompt.splitlines()


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_engines_observation_labels_are_cut_and_stopped(dialect: Dialect) -> None:
    """A model that copies the engine's observation label must be cut, and stopped at it."""
    spec = SPECS[dialect]
    for template in (spec.observation_label, spec.tool_observation_label):
        label = template.format(step=3, tool="search")
        found = match_label(label + " 5")
        assert found is not None
        assert found.label == "observation", label
        assert any(("\n" + label).startswith(stop) for stop in STOP_SEQUENCES), label


def _parser_label(line: str) -> Label | None:
    """Which label ``parse_turn`` reads on ``line``, found by what it does with the line."""
    head = line[: match.end] if (match := match_label(line)) else line
    t = parse_turn(head + "calculator[1 + 1]")
    if t.dropped:
        return "observation"
    if t.kind in ("action", "answer"):
        return t.kind
    if t.thought is not None:
        return "thought"
    if parse_turn(f"Action: search\n{head}q").input == "q":
        return "action input"
    return None


def _scanner_cuts(line: str) -> bool:
    """Whether the scanner cuts at ``line``, fed one character at a time as a stream might."""
    scanner = TurnScanner()
    for ch in "Action: calculator[1 + 1]\n" + line:
        scanner.feed(ch)
    scanner.finish()
    return scanner.observation_started


@pytest.mark.parametrize(("line", "label"), LABEL_LINES)
def test_parser_scanner_and_label_role_agree_on_every_label_line(
    line: str, label: Label | None
) -> None:
    found = match_label(line)
    assert (found.label if found else None) == label
    assert _parser_label(line) == label
    assert _scanner_cuts(line) == (label == "observation")
    assert label_role(line) == ("action" if label == "action input" else label)


def test_every_label_has_a_role() -> None:
    labels = {label for _, label in LABEL_LINES if label is not None}
    assert {"action" if lb == "action input" else lb for lb in labels} == set(LABEL_ROLES)


def test_a_note_marks_only_an_observation() -> None:
    """Notes in parentheses are the engine's ("Observation (search):"). The parser never took
    "Action (x):" for a directive; the highlighter and CLI still colour it as an action."""
    found = match_label("Action (draft): calculator[1 + 1]")
    assert found is not None
    assert (found.label, found.noted) == ("action", True)
    assert parse_turn("Action (draft): calculator[1 + 1]").kind == "none"
    assert label_role("Action (draft): calculator[1 + 1]") == "action"


def test_label_match_reports_numbers_and_where_the_body_starts() -> None:
    line = "**Action 2:** search[x]"
    found = match_label(line)
    assert found is not None
    assert (found.label, found.numbered, found.noted) == ("action", True, False)
    assert line[found.end :] == "search[x]"
