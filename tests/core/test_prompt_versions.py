"""Prompt versions: a content-addressed id, the history a run adds to (capped, stars kept),
finding a version, the word diff, and the history in the scenario file."""

from __future__ import annotations

import json
import random
import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sandbox_app.application.run_builder import RunSpec
from sandbox_app.backends.registry import SCRIPTED, config_for
from sandbox_app.core.react_format.prompts import DEFAULT_TEMPLATE
from sandbox_app.core.running.records import RunSettings
from sandbox_app.core.scenarios.prompt_diff import diff_versions, inline, word_diff
from sandbox_app.core.scenarios.prompt_versions import (
    MAX_HISTORY,
    PromptEntry,
    PromptVersion,
    ToolText,
    VersionError,
    find,
    record,
)
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.scenario_file import (
    builtin_scenarios,
    load_scenario,
    save_scenario,
    scenario_to_dict,
)
from sandbox_app.core.tools.mock import MockToolSpec

T0 = datetime(2025, 1, 31, 9, 30, tzinfo=UTC)
CALC = ToolText("calculator", "exact arithmetic", "expression")
SEARCH = ToolText("search", "search the documents", "query")


def version(template: str = "Solve it.\n{tools}\n{format}", **changes: object) -> PromptVersion:
    base = PromptVersion(template, "bracket", (CALC, SEARCH), "react")
    return replace(base, **changes)  # type: ignore[arg-type]


def spec_version(scenario: Scenario) -> PromptVersion:
    return RunSpec(scenario, config_for(SCRIPTED)).prompt_version


# ---- the version and its id ------------------------------------------------------------------


def test_the_id_is_the_sha256_of_the_words_and_changes_with_any_of_them() -> None:
    v = version()
    assert re.fullmatch(r"[0-9a-f]{64}", v.id)
    assert v.short == v.id[:8]
    assert version().id == v.id  # the same words: the same id, whenever made
    others = [
        version("Solve it carefully.\n{tools}\n{format}"),
        version(dialect="paren"),
        version(tool_calling="native"),
        version(tools=(CALC,)),
        version(tools=(SEARCH, CALC)),
        version(tools=(replace(CALC, description="arithmetic"), SEARCH)),
        version(tools=(replace(CALC, input_hint="sum"), SEARCH)),
    ]
    assert len({v.id, *(o.id for o in others)}) == 1 + len(others)


def test_a_runs_version_is_its_template_dialect_tools_and_its_lanes_tool_calling() -> None:
    scenario = Scenario(enabled_tools=("calculator",), dialect="paren")
    v = spec_version(scenario)
    assert v.template == DEFAULT_TEMPLATE  # None written out: the default is what is sent
    assert (v.dialect, v.tool_names, v.tool_calling) == ("paren", ("calculator",), "react")
    native = scenario.with_changes(model=scenario.model.replace(tool_calling="native"))
    assert spec_version(native).tool_calling == "native"
    # The question is not part of it: asking another question is the same prompt.
    assert spec_version(scenario.with_changes(question="Another?")) == v
    # Every run record carries it (the window, lanes, run --json and eval read it there).
    settings = RunSpec(scenario, config_for(SCRIPTED)).record_settings()
    assert settings.prompt_version == v.id
    round_trip = RunSettings.from_dict(json.loads(json.dumps(settings.to_dict())), "settings")
    assert round_trip.prompt_version == v.id
    assert RunSettings.from_dict({"model": "old"}, "settings").prompt_version == ""


def test_with_prompt_gives_back_what_the_version_says() -> None:
    own = MockToolSpec("weather", "the weather today", "city")
    scenario = Scenario(custom_tools=(own,), enabled_tools=("calculator", "weather"))
    first = spec_version(scenario)
    edited = scenario.with_changes(
        system_prompt="Be brief.\n{tools}\n{format}",
        dialect="paren",
        enabled_tools=("search",),
        custom_tools=(replace(own, description="rain or shine"),),
        model=scenario.model.replace(tool_calling="native"),
    )
    assert spec_version(edited) != first
    back = edited.with_prompt(first)
    assert spec_version(back) == first
    assert back.system_prompt is None
    assert back.custom_tools[0].description == "the weather today"


# ---- the history ---------------------------------------------------------------------------


def test_a_version_that_differs_from_the_last_is_added_the_same_one_counts_runs() -> None:
    a, b = version("A {tools} {format}"), version("B {tools} {format}")
    history = record((), a, T0)
    history = record(history, a, T0 + timedelta(minutes=1), runs=3)
    assert [(e.id, e.runs) for e in history] == [(a.id, 4)]
    assert history[0].time == T0
    assert history[0].last_used == T0 + timedelta(minutes=1)
    history = record(history, b, T0 + timedelta(minutes=2))
    assert [e.id for e in history] == [a.id, b.id]


def test_a_return_to_an_older_version_moves_its_entry_last_with_its_name_and_star() -> None:
    a, b = version("A {tools} {format}"), version("B {tools} {format}")
    history = record(record((), a, T0), b, T0)
    history = (replace(history[0], name="first", starred=True, note="worked"), history[1])
    history = record(history, a, T0 + timedelta(hours=1))
    assert [e.id for e in history] == [b.id, a.id]  # one entry per id, never two
    back = history[-1]
    assert (back.name, back.starred, back.note, back.runs) == ("first", True, "worked", 2)
    assert back.time == T0  # when it was first run


def test_the_history_keeps_the_last_200_and_every_starred_one() -> None:
    history: tuple[PromptEntry, ...] = ()
    for i in range(MAX_HISTORY + 50):
        history = record(history, version(f"v{i} {{tools}} {{format}}"), T0 + timedelta(i))
        if i in (3, 10):
            history = (*history[:-1], replace(history[-1], starred=True))
    templates = [e.version.template.split()[0] for e in history]
    assert len(history) == MAX_HISTORY
    assert templates[:2] == ["v3", "v10"]  # starred, older than every other kept one
    assert templates[2] == f"v{50 + 2}"
    assert templates[-1] == f"v{MAX_HISTORY + 49}"


def test_find_by_id_prefix_or_name_and_one_line_for_none_or_several() -> None:
    history: tuple[PromptEntry, ...] = ()
    for i in range(40):  # enough for two ids to share a first hex digit
        history = record(history, version(f"v{i} {{tools}} {{format}}"), T0)
    history = (replace(history[0], name="Concise"), *history[1:])
    assert find(history, history[5].short) == history[5]
    assert find(history, history[5].id.upper()) == history[5]
    assert find(history, "concise") == history[0]
    first = history[0].id[0]
    shared = [e for e in history if e.id.startswith(first)]
    with pytest.raises(VersionError) as ambiguous:
        find(history, first)
    assert f"matches {len(shared)} prompt versions" in str(ambiguous.value)
    with pytest.raises(VersionError) as missing:
        find(history, "nope")
    assert "no prompt version 'nope'" in str(missing.value)
    for err in (ambiguous.value, missing.value):
        assert "\n" not in str(err)
    with pytest.raises(VersionError, match="no history yet"):
        find((), "abc")


# ---- the diff ------------------------------------------------------------------------------


def test_the_word_diff_marks_exactly_the_changed_words() -> None:
    old = "Answer briefly.\nUse the tools: {tools}\n{format}"
    new = "Answer carefully and briefly.\nUse the tools: {tools}\n{format}"
    pieces = word_diff(old, new)
    assert inline(pieces) == ("Answer {+carefully and +}briefly.\nUse the tools: {tools}\n{format}")
    changed = [(p.op, p.text) for p in pieces if p.op != "same"]
    assert changed == [("added", "carefully and ")]
    replaced = inline(word_diff("Be quick now", "Be careful now"))
    assert replaced == "Be [-quick-]{+careful+} now"


def test_the_diff_covers_tool_words_and_names_the_other_changes() -> None:
    old = version()
    new = replace(
        old,
        dialect="paren",
        tool_calling="native",
        tools=(replace(CALC, description="exact arithmetic only"), ToolText("weather", "w", "c")),
    )
    diff = diff_versions(old, new)
    assert diff.named == (
        "dialect: bracket → paren",
        "tool calling: react → native",
        "tool removed: search",
        "tool added: weather",
    )
    assert [(p.label, inline(p.pieces)) for p in diff.changed_parts] == [
        ("calculator: description", "exact arithmetic{+ only+}")
    ]
    assert diff.changed_parts[0].side("old") == "exact arithmetic"
    assert diff_versions(old, old).same


# ---- the file ------------------------------------------------------------------------------


def test_the_history_round_trips_through_the_file(tmp_path: Path) -> None:
    history = record(record((), version("A {tools} {format}"), T0), version(), T0)
    history = (replace(history[0], name="first", note="línea\nzwei", starred=True), history[1])
    scenario = Scenario(prompt_history=history)
    save_scenario(scenario, tmp_path / "s.json")
    assert load_scenario(tmp_path / "s.json") == scenario
    saved = json.loads((tmp_path / "s.json").read_text("utf-8"))
    assert saved["prompt_history"][0]["id"] == history[0].id
    assert saved["prompt_history"][0]["time"] == "2025-01-31T09:30:00Z"


def test_a_file_without_history_opens_and_saves_as_before(tmp_path: Path) -> None:
    # The built-in examples without one (prompt_variants.json ships its two versions).
    paths = [p for p in builtin_scenarios() if "prompt_history" not in p.read_text("utf-8")]
    assert len(paths) >= 5
    for path in paths:
        scenario = load_scenario(path)
        assert scenario.prompt_history == ()
        written = scenario_to_dict(scenario)
        assert "prompt_history" not in written  # nothing new in a file that has none
        save_scenario(scenario, tmp_path / path.name)
        again = (tmp_path / path.name).read_bytes()
        save_scenario(load_scenario(tmp_path / path.name), tmp_path / path.name)
        assert (tmp_path / path.name).read_bytes() == again


BAD_HISTORY = {
    "not a list": ({"prompt_history": {}}, '"prompt_history" must be a list'),
    "entry": ({"prompt_history": [3]}, "prompt_history[0] must be a JSON object"),
    "dialect": (
        {"prompt_history": [{"dialect": "klingon", "time": "2025-01-01T00:00:00Z"}]},
        '"prompt_history[0].dialect" must be one of',
    ),
    "time": (
        {"prompt_history": [{"template": "x", "time": "yesterday"}]},
        '"prompt_history[0].time" must be a time',
    ),
    "no time": ({"prompt_history": [{"template": "x"}]}, '"prompt_history[0].time" is missing'),
    "runs": (
        {"prompt_history": [{"template": "x", "time": "2025-01-01T00:00:00Z", "runs": -1}]},
        '"prompt_history[0].runs" must be',
    ),
    "edited": (
        {"prompt_history": [{"id": "0" * 64, "template": "x", "time": "2025-01-01T00:00:00Z"}]},
        "edited by hand",
    ),
    "tool": (
        {"prompt_history": [{"tools": [{"name": 1}], "time": "2025-01-01T00:00:00Z"}]},
        '"prompt_history[0].tools[0].name" must be text',
    ),
}


@pytest.mark.parametrize("name", BAD_HISTORY)
def test_a_bad_history_is_one_line_naming_the_entry(name: str, tmp_path: Path) -> None:
    data, message = BAD_HISTORY[name]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"version": 1, **data}), "utf-8")
    before = path.read_bytes()
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert message in str(err.value)
    assert "\n" not in str(err.value)
    assert path.read_bytes() == before


def test_an_entry_given_twice_is_refused(tmp_path: Path) -> None:
    entry = {"template": "x", "time": "2025-01-01T00:00:00Z"}
    path = tmp_path / "twice.json"
    path.write_text(json.dumps({"version": 1, "prompt_history": [entry, entry]}), "utf-8")
    with pytest.raises(ScenarioError, match=r"prompt_history\[1\]\" repeats version"):
        load_scenario(path)


def test_each_side_of_a_diff_is_its_text_exactly() -> None:
    rng = random.Random(7)
    words = ["the", "tool", "Answer:", "  ", "\n", "{tools}", "brief", "é"]
    for _ in range(300):
        old = "".join(rng.choice(words) + rng.choice([" ", "", "\n"]) for _ in range(12))
        new = "".join(rng.choice(words) + rng.choice([" ", "", "\n"]) for _ in range(12))
        part = diff_versions(version(old), version(new)).parts[0]
        assert (part.side("old"), part.side("new")) == (old, new)
