"""Regexes from files cannot freeze the app: a mock tool's regex rule and a ``regex`` expected
answer, on patterns that backtrack for minutes in Python's ``re`` (``^(a+)+$`` froze the
window for 6.6 s on 28 characters), are answered at once, or stopped at their time limit and
said so in one line; a pattern that cannot be used is refused in one line when the file is
read."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from sandbox_app.core.results.compare import LaneRecord
from sandbox_app.core.results.verdict import COULD_NOT_CHECK, matches, verdict
from sandbox_app.core.running.events import RunFinished
from sandbox_app.core.running.metrics import RunMetrics
from sandbox_app.core.scenarios.scenario import Expected
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.scenario_file import load_scenario
from sandbox_app.core.scenarios.test_set import import_cases
from sandbox_app.core.tools import ToolRouter
from sandbox_app.core.tools.mock import CannedRule, MockTool, MockToolSpec
from sandbox_app.core.untrusted import safe_regex

FORTY = "a" * 40 + "!"  # no match possible: a backtracking engine tries every split
NESTED = r"^(a+)+$"  # the issue's pattern
ALTERNATING = r"^(a|aa)+$"  # one no engine shortcut saves: it runs to the time limit
TOO_SLOW = "the pattern took longer than 0.1 s on this text and was stopped"


def observe(rules: tuple[CannedRule, ...], text: str) -> str:
    tool = MockTool(MockToolSpec("lookup", "Looks up.", rules=rules, default="no rule matched"))

    async def run() -> str:
        return (await ToolRouter([tool]).run_tool("lookup", text)).text

    return asyncio.run(run())


def test_the_issues_pattern_on_40_characters_gets_its_answer() -> None:
    rules = (CannedRule(NESTED, "all a", "regex"),)
    assert observe(rules, FORTY) == "no rule matched"
    assert observe(rules, "a" * 40) == "all a"


def test_a_pattern_that_runs_away_is_one_error_observation() -> None:
    rules = (CannedRule(ALTERNATING, "all a", "regex"), CannedRule("a", "never reached"))
    assert observe(rules, FORTY) == (
        f"Error: lookup's rule '^(a|aa)+$' could not be matched: {TOO_SLOW}."
    )


def test_regex_rules_keep_pythons_syntax() -> None:
    rules = (
        CannedRule(r"(?<=city: )(\w+) \1", "a doubled city", "regex"),
        CannedRule(r"^\w+$", "one word", "regex"),
    )
    assert observe(rules, "city: Oslo Oslo") == "a doubled city"
    assert observe(rules, "Zürich") == "one word"  # \w is Unicode, as in re


def test_an_expected_answer_that_runs_away_could_not_be_checked() -> None:
    expected = Expected(ALTERNATING, "regex")
    assert verdict(FORTY, expected) == COULD_NOT_CHECK
    assert matches(FORTY, expected) is False  # never counted as a pass
    assert verdict("AAAA", expected) is True  # case-insensitive, as before
    assert verdict(FORTY, Expected(NESTED, "regex")) is False


def test_the_comparison_table_says_could_not_check() -> None:
    lane = LaneRecord("A", "m")
    lane.history.start().add([RunFinished("answered", "", FORTY, RunMetrics())])
    row = lane.summary(Expected(ALTERNATING, "regex"), None)
    assert row["Correct"] == "could not check"
    assert row["Pass rate"] == "0% (0/1)"


UNUSABLE = {
    "(": "is not a valid regex: missing ), unterminated subpattern at position 0",
    # Compiles in re at once, but the regex module's compiler multiplies it out for minutes.
    "(((a{100}){100}){100}){100}": "repeats too much: its repetitions multiply out to",
    "x" * 1001: "is longer than 1,000 characters (1,001)",
}


@pytest.mark.parametrize("pattern", list(UNUSABLE))
def test_a_mock_tool_pattern_that_cannot_be_used_is_one_line_when_the_file_is_read(
    tmp_path: Path, pattern: str
) -> None:
    path = tmp_path / "bad.json"
    rule = {"match": "regex", "pattern": pattern}
    path.write_text(
        '{"version": 1, "tools": {"custom": [{"name": "w", "description": "x", "rules": ['
        + json.dumps(rule)
        + "]}]}}"
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    message = str(info.value)
    assert f'"tools.custom[0].rules[0].pattern" {UNUSABLE[pattern]}' in message
    assert "\n" not in message


@pytest.mark.parametrize("pattern", list(UNUSABLE))
def test_an_expected_answer_pattern_that_cannot_be_used_is_one_line_when_read(
    tmp_path: Path, pattern: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(
        '{"version": 1, "expected": ' + json.dumps({"answer": pattern, "match": "regex"}) + "}"
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert f'"expected.answer" {UNUSABLE[pattern]}' in str(info.value)
    assert "\n" not in str(info.value)


def test_a_test_set_case_with_an_unusable_pattern_names_its_row() -> None:
    text = 'question,answer,match\nWhat?,"(",regex\n'
    with pytest.raises(ScenarioError) as info:
        import_cases(text, "csv")
    assert str(info.value) == (
        'row 2: "expected.answer" is not a valid regex: '
        "missing ), unterminated subpattern at position 0."
    )


def test_the_helper_says_why_in_one_line() -> None:
    with pytest.raises(safe_regex.MatchTooSlow, match=TOO_SLOW):
        safe_regex.search(ALTERNATING, FORTY)
    assert safe_regex.search(r"\b5\s+(working\s+)?days", "take 5 working days")
    assert safe_regex.search("PARIS", "paris", ignore_case=True)
    assert not safe_regex.search("PARIS", "paris")
