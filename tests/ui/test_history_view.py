"""View → History…: each test set run in the window is stored as it runs; Compare with… lists
exactly the runs that flipped between two evaluations, each one's two traces side by side;
Open in grid shows a past evaluation; a Run tab's run is stored; a damaged database is one
line in the status bar and the test set still runs."""

from __future__ import annotations

import io
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from pytestqt.qtbot import QtBot

from sandbox_app.cli.evaluating.eval_command import eval_command
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.scenarios.prompt_versions import find
from sandbox_app.core.scenarios.scenario import EvalCase, Expected, LaneConfig, Scenario
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir
from sandbox_app.ui.history.history_actions import database_path
from sandbox_app.ui.window.main_window import MainWindow
from tests.ui.test_eval_panel import cells
from tests.ui.test_eval_verdicts import run_versions, variants


def versions_scenario(version: str) -> Scenario:
    """Four cases: "brief" guesses $2,160, "grounded" searches and answers $2,592, so from
    brief to grounded case 1 flips fail → pass, case 3 pass → fail, 2 and 4 stay."""
    scenario = load_scenario(scenarios_dir() / "prompt_variants.json")
    cases = tuple(
        EvalCase(scenario.question, Expected(answer))
        for answer in ("2,592", "per year", "2,160", "€ nothing")
    )
    scenario = replace(
        scenario, test_set=cases, script=replace(scenario.script, tokens_per_second=0)
    )
    return scenario.with_prompt(find(scenario.prompt_history, version).version)


def run_test_set(qtbot: QtBot, window: MainWindow, version: str) -> None:
    window.set_scenario(versions_scenario(version))
    compare = window.compare
    compare.set_lanes((LaneConfig(), LaneConfig()))  # two offline lanes
    window.tabs.setCurrentWidget(compare)
    compare.results_tabs.setCurrentIndex(1)
    panel = compare.eval_panel
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(panel.results) == 8 and not panel.running, timeout=20000)


def test_the_trend_opens_wide_enough_to_read(
    qtbot: QtBot, window: MainWindow, settings: QSettings
) -> None:
    for _ in range(4):
        run_test_set(qtbot, window, "brief")
    view = window.history.open_view()
    qtbot.waitUntil(view.isVisible, timeout=2000)
    item = view.trend.item(0, 2)
    assert item is not None
    assert item.text() == "#1 50% → #2 50% → #3 50% → #4 50%"
    # The steps whole: the column as wide as its text, not cut at Qt's default width.
    assert view.trend.columnWidth(2) >= view.trend.fontMetrics().horizontalAdvance(item.text())


def test_compare_with_lists_exactly_the_flipped_runs(
    qtbot: QtBot, window: MainWindow, settings: QSettings
) -> None:
    run_test_set(qtbot, window, "brief")
    run_test_set(qtbot, window, "grounded")
    view = window.history.open_view()
    assert view.table.rowCount() == 2
    assert view.table.item(0, 2).text() == "Prompt variants: guess or look it up"  # type: ignore[union-attr]
    # Two lanes × four cases, two cases passing in both: the four cases' interval, not eight
    # runs', counted off the window's thread.
    rate = view.table.item(0, 6)
    assert rate is not None

    def counted() -> None:
        assert rate.text() == "50% (4/8, 95% CI 15%–85% by case, 4 cases)", rate.text()

    qtbot.waitUntil(counted, timeout=10_000)
    # The trend: each version × model, evaluation by evaluation.
    trend = [
        tuple(view.trend.item(r, c).text() for c in range(3))  # type: ignore[union-attr]
        for r in range(view.trend.rowCount())
    ]
    # Names first (the scenario's prompt history), ids second.
    assert trend == [
        ("brief (31bfb942)", "scripted", "#1 50%"),
        ("grounded (dc401975)", "scripted", "#2 50%"),
    ]
    view.select(1, 2)
    qtbot.mouseClick(view.compare_button, Qt.MouseButton.LeftButton)
    flips = view.flips
    assert flips is not None
    question = versions_scenario("brief").question
    # The two lanes are one arm (the same offline model and settings): its runs of a case are
    # counted together, k/N, and the arm is compared with itself a prompt version on, named.
    arms = "prompt brief → grounded, on scripted"
    assert flips.rows() == [
        (arms, "3", "2/2", "0/2", "-100 points", question),
        (arms, "1", "0/2", "2/2", "+100 points", question),
    ]
    summary = flips.summary.text()
    assert summary.startswith(f"{arms}: no detectable difference between brief and grounded")
    # A moved case's runs, side by side, read back from the database: it rose, so a run that
    # failed before beside one that passed after.
    flips.table.selectRow(1)
    qtbot.mouseClick(flips.traces_button, Qt.MouseButton.LeftButton)
    traces = flips.trace_diff
    assert traces is not None
    assert "About $2,160 per year" in traces.side_text(0)
    assert "calculator[18 * 12 * 12]" in traces.side_text(1)
    assert "$2,592 per year" in traces.side_text(1)
    traces.close()
    flips.close()
    # Open in grid: the first evaluation's results, though the scenario is at grounded now.
    view.select(1)
    qtbot.mouseClick(view.open_button, Qt.MouseButton.LeftButton)
    panel = window.compare.eval_panel
    qtbot.waitUntil(lambda: cells(window)[0] == ["fail", "fail"])
    assert cells(window) == [["fail", "fail"], ["pass", "pass"], ["pass", "pass"], ["fail", "fail"]]
    assert panel.status.text().startswith("#1 · ")
    view.close()
    # A restart: another window on the same settings sees the same history.
    assert database_path(settings) is not None
    store = HistoryStore(database_path(settings))  # type: ignore[arg-type]
    assert [row.runs for row in store.evaluations()] == [8, 8]


def test_run_tab_and_lane_runs_are_stored(
    qtbot: QtBot, window: MainWindow, settings: QSettings
) -> None:
    qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.controller.running and window.answer_label.text() != "")
    history = window.history.current()
    assert history.store is not None
    qtbot.waitUntil(lambda: len(history.store.runs()) == 1)  # type: ignore[union-attr]
    (run,) = history.store.runs()
    assert run[2] == "Run tab"
    assert run[5] == "answered"
    # Every compare lane's run too, named by its lane.
    compare = window.compare
    window.tabs.setCurrentWidget(compare)
    qtbot.mouseClick(compare.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(history.store.runs()) == 3)  # type: ignore[union-attr]
    assert sorted(r[2] for r in history.store.runs()) == ["Lane 1", "Lane 2", "Run tab"]


def test_a_damaged_database_is_one_line_and_the_test_set_runs(
    qtbot: QtBot, window_without_history: MainWindow, tmp_path: Path
) -> None:
    window = window_without_history
    run_test_set(qtbot, window, "brief")
    assert cells(window) == [["fail", "fail"], ["pass", "pass"], ["pass", "pass"], ["fail", "fail"]]
    message = window.statusBar().currentMessage()
    assert message.startswith("history off (")
    assert "not a history database" in message
    assert "\n" not in message
    view = window.history.open_view()
    assert view.table.rowCount() == 0
    assert view.problem.text() == message
    assert (tmp_path / "damaged.sqlite3").read_bytes() == b"\x00not a database" * 300  # untouched


def test_set_as_baseline_marks_it_and_compare_with_defaults_to_it(
    qtbot: QtBot, window: MainWindow, settings: QSettings, tmp_path: Path
) -> None:
    path = tmp_path / "variants.json"
    save_scenario(variants(), path)
    assert window.files.open_scenario(path)
    for version in ("brief", "grounded", "grounded"):  # #1, #2, #3: two lanes on it each
        run_versions(qtbot, window, versions=(version, version))
    view = window.history.open_view()
    view.select(1)
    qtbot.mouseClick(view.baseline_button, Qt.MouseButton.LeftButton)
    ids = [view.table.item(r, 0).text() for r in range(3)]  # type: ignore[union-attr]
    assert ids == ["3", "2", "1 · baseline"]
    assert view.selected() == [1]
    # Compare with… from #3: straight to its scenario's baseline, #1 (not a menu of all).
    view.select(3)
    qtbot.mouseClick(view.compare_button, Qt.MouseButton.LeftButton)
    flips = view.flips
    assert flips is not None
    assert flips.windowTitle() == "Evaluation #1 → #3"
    assert flips.summary.text().startswith(
        "prompt brief → grounded, on scripted: no detectable difference between brief and "
        "grounded on scripted: +40 points"
    )
    flips.close()
    # Marking another takes the mark from the first; `eval --baseline latest` on the same
    # file compares with the window's marked baseline (the window stores the file it ran).
    view.select(2)
    qtbot.mouseClick(view.baseline_button, Qt.MouseButton.LeftButton)
    ids = [view.table.item(r, 0).text() for r in range(3)]  # type: ignore[union-attr]
    assert ids == ["3", "2 · baseline", "1"]
    out = io.StringIO()
    argv = [str(path), "--prompt", "grounded", "--lane", "scripted", "--json", "--baseline"]
    argv += ["latest", "--out", str(tmp_path / "r.jsonl"), "--db", str(database_path(settings))]
    with ThreadPoolExecutor(1) as pool:  # `eval` runs its own event loop
        assert pool.submit(eval_command, argv, out).result(timeout=60) == 0
    assert json.loads(out.getvalue())["baseline"]["baseline"] == 2
