"""Scenario files: built-ins load, bad files give one clear line, saving is atomic."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from sandbox_app.core.scenario import (
    Scenario,
    ScenarioError,
    builtin_scenarios,
    load_scenario,
    save_scenario,
    scenario_to_dict,
)


def test_builtin_scenarios_load() -> None:
    titles = {p.stem: load_scenario(p) for p in builtin_scenarios()}
    assert set(titles) >= {"brightgrid", "calculator_chain", "action_input", "failure_modes"}
    assert titles["brightgrid"].expected is not None
    assert titles["calculator_chain"].dialect == "paren"


def test_round_trip(tmp_path: Path) -> None:
    original = load_scenario(builtin_scenarios()[0]).with_changes(title="Mine", max_steps=7)
    save_scenario(original, tmp_path / "mine.json")
    assert load_scenario(tmp_path / "mine.json") == original


BAD_FILES = {
    "truncated.json": (b'{"version": 1, "title": "x', "is not valid JSON"),
    "types.json": (b'{"version": 1, "max_steps": "ten"}', '"max_steps" must be a whole number'),
    "tools.json": (
        b'{"version": 1, "tools": {"enabled": "calculator"}}',
        '"tools.enabled" must be a list',
    ),
    "unknown_tool.json": (b'{"version": 1, "tools": {"enabled": ["rm"]}}', "unknown tool 'rm'"),
    "version.json": (b'{"version": 99}', 'unknown "version" 99'),
    "no_version.json": (b'{"title": "x"}', 'unknown "version" None'),
    "list.json": (b"[1, 2]", "must be a JSON object"),
    "garbage.json": (bytes(range(256)) * 4, "not a text (UTF-8) file"),
    "steps.json": (b'{"version": 1, "max_steps": 500}', "from 1 to 50"),
    "bool.json": (b'{"version": 1, "max_steps": true}', '"max_steps" must be a whole number'),
}


@pytest.mark.parametrize("name", list(BAD_FILES))
def test_bad_file_gives_one_clear_line_and_is_never_modified(tmp_path: Path, name: str) -> None:
    content, expected = BAD_FILES[name]
    path = tmp_path / name
    path.write_bytes(content)
    before = hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    message = str(info.value)
    assert expected in message
    assert message.startswith(name)
    assert "\n" not in message
    assert (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns) == before


def test_huge_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as f:
        f.truncate(50 * 1024 * 1024)  # sparse: 50 MB that costs no disk
    with pytest.raises(ScenarioError, match=r"too large \(52\.4 MB\)"):
        load_scenario(path)


def test_directory_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="is a folder"):
        load_scenario(tmp_path)
    with pytest.raises(ScenarioError, match="does not exist"):
        load_scenario(tmp_path / "nope.json")


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "secret.json"
    path.write_text("{}")

    def denied(self: Path) -> bytes:
        # chmod 000 is no obstacle to root (CI runs as root), so deny the read itself.
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)
    with pytest.raises(ScenarioError, match=r"^Cannot read secret.json: permission denied\.$"):
        load_scenario(path)


def test_failed_save_leaves_the_old_file_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.json"
    save_scenario(Scenario(title="old"), path)
    before = path.read_bytes()

    def crash(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        save_scenario(Scenario(title="new"), path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]  # no temp file left behind


def test_scenario_never_holds_an_api_key() -> None:
    keys = str(scenario_to_dict(Scenario())).lower()
    assert "api_key" not in keys
    assert "apikey" not in keys


def test_saving_keeps_the_files_permissions(tmp_path: Path) -> None:
    path = tmp_path / "shared.json"
    save_scenario(Scenario(title="new"), path)
    assert path.stat().st_mode & 0o777 == 0o644  # not mkstemp's private 0600
    path.chmod(0o664)
    save_scenario(Scenario(title="again"), path)
    assert path.stat().st_mode & 0o777 == 0o664
