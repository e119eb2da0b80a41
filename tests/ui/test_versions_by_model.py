"""The Versions tab by model (issue 34, item 6): a version's runs and pass rate per model,
never pooled, counted from the history database — the window's runs, a test set's, and
``react-sandbox run`` and ``eval``'s — shown after Refresh."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from sandbox_app.core.results.eval_result import EvalResult
from sandbox_app.core.scenarios.scenario import EvalCase, Expected
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir
from sandbox_app.ui.versions.versions_panel import VersionsPanel
from sandbox_app.ui.window.main_window import MainWindow
from tests.ui.test_versions_panel import rows, run_and_wait


def open_variants(window: MainWindow, tmp_path: Path) -> Path:
    """prompt_variants.json with four cases, saved and opened: "brief" guesses $2,160,
    "grounded" looks the price up ($2,592); the editor holds "grounded"."""
    scenario = load_scenario(scenarios_dir() / "prompt_variants.json")
    cases = tuple(
        EvalCase(scenario.question, Expected(answer))
        for answer in ("2,592", "per year", "2,160", "€ nothing")
    )
    path = tmp_path / "variants.json"
    fast = replace(scenario.script, tokens_per_second=0)
    save_scenario(replace(scenario, test_set=cases, script=fast), path)
    window.files.open_scenario(path)
    return path


def versions_tab(qtbot: QtBot, window: MainWindow) -> VersionsPanel:
    panel = window.prompt_panel.versions
    window.prompt_panel.show_versions()
    qtbot.waitUntil(panel.isVisible, timeout=2000)
    return panel


def by_version(panel: VersionsPanel, name: str) -> list[list[str]]:
    """A version's rows as (model, runs, pass)."""
    return [r[3:6] for r in rows(panel) if r[1] == name]


def cli(*argv: str) -> None:
    """``react-sandbox`` in a process of its own, as from a terminal beside the window."""
    command = [sys.executable, "-m", "sandbox_app", *argv]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def result(lane: str, case: int, passed: bool, version: str) -> EvalResult:
    return EvalResult.from_dict(
        {"lane": lane, "case": case, "repeat": 0, "passed": passed, "prompt_version": version}
    )


def test_a_version_run_on_three_models_shows_three_rows_with_their_own_figures(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    open_variants(window, tmp_path)
    run_and_wait(qtbot, window)  # the Run tab, offline, on "grounded": right twice
    run_and_wait(qtbot, window)
    grounded = next(
        e for e in window.workspace.model.scenario.prompt_history if e.name == "grounded"
    )
    # A test set on two models, 4 of 5 right on each (the window's or eval's, alike).
    store = window.history.current().store
    assert store is not None
    evaluation = store.begin_evaluation(
        "Variants", "", {"A": "good-7b", "B": "sloppy-3b"}, 5, 1, "eval"
    )
    for lane, model in (("A", "good-7b"), ("B", "sloppy-3b")):
        for case in range(5):
            store.add_result(evaluation, result(lane, case, case != 2, grounded.id), [], model)
    panel = versions_tab(qtbot, window)
    qtbot.mouseClick(panel.refresh_button, Qt.MouseButton.LeftButton)
    # Pooled, grounded was 10/12; per model it is three rows, the most run first.
    assert by_version(panel, "grounded") == [
        ["good-7b", "5", "4/5 (80%)"],
        ["sloppy-3b", "5", "4/5 (80%)"],
        ["scripted", "2", "2/2 (100%)"],
    ]
    assert by_version(panel, "brief") == [["—", "0", "—"]]  # never run
    assert rows(panel)[0][2] == grounded.short  # the name first, the id beside it
    panel.select(grounded.id)  # a version is selected whole, whichever row
    assert [e.id for e in panel.selected()] == [grounded.id]
    assert len(panel.list.selectedItems()) == 3


def test_a_cli_eval_and_run_of_a_version_show_after_refresh(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    path = open_variants(window, tmp_path)
    panel = versions_tab(qtbot, window)
    assert by_version(panel, "brief") == [["—", "0", "—"]]
    store = window.history.current().store
    assert store is not None
    db = str(store.path)
    cli("run", str(path), "--prompt", "brief", "--db", db)  # $2,160: wrong
    out = str(tmp_path / "brief.jsonl")
    cli("eval", str(path), "--lane", "scripted", "--prompt", "brief", "--out", out, "--db", db)
    assert by_version(panel, "brief") == [["—", "0", "—"]]  # read when asked, not polled
    qtbot.mouseClick(panel.refresh_button, Qt.MouseButton.LeftButton)
    # The run (wrong) and the test set's four cases (2 right): 2 of 5 on the offline model.
    assert by_version(panel, "brief") == [["scripted", "5", "2/5 (40%)"]]


def test_a_run_with_no_answer_to_check_is_counted_when_it_ends(
    qtbot: QtBot, window: MainWindow
) -> None:
    # No expected answer: the run changes no pass rate, yet it is a run of its version.
    scenario = load_scenario(scenarios_dir() / "prompt_variants.json")
    window.set_scenario(replace(scenario, expected=None))  # replies paced: ~2 s a run
    panel = versions_tab(qtbot, window)
    run_and_wait(qtbot, window)
    qtbot.waitUntil(lambda: by_version(panel, "grounded") == [["scripted", "1", "—"]])
