"""The Versions tab beside the template (issue 24, item 2): two edits and runs list two
versions with their runs and pass rates; Diff marks exactly the changed words; Restore brings
a version back as one edit that Edit → Undo takes back (its dialect too) and never buries
unsaved words without asking; Name / Star / note persist through save and reopen; a hostile
name or template shows as the characters it is."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QLineEdit, QMessageBox, QPlainTextEdit
from pytestqt.qtbot import QtBot

from sandbox_app.core.react_format.prompts import DEFAULT_TEMPLATE
from sandbox_app.core.scenarios.prompt_versions import PromptEntry
from sandbox_app.core.scenarios.scenario_file import load_scenario, scenarios_dir
from sandbox_app.ui.versions.versions_panel import VersionsPanel
from sandbox_app.ui.window.main_window import MainWindow
from tests.ui.test_plain_text import assert_plain_everywhere

FIRST = DEFAULT_TEMPLATE + "\nBe brief and polite."
SECOND = DEFAULT_TEMPLATE + "\nBe thorough and polite."


def open_brightgrid(window: MainWindow) -> None:
    scenario = load_scenario(scenarios_dir() / "brightgrid.json")
    window.set_scenario(replace(scenario, script=replace(scenario.script, tokens_per_second=0)))


def run_and_wait(qtbot: QtBot, window: MainWindow) -> None:
    qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.controller.running, timeout=2000)
    qtbot.waitUntil(lambda: not window.controller.running, timeout=15000)


def edit_and_run(qtbot: QtBot, window: MainWindow, template: str) -> None:
    window.prompt_panel.template_edit.setPlainText(template)  # as a paste over it all
    run_and_wait(qtbot, window)


def rows(panel: VersionsPanel) -> list[list[str]]:
    items = (panel.list.topLevelItem(i) for i in range(panel.list.topLevelItemCount()))
    return [[item.text(c) for c in range(7)] for item in items if item is not None]


def history(window: MainWindow) -> tuple[PromptEntry, ...]:
    return window.workspace.model.scenario.prompt_history


def click(qtbot: QtBot, button: object) -> None:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)  # type: ignore[arg-type]


def press_undo(window: MainWindow, redo: bool = False) -> None:
    """Edit → Undo (or Redo), as its key reaches the menu's action."""
    key = QKeySequence.StandardKey.Redo if redo else QKeySequence.StandardKey.Undo
    action = next(a for a in window.findChildren(QAction) if a.shortcut() == QKeySequence(key))
    action.trigger()


def two_versions(qtbot: QtBot, window: MainWindow) -> VersionsPanel:
    open_brightgrid(window)
    edit_and_run(qtbot, window, FIRST)
    edit_and_run(qtbot, window, SECOND)
    panel = window.prompt_panel.versions
    window.prompt_panel.show_versions()
    return panel


def test_two_edits_and_runs_list_two_versions_with_runs_and_pass_rates(
    qtbot: QtBot, window: MainWindow
) -> None:
    panel = two_versions(qtbot, window)
    run_and_wait(qtbot, window)  # the second again: counted, not a third version
    first, second = history(window)
    # Newest first; the offline model answers brightgrid right, so each run passed.
    # Counted in the history database, per model (the offline model: "scripted").
    counted = [
        ["—", second.short, "scripted", "2", "2/2 (100%)"],
        ["—", first.short, "scripted", "1", "1/1 (100%)"],
    ]
    qtbot.waitUntil(lambda: [r[1:6] for r in rows(panel)] == counted, timeout=5000)
    assert (first.checked, first.passed, second.checked, second.passed) == (1, 1, 2, 2)


def test_diff_marks_exactly_the_changed_words(qtbot: QtBot, window: MainWindow) -> None:
    panel = two_versions(qtbot, window)
    first, second = history(window)
    panel.select(first.id, second.id)
    click(qtbot, panel.diff_button)
    view = panel.diff_view
    assert view.marked("removed") == ["brief"]
    assert view.marked("added") == ["thorough"]
    assert f"{first.short} → {second.short}" in view.toPlainText()
    # A dialect change is named on a line of its own, beside the words.
    window.tool_panel.dialect_combo.setCurrentText("auto")
    panel.select(second.id)
    click(qtbot, panel.diff_button)
    assert "dialect: bracket → auto" in view.toPlainText().splitlines()[1]
    assert view.marked("removed") == view.marked("added") == []


def test_restore_brings_the_first_back_and_undo_the_second(
    qtbot: QtBot, window: MainWindow
) -> None:
    open_brightgrid(window)
    edit_and_run(qtbot, window, FIRST)
    window.tool_panel.dialect_combo.setCurrentText("auto")  # the second's dialect differs
    edit_and_run(qtbot, window, SECOND)
    panel = window.prompt_panel.versions
    first = history(window)[0]
    panel.select(first.id)
    click(qtbot, panel.restore_button)
    scenario = window.workspace.model.scenario
    assert window.prompt_panel.template() == FIRST
    assert (scenario.system_prompt, scenario.dialect) == (FIRST, "bracket")
    assert window.tool_panel.dialect_combo.currentText() == "bracket"
    assert "Restored" in panel.notice.text()
    press_undo(window)
    scenario = window.workspace.model.scenario
    assert window.prompt_panel.template() == SECOND
    assert (scenario.system_prompt, scenario.dialect) == (SECOND, "auto")
    assert window.tool_panel.dialect_combo.currentText() == "auto"
    press_undo(window, redo=True)
    assert window.workspace.model.scenario.dialect == "bracket"
    assert window.prompt_panel.template() == FIRST


def test_restore_asks_before_burying_unsaved_words(qtbot: QtBot, window: MainWindow) -> None:
    panel = two_versions(qtbot, window)
    unsaved = SECOND + " Draft words no run has seen."
    window.prompt_panel.template_edit.setPlainText(unsaved)
    panel.select(history(window)[0].id)
    click(qtbot, panel.restore_button)
    dialog = panel.confirm_dialog
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible, timeout=2000)
    click(qtbot, dialog.button(QMessageBox.StandardButton.Cancel))
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=2000)
    assert window.prompt_panel.template() == unsaved  # Cancel: nothing changed
    click(qtbot, panel.restore_button)
    dialog = panel.confirm_dialog
    qtbot.waitUntil(dialog.isVisible, timeout=2000)
    click(qtbot, dialog.button(QMessageBox.StandardButton.Yes))
    qtbot.waitUntil(lambda: window.prompt_panel.template() == FIRST, timeout=2000)
    press_undo(window)
    assert window.prompt_panel.template() == unsaved  # the draft is back


def name_it(qtbot: QtBot, panel: VersionsPanel, name: str, note: str) -> None:
    click(qtbot, panel.name_button)
    dialog = panel.name_dialog
    assert isinstance(dialog, QDialog)
    qtbot.waitUntil(dialog.isVisible, timeout=2000)
    name_edit = dialog.findChild(QLineEdit, "versionName")
    note_edit = dialog.findChild(QPlainTextEdit, "versionNote")
    assert name_edit is not None
    assert note_edit is not None
    name_edit.setText(name)
    note_edit.setPlainText(note)
    dialog.accept()


def test_name_star_and_note_persist_through_save_and_reopen(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    panel = two_versions(qtbot, window)
    path = tmp_path / "named.json"
    assert window.files.save_to(path)
    first = history(window)[0]
    panel.select(first.id)
    name_it(qtbot, panel, "polite baseline", "the wording that worked")
    click(qtbot, panel.star_button)
    assert rows(panel)[1][:2] == ["★", "polite baseline"]
    assert window.modified  # a name is the user's edit: Save is offered, never lost at close
    assert window.files.save_to(path)
    window.workspace.model.new()
    assert rows(panel) == []
    window.files.open_scenario(path)
    assert rows(panel)[1][:2] == ["★", "polite baseline"]
    entry = history(window)[0]
    assert (entry.name, entry.note, entry.starred) == (
        "polite baseline",
        "the wording that worked",
        True,
    )


def test_star_reads_unstar_on_a_starred_version_and_a_diff_header_takes_a_new_name(
    qtbot: QtBot, window: MainWindow
) -> None:
    panel = two_versions(qtbot, window)
    first, second = history(window)
    panel.select(first.id)
    assert panel.star_button.text() == "Star"
    click(qtbot, panel.star_button)
    assert rows(panel)[1][0] == "★"
    assert panel.star_button.text() == "Unstar"  # what a click would do now
    panel.select(second.id)
    assert panel.star_button.text() == "Star"
    panel.select(first.id)
    click(qtbot, panel.star_button)
    assert rows(panel)[1][0] == ""
    assert panel.star_button.text() == "Star"
    panel.select(first.id, second.id)
    click(qtbot, panel.diff_button)
    view = panel.diff_view
    assert view.toPlainText().splitlines()[0] == f"{first.short} → {second.short}"
    panel.select(second.id)
    name_it(qtbot, panel, "thorough", "")
    assert view.toPlainText().splitlines()[0] == f"{first.short} → thorough"
    assert view.marked("added") == ["thorough"]  # the diff itself stays


def test_the_run_tab_says_which_version_it_ran_by_name_first(
    qtbot: QtBot, window: MainWindow
) -> None:
    panel = two_versions(qtbot, window)
    line = window.run_pane.ran_prompt.label
    _first, second = history(window)
    assert line.isVisible()
    # The version, then the offline model's note (its replies are the same for every prompt).
    assert line.text().startswith(f"ran prompt {second.short} · ")  # unnamed: its short id
    panel.select(second.id)
    name_it(qtbot, panel, "thorough", "")
    run_and_wait(qtbot, window)
    assert line.text().startswith(f"ran prompt thorough ({second.short}) · ")
    compare = window.compare  # a lane says it alike, in its title row
    window.tabs.setCurrentWidget(compare)
    lane = compare.lanes[0]
    lane.runner.run()
    qtbot.waitUntil(lambda: bool(lane.record.runs) and not lane.pane.running, timeout=15000)
    assert lane.prompt_label.text().startswith(f"ran prompt thorough ({second.short}) · ")
    assert lane.prompt_label.isVisible()


def test_a_hostile_name_and_template_show_as_text(qtbot: QtBot, window: MainWindow) -> None:
    hostile = "<h1>Big</h1><a href='https://evil.invalid/x'>click</a>"
    open_brightgrid(window)
    edit_and_run(qtbot, window, DEFAULT_TEMPLATE + "\n" + hostile)
    edit_and_run(qtbot, window, DEFAULT_TEMPLATE + "\nplain words")
    panel = window.prompt_panel.versions
    window.prompt_panel.show_versions()
    first, second = history(window)
    panel.select(first.id)
    name_it(qtbot, panel, "<b>bold</b>\x1b[31m\u202eevil.invalid", "<i>note</i>")
    assert rows(panel)[1][1] == "<b>bold</b> [31m evil.invalid"  # control characters out
    panel.select(first.id, second.id)
    click(qtbot, panel.diff_button)
    # The markup as its characters, struck through, never read as HTML.
    removed = panel.diff_view.marked("removed")
    assert removed == ["<h1>Big</h1><a", "href='https://evil.invalid/x'>click</a>"]
    assert panel.diff_view.marked("added") == ["plain", "words"]
    panel.select(first.id)
    click(qtbot, panel.restore_button)
    assert window.prompt_panel.template().endswith(hostile)
    assert_plain_everywhere(least=1)  # the notice naming it is plain text
