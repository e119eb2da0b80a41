"""The scenario document: edits kept at close come back as what they were, never elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

from sandbox_app.core.scenarios.document import KeptEdits, ScenarioDocument
from sandbox_app.core.scenarios.scenario import Scenario
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir


def test_kept_edits_to_a_file_go_back_to_that_file_only(tmp_path: Path) -> None:
    path = tmp_path / "mine.json"
    save_scenario(Scenario(title="Mine", question="saved"), path)
    document = ScenarioDocument.open(path)
    kept = document.keep(document.saved.with_changes(question="edited"))
    assert kept is not None
    restored = KeptEdits.from_json(kept.to_json())
    assert restored is not None
    again, notice = ScenarioDocument.restore(restored)
    assert (again.path, again.saved.question, notice) == (path, "saved", "")
    assert restored.edited.question == "edited"


def test_untitled_edits_stay_untitled(tmp_path: Path) -> None:
    document = ScenarioDocument(Scenario(title="Untitled"))
    kept = document.keep(Scenario(title="Untitled", question="typed after New"))
    assert kept is not None
    restored = KeptEdits.from_json(kept.to_json())
    assert restored is not None
    again, _ = ScenarioDocument.restore(restored)
    assert again.path is None
    assert again.needs_name
    assert again.is_modified(restored.edited)


def test_an_entry_from_the_old_format_names_no_file_so_it_comes_back_untitled() -> None:
    # Version 1 stored only the scenario: guessing its file is how edits reached the wrong one.
    old = json.dumps({"version": 1, "title": "Calc", "question": "edited"})
    kept = KeptEdits.from_json(old)
    assert kept is not None
    assert (kept.path, kept.edited.question) == (None, "edited")


def test_edits_to_a_vanished_file_come_back_untitled_with_a_notice(tmp_path: Path) -> None:
    path = tmp_path / "gone.json"
    save_scenario(Scenario(title="Gone"), path)
    document = ScenarioDocument.open(path)
    kept = document.keep(document.saved.with_changes(question="still here"))
    assert kept is not None
    path.unlink()
    again, notice = ScenarioDocument.restore(kept)
    assert again.path is None
    assert notice.startswith("Your unsaved edits to gone.json are back, untitled")
    assert "\n" not in notice


def test_damaged_entries_are_ignored_not_raised() -> None:
    for text in ("{", "[]", '{"kept_edits": 2, "edited": 5}', "[" * 5000):
        assert KeptEdits.from_json(text) is None


def test_nothing_is_kept_without_edits_and_examples_are_never_overwritten(tmp_path: Path) -> None:
    example = ScenarioDocument.open(scenarios_dir() / "brightgrid.json")
    assert example.keep(example.saved) is None
    assert example.needs_name
    copy = tmp_path / "copy.json"
    example.save(example.saved.with_changes(question="mine"), copy)
    assert (example.path, example.needs_name) == (copy, False)
    assert load_scenario(copy).question == "mine"
