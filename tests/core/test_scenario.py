"""Scenario files: built-ins load, bad files give one clear line, saving is atomic."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from sandbox_app.application.workspace import Workspace
from sandbox_app.backends.catalogue.keys import CUSTOM_KEY_ENV, KeyStore, account_for
from sandbox_app.backends.catalogue.presets import CUSTOM
from sandbox_app.backends.registry import config_for, server_config
from sandbox_app.core.scenarios.document import ScenarioDocument
from sandbox_app.core.scenarios.scenario import LaneConfig, Scenario
from sandbox_app.core.scenarios.scenario_fields import ScenarioError
from sandbox_app.core.scenarios.scenario_file import (
    SaveRefused,
    builtin_scenarios,
    load_scenario,
    save_scenario,
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

    real_open = os.open

    def denied(name: str | Path, flags: int, *args: int) -> int:
        # chmod 000 is no obstacle to root (CI runs as root), so deny the open itself.
        if Path(name) == path:
            raise PermissionError(13, "Permission denied", str(name))
        return real_open(name, flags, *args)

    monkeypatch.setattr(os, "open", denied)
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


def test_a_saved_scenario_never_holds_a_real_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Real secrets, live in this process the ways a run finds them: the environment, a key
    # remembered this session, a key typed for one lane.
    env_key, typed_key, stored_key = "sk-env-7Hq2", "sk-typed-9Xw4", "sk-stored-3Lp8"
    monkeypatch.setenv("OPENAI_API_KEY", env_key)
    monkeypatch.delenv(CUSTOM_KEY_ENV, raising=False)
    keys = KeyStore()
    typed_url, stored_url = "http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1"
    keys.save(account_for(CUSTOM, stored_url), stored_key)  # no keyring in tests: this session
    lanes = (
        LaneConfig("openai", "", "gpt-4o-mini"),
        LaneConfig("custom", typed_url, "qwen"),
        LaneConfig("custom", stored_url, "llama"),
    )
    resolved = [
        server_config(
            config_for(lane.backend, lane.base_url, lane.model, typed_key=typed), keys
        ).api_key
        for lane, typed in zip(lanes, ["", typed_key, ""], strict=True)
    ]
    assert resolved == [env_key, typed_key, stored_key]  # each lane's run would send its key

    workspace = Workspace()
    workspace.show(ScenarioDocument(Scenario(title="Keys", lanes=lanes)))
    workspace.save(tmp_path / "saved.json")
    workspace.update(None, question="An edit kept at close")
    kept = workspace.keep()
    assert kept is not None
    (tmp_path / "kept.json").write_text(kept.to_json(), encoding="utf-8")

    assert {p.name for p in tmp_path.iterdir()} == {"saved.json", "kept.json"}
    for path in tmp_path.iterdir():
        written = path.read_bytes()
        for secret in (env_key, typed_key, stored_key):
            assert secret.encode() not in written, f"{secret} written to {path.name}"
    assert load_scenario(tmp_path / "saved.json").lanes == lanes  # the lanes themselves are kept


def test_saving_keeps_the_files_permissions(tmp_path: Path) -> None:
    path = tmp_path / "shared.json"
    save_scenario(Scenario(title="new"), path)
    assert path.stat().st_mode & 0o777 == 0o644  # not mkstemp's private 0600
    path.chmod(0o664)
    save_scenario(Scenario(title="again"), path)
    assert path.stat().st_mode & 0o777 == 0o664


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "windows.json"
    path.write_bytes(b'\xef\xbb\xbf{"version": 1, "title": "Saved by Notepad"}')
    assert load_scenario(path).title == "Saved by Notepad"


def test_deeply_nested_json_is_one_line_not_a_recursion_traceback(tmp_path: Path) -> None:
    path = tmp_path / "nested.json"
    path.write_text('{"version": 1, "title": ' + "[" * 1500 + "]" * 1500 + "}")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value) == "nested.json nests its JSON too deeply to be a scenario."


NONSENSE_VALUES = {
    '"model": {"temperature": NaN}': '"model.temperature" must be a number (got NaN)',
    '"model": {"temperature": Infinity}': '"model.temperature" must be a number',
    '"model": {"temperature": 7}': '"model.temperature" must be from 0 to 2 (got 7)',
    '"model": {"max_tokens": 0}': '"model.max_tokens" must be from 1 to 200000 (got 0)',
    '"model": {"top_p": 1.5}': '"model.top_p" must be from 0 to 1 (got 1.5)',
    '"script": {"tokens_per_second": -5}': '"script.tokens_per_second" must be at least 0',
    '"expected": {"answer": "1", "tolerance": -1}': '"expected.tolerance" must be at least 0',
    '"lanes": [{"max_tokens": -3}]': '"lanes[0].max_tokens" must be from 1 to 200000 (got -3)',
    '"lanes": [{"temperature": NaN}]': '"lanes[0].temperature" must be a number (got NaN)',
    '"lanes": [{}, {}, {}, {}, {}]': '"lanes" holds 5 lanes; a comparison has at most 4.',
    '"model": {"reasoning_effort": "extreme"}': (
        '"model.reasoning_effort" must be one of none, minimal, low, medium, high, xhigh or null'
    ),
    '"lanes": [{"reasoning_effort": 3}]': '"lanes[0].reasoning_effort" must be text (got 3)',
    '"lanes": [{"tool_calling": "json"}]': (
        '"lanes[0].tool_calling" must be "react" or "native" (got "json")'
    ),
}


@pytest.mark.parametrize("field", list(NONSENSE_VALUES))
def test_values_that_make_no_sense_are_refused_naming_the_field(tmp_path: Path, field: str) -> None:
    path = tmp_path / "odd.json"
    path.write_text('{"version": 1, ' + field + "}")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value).startswith(f"odd.json: {NONSENSE_VALUES[field]}")
    assert "\n" not in str(info.value)


def test_max_tokens_auto_and_reasoning_effort_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "thinking.json"
    path.write_text(
        '{"version": 1, "model": {"max_tokens": null, "reasoning_effort": "low"},'
        ' "lanes": [{"max_tokens": 4096, "reasoning_effort": "high"}, {}]}'
    )
    scenario = load_scenario(path)
    assert (scenario.model.max_tokens, scenario.model.reasoning_effort) == (None, "low")
    lanes = [(lane.settings.max_tokens, lane.settings.reasoning_effort) for lane in scenario.lanes]
    assert lanes == [(4096, "high"), (None, None)]  # a missing field is Auto / the server's
    save_scenario(scenario, tmp_path / "again.json")
    assert load_scenario(tmp_path / "again.json") == scenario
    # Files from before Auto keep the number they hold: it was the user's.
    old = tmp_path / "old.json"
    old.write_text('{"version": 1, "model": {"max_tokens": 512}}')
    assert load_scenario(old).model.max_tokens == 512


def test_tool_calling_round_trips_and_defaults_to_react(tmp_path: Path) -> None:
    path = tmp_path / "native.json"
    path.write_text(
        '{"version": 1, "model": {"tool_calling": "native"},'
        ' "lanes": [{"tool_calling": "native"}, {}]}'
    )
    scenario = load_scenario(path)
    assert scenario.model.tool_calling == "native"
    assert [lane.settings.tool_calling for lane in scenario.lanes] == ["native", "react"]
    save_scenario(scenario, tmp_path / "again.json")
    assert load_scenario(tmp_path / "again.json") == scenario


def test_zero_tokens_per_second_still_means_instant(tmp_path: Path) -> None:
    path = tmp_path / "instant.json"
    path.write_text('{"version": 1, "script": {"tokens_per_second": 0}}')
    assert load_scenario(path).script.tokens_per_second == 0


def test_saving_through_a_symbolic_link_writes_the_target_and_keeps_the_link(
    tmp_path: Path,
) -> None:
    target = tmp_path / "real" / "scenario.json"
    target.parent.mkdir()
    save_scenario(Scenario(title="old"), target)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    save_scenario(Scenario(title="new"), link)
    assert link.is_symlink()
    assert load_scenario(target).title == "new"
    assert sorted(p.name for p in target.parent.iterdir()) == ["scenario.json"]


def test_a_read_only_file_is_refused_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "frozen.json"
    save_scenario(Scenario(title="keep me"), path)
    path.chmod(0o444)
    with pytest.raises(SaveRefused) as info:
        save_scenario(Scenario(title="overwrite"), path)
    assert str(info.value) == "frozen.json is read-only; use Save as to write a copy."
    assert load_scenario(path).title == "keep me"
    assert path.stat().st_mode & 0o777 == 0o444


def test_lanes_from_files_written_before_backend_ids_read_as_ids(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    labels = ["Scripted (offline)", "Custom URL", "LM Studio", "llama.cpp", "OpenAI", "vLLM"]
    ids = []
    for first in range(0, len(labels), 3):  # at most four lanes a file
        lanes = ", ".join(f'{{"backend": "{label}"}}' for label in labels[first : first + 3])
        path.write_text('{"version": 1, "lanes": [' + lanes + "]}")
        ids += [lane.backend for lane in load_scenario(path).lanes]
    assert ids == ["scripted", "custom", "lmstudio", "llamacpp", "openai", "vllm"]
