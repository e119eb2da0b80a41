"""The Test set tab says, under its grid, what ``react-sandbox eval`` says after its lane rows:
each two arms one factor apart compared, a prompt version by its name; a re-run replaces the
runs it repeats; the window's figures and the command line's are the same for the same
evaluation (issue 34: the same numbers in the window, ``eval --json`` and ``history diff``)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from pytestqt.qtbot import QtBot

from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.cli.main import main
from sandbox_app.core.scenarios.lane_settings import LaneSettings
from sandbox_app.core.scenarios.prompt_versions import find
from sandbox_app.core.scenarios.scenario import EvalCase, Expected, LaneConfig, Scenario
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir
from sandbox_app.ui.history.history_actions import database_path
from sandbox_app.ui.window.main_window import MainWindow
from tests.core.test_eval_within import report_table

# prompt_variants.json offline: "brief" guesses "About $2,160 per year", "grounded" looks the
# price up, "$2,592 per year". Cases 1-3 want the looked-up price, 4 any yearly price, 5 the
# guess: grounded rises on 3, falls on 1.
WANTED = ("2,592", "$2,592 per year", "2,592 per", "per year", "2,160")
SENTENCE = "no detectable difference between brief and grounded on scripted: +40 points"


def variants(tokens_per_second: float = 0) -> Scenario:
    base = load_scenario(scenarios_dir() / "prompt_variants.json")
    cases = tuple(EvalCase(base.question, Expected(answer)) for answer in WANTED)
    script = replace(base.script, tokens_per_second=tokens_per_second)
    return replace(base, test_set=cases, script=script)


def run_versions(
    qtbot: QtBot,
    window: MainWindow,
    which: str = "all",
    versions: tuple[str, ...] = (),
    tokens_per_second: float = 0,
    during: Callable[[], bool] = lambda: True,
) -> None:
    """The test set on offline lanes, one on each prompt version (by default brief and
    grounded); the scenario is set unless one is open already (``versions`` given)."""
    if not versions:
        window.set_scenario(variants(tokens_per_second))
    scenario = window.workspace.model.scenario
    compare = window.compare
    lanes = [
        LaneConfig(settings=LaneSettings(prompt=find(scenario.prompt_history, name).id))
        for name in versions or ("brief", "grounded")
    ]
    compare.set_lanes(tuple(lanes))
    window.tabs.setCurrentWidget(compare)
    compare.results_tabs.setCurrentIndex(1)
    panel = compare.eval_panel
    button = panel.run_button if which == "all" else panel.rerun_button
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.running, timeout=5000)
    qtbot.waitUntil(lambda: during() and panel.running, timeout=20000)
    qtbot.waitUntil(lambda: not panel.running, timeout=20000)


def test_the_verdict_is_said_while_the_runs_go_on(qtbot: QtBot, window: MainWindow) -> None:
    """The offline model at 200 tokens a second, one request at a time: ~3 s of runs, the
    verdict shown once a case has run on both versions, before the last run ends."""
    window.compare.eval_panel.concurrency_spin.setValue(1)
    label = window.compare.eval_panel.verdicts.label
    run_versions(qtbot, window, tokens_per_second=200, during=label.isVisible)
    assert label.text().startswith(SENTENCE)


def test_the_arms_verdict_shows_under_the_grid_and_a_rerun_replaces_its_runs(
    qtbot: QtBot, window: MainWindow
) -> None:
    run_versions(qtbot, window)
    panel = window.compare.eval_panel
    label = panel.verdicts.label
    assert label.isVisible()
    assert label.text().startswith(SENTENCE), label.text()
    assert "; detecting 10 points needs about" in label.text()
    before = label.text()
    # Re-run failed: the failed runs again (the offline model answers as before). Each
    # replaces its earlier result: still five cases, one run each, the same sentence.
    run_versions(qtbot, window, "failed")
    assert label.text() == before
    (comparison,) = panel.verdicts.comparisons
    moved = [(c.case + 1, c.a.text(), c.b.text()) for c in comparison.changes]
    assert moved == [(5, "1/1", "0/1"), (1, "0/1", "1/1"), (2, "0/1", "1/1"), (3, "0/1", "1/1")]


def test_one_version_compares_nothing_and_a_past_evaluation_shows_its_own(
    qtbot: QtBot, window: MainWindow
) -> None:
    run_versions(qtbot, window)  # #1: brief and grounded
    run_versions(qtbot, window, versions=("brief", "brief"))  # #2: one arm
    verdicts = window.compare.eval_panel.verdicts
    assert not verdicts.label.isVisible()
    assert verdicts.lines() == []
    # Open in grid: #1's verdict, counted from its rows in the history database.
    view = window.history.open_view()
    assert view.open_in_grid(1)
    assert verdicts.label.isVisible()
    assert verdicts.label.text().startswith(SENTENCE)
    view.close()


FIGURES = ("arms", "verdict", "difference_points", "ci95_points", "cases", "cases_better")


def test_the_windows_figures_are_the_command_lines(
    qtbot: QtBot,
    window: MainWindow,
    settings: QSettings,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_versions(qtbot, window)
    (shown,) = window.compare.eval_panel.verdicts.documents()
    # The same evaluation by `eval`: the same scenario, both versions on the offline model.
    path = tmp_path / "variants.json"
    save_scenario(variants(), path)
    db = str(database_path(settings))
    out = io.StringIO()
    argv = [str(path), "--prompt", "brief", "--prompt", "grounded", "--lane", "scripted"]
    argv += ["--out", str(tmp_path / "r.jsonl"), "--db", db, "--json"]
    # On a thread of its own: `eval` runs its own event loop, the window's is running here.
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(eval_command, argv, out).result(timeout=60) == 0
    (printed,) = json.loads(out.getvalue())["comparisons"]
    assert {k: shown[k] for k in FIGURES} == {k: printed[k] for k in FIGURES}
    assert shown["sentence"] == printed["sentence"]
    assert shown["sentence"].startswith(SENTENCE)
    # The window's HTML export: the same row as `eval --report`'s.
    table = report_table(window.compare.eval_panel.export_text("html"), "Arms compared")
    assert table[1][:2] == [printed["arms"], printed["sentence"]]
    # `history diff` pairs the window's arms with the command line's by what made them
    # (not by lane title: "Lane 1 · scripted" there, "scripted @ brief" here).
    capsys.readouterr()
    assert main(["history", "diff", "1", "2", "--db", db, "--json"]) == 0
    diff = json.loads(capsys.readouterr().out)
    assert (diff["only_a"], diff["only_b"]) == ([], [])
    assert [(c["verdict"], c["difference_points"]) for c in diff["comparisons"]] == [
        ("no detectable difference", 0.0)
    ] * 2
