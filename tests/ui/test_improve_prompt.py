"""Improve prompt… and Generate cases… in the window (issue 35, items 1 and 2), on the offline
example (scripted target, reflection and case writer): the loop runs to the end with its
progress moving, every candidate lands in the Versions tab unstarred, the editor and the
starred versions stay as they are until Accept puts the winner in the editor (Undo takes it
back); Stop then Resume ends as an uninterrupted run does; generated cases are ticked into
the test set, duplicates flagged and unticked."""

from __future__ import annotations

import asyncio
import json
import shutil
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton
from pytestqt.qtbot import QtBot

from sandbox_app.application.optimizer import Optimizer
from sandbox_app.core.history.history_db import HistoryStore
from sandbox_app.core.scenarios.prompt_versions import edited
from sandbox_app.core.scenarios.scenario_file import load_scenario, scenarios_dir
from sandbox_app.ui.optimizing.cases_dialog import CasesDialog
from sandbox_app.ui.optimizing.improve_dialog import STOPPED, ImproveDialog
from sandbox_app.ui.optimizing.opening import OFFLINE
from sandbox_app.ui.window.main_window import MainWindow
from tests.ui.test_plain_text import HOSTILE, assert_plain_everywhere

DONE_S = 60_000  # ms: the whole offline loop (about 30 runs)


def open_example(window: MainWindow, tmp_path: Path) -> Path:
    path = tmp_path / "improve_offline.json"
    shutil.copy(scenarios_dir() / "improve_offline.json", path)
    window.set_scenario(load_scenario(path), path)
    return path


def click(qtbot: QtBot, button: QPushButton) -> None:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def open_improve(qtbot: QtBot, window: MainWindow) -> ImproveDialog:
    window.prompt_panel.show_versions()
    click(qtbot, window.prompt_panel.versions.improve_button)
    dialog = window.improving.dialog
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    return dialog


def test_the_loop_runs_to_the_end_and_only_accept_changes_the_editor(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    open_example(window, tmp_path)
    window.prompt_panel.template_edit.appendPlainText("Be brief.")  # words in no version yet
    template = window.prompt_panel.template()
    dialog = open_improve(qtbot, window)
    assert dialog.reflect_combo.currentText() == OFFLINE  # the example has written reflections
    assert dialog.arm_combo.currentText().startswith("Run tab")
    seen: list[int] = []
    dialog.progress.valueChanged.connect(seen.append)
    click(qtbot, dialog.start_button)
    assert dialog.running
    assert not dialog.start_button.isEnabled()
    qtbot.waitUntil(lambda: dialog.outcome is not None, timeout=DONE_S)
    outcome = dialog.outcome
    assert outcome is not None
    assert outcome.winner == 3
    assert outcome.better
    assert len(set(seen)) >= 5  # the runs counted up as they ended, not once at the end
    assert f"{outcome.runs} runs" in dialog.figures.text()
    assert "candidate 3, 100% of training cases" in dialog.figures.text()
    assert "better" in dialog.verdict.text()
    # Each candidate run is an unstarred version of the history, named and with its origin.
    entries = {e.name: e for e in window.workspace.model.scenario.prompt_history}
    assert {"opt1.2", "opt1.3"} <= set(entries)
    assert "opt1.1" not in entries  # refused: never run, never a version
    assert not entries["opt1.3"].starred
    assert entries["opt1.3"].note.startswith("optimize candidate 3: from ")
    shown = [
        item.text(1)
        for i in range(window.prompt_panel.versions.list.topLevelItemCount())
        if (item := window.prompt_panel.versions.list.topLevelItem(i)) is not None
    ]
    assert "opt1.3" in shown
    # The winner is shown as a diff beside its verdict; the editor has not moved.
    assert "never from memory" in " ".join(dialog.diff_view.marked("added"))
    assert window.prompt_panel.template() == template
    assert dialog.accept_button.isEnabled()
    click(qtbot, dialog.accept_button)
    winner = outcome.version(3)
    assert winner is not None
    assert window.prompt_panel.template() == winner.template
    assert "Edit → Undo" in dialog.status.text()
    window.undo_edit()
    assert window.prompt_panel.template() == template


def test_a_starred_version_and_the_editor_never_change_while_it_runs(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    open_example(window, tmp_path)
    model = window.workspace.model
    current = window.prompt_panel.versions.editor_version()
    from datetime import UTC, datetime

    from sandbox_app.core.scenarios.prompt_versions import record

    starred = edited(
        record((), current, datetime.now(UTC)),
        current.id,
        lambda e: replace(e, starred=True, name="mine"),
    )
    window.workspace.update(None, prompt_history=starred)
    template = window.prompt_panel.template()
    dialog = open_improve(qtbot, window)
    texts: list[str] = []
    dialog.progress.valueChanged.connect(lambda _v: texts.append(window.prompt_panel.template()))
    click(qtbot, dialog.start_button)
    qtbot.waitUntil(lambda: dialog.outcome is not None, timeout=DONE_S)
    assert set(texts) == {template}
    mine = next(e for e in model.scenario.prompt_history if e.name == "mine")
    assert mine == starred[0]


def test_stop_then_resume_ends_as_an_uninterrupted_run(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    open_example(window, tmp_path)
    dialog = open_improve(qtbot, window)
    stopped_at: list[int] = []

    def stop_midway(runs: int) -> None:
        if runs >= 8 and not stopped_at:  # in the middle of candidate 2's training
            stopped_at.append(runs)
            click(qtbot, dialog.stop_button)

    dialog.progress.valueChanged.connect(stop_midway)
    click(qtbot, dialog.start_button)
    qtbot.waitUntil(lambda: not dialog.running, timeout=DONE_S)
    assert stopped_at
    assert dialog.outcome is None
    assert dialog.status.text() == STOPPED
    assert dialog.resume_button.isEnabled()
    assert not dialog.accept_button.isEnabled()
    dialog.progress.valueChanged.disconnect(stop_midway)
    click(qtbot, dialog.resume_button)
    qtbot.waitUntil(lambda: dialog.outcome is not None, timeout=DONE_S)
    resumed = dialog.outcome
    assert resumed is not None
    # The same settings, never stopped, in a database of their own.
    assert dialog.setup is not None
    store = HistoryStore(tmp_path / "uninterrupted.sqlite3")
    try:
        task = asyncio.ensure_future(Optimizer(dialog.setup, store).run())
        qtbot.waitUntil(task.done, timeout=DONE_S)
        assert resumed.document() == task.result().document()
    finally:
        store.close()
    names = [e.name for e in window.workspace.model.scenario.prompt_history]
    assert names.count("opt1.3") == 1  # a resumed candidate is not added twice


def test_improve_prompt_opens_from_the_test_set_tab_too(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    open_example(window, tmp_path)
    panel = window.compare.eval_panel
    click(qtbot, panel.improve_button)
    assert window.improving.dialog is not None
    qtbot.waitUntil(window.improving.dialog.isVisible)


def test_generated_cases_are_ticked_into_the_test_set(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    open_example(window, tmp_path)
    panel = window.compare.eval_panel
    before = window.workspace.model.scenario.test_set
    click(qtbot, panel.edit_button)
    editor = panel.editor
    assert editor is not None
    generate = next(b for b in editor.findChildren(QPushButton) if b.text() == "Generate cases…")
    click(qtbot, generate)
    dialog = window.improving.cases_dialog
    assert isinstance(dialog, CasesDialog)
    assert dialog.model_combo.currentText() == OFFLINE
    click(qtbot, dialog.generate_button)
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 4, timeout=10_000)
    assert [dialog.ticked(r) for r in range(4)] == [True, True, False, True]
    assert dialog.note(2) == "duplicate of case 2"
    dialog.table.item(0, 0).setCheckState(Qt.CheckState.Unchecked)  # type: ignore[union-attr]
    dialog.table.item(1, 1).setText("5000 rows")  # type: ignore[union-attr]
    click(qtbot, dialog.add_button)
    assert editor.table.rowCount() == len(before) + 2
    editor.accept()
    after = window.workspace.model.scenario.test_set
    added = after[len(before) :]
    assert [c.question for c in added] == [
        "How many rows can the free plan of Brightgrid export?",
        "What does one seat of Brightgrid Team cost per month?",
    ]
    assert added[0].expected.answer == "5000 rows"
    assert added[0].checks.never == ("calculator",)
    assert after[: len(before)] == before


def test_an_edited_question_that_repeats_a_case_is_flagged(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    open_example(window, tmp_path)
    panel = window.compare.eval_panel
    click(qtbot, panel.edit_button)
    assert panel.editor is not None
    dialog = window.improving.open_generate(panel.editor)
    click(qtbot, dialog.generate_button)
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 4, timeout=10_000)
    first = window.workspace.model.scenario.test_set[0].question
    dialog.table.item(0, 0).setText(first.upper())  # type: ignore[union-attr]
    assert dialog.note(0) == "duplicate of case 1"
    assert dialog.ticked(0)  # flagged, but the tick is the user's


def test_a_models_markup_shows_as_the_characters_it_is(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    path = open_example(window, tmp_path)
    scenario = load_scenario(path)
    hostile = json.dumps(
        [
            {"question": HOSTILE, "answer": HOSTILE},
            {"question": "Which tool?", "answer": "x", "tools_called": [HOSTILE]},
        ]
    )
    window.set_scenario(
        scenario.with_changes(script=replace(scenario.script, generated_cases=(hostile,))), path
    )
    panel = window.compare.eval_panel
    click(qtbot, panel.edit_button)
    assert panel.editor is not None
    dialog = window.improving.open_generate(panel.editor)
    click(qtbot, dialog.generate_button)
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 1, timeout=10_000)
    assert dialog.table.item(0, 0).text() == HOSTILE  # type: ignore[union-attr]
    assert "Left out: proposal 2" in dialog.status.text()
    assert_plain_everywhere(least=1)


def test_opening_another_scenario_stops_it_and_gives_it_nothing(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    open_example(window, tmp_path)
    dialog = open_improve(qtbot, window)
    other = load_scenario(scenarios_dir() / "brightgrid.json")

    def open_other(runs: int) -> None:
        if runs >= 8 and window.current_scenario().title != other.title:
            window.set_scenario(other)

    dialog.progress.valueChanged.connect(open_other)
    click(qtbot, dialog.start_button)
    qtbot.waitUntil(lambda: not dialog.running, timeout=DONE_S)
    assert dialog.outcome is None
    assert window.improving.dialog is None
    assert not dialog.isVisible()
    names = [e.name for e in window.workspace.model.scenario.prompt_history]
    assert not [n for n in names if n.startswith("opt")]


def test_a_dollar_budget_without_the_models_price_starts_nothing(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    open_example(window, tmp_path)
    window.backend_panel.select("custom", "http://127.0.0.1:9/v1", "priceless-7b")
    dialog = open_improve(qtbot, window)
    dialog.arm_combo.setCurrentIndex(0)  # the Run tab's model, a server with no price
    dialog.dollars_spin.setValue(1.0)
    click(qtbot, dialog.start_button)
    assert dialog.status.text() == (
        "A dollar budget needs the price of priceless-7b (Compare → Prices…)."
    )
    assert not dialog.running
    assert dialog.setup is None
