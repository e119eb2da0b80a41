"""Judged answers in the window: a case's rubric in the test set editor, the scenario's rubric and
the judge (backend, mode, the prompt in full) in Judge…, written into the scenario and its file;
the judge's verdict and reason in a grid cell's tooltip, passes included."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from sandbox_app.core.scenarios.judge_spec import DEFAULT_JUDGE_PROMPT
from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.ui.compare.test_set_editor import RUBRIC
from sandbox_app.ui.window.main_window import MainWindow
from tests.model_server import ModelScript, ModelServer
from tests.ui.test_eval_panel import open_test_set
from tests.ui.test_test_set_editor import open_editor, set_cell


def test_rubrics_and_the_judge_are_edited_and_saved(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    editor = open_editor(qtbot, window)
    set_cell(editor, 2, RUBRIC, "Says the yearly price for 7 developers.")
    qtbot.mouseClick(editor.judge_button, Qt.MouseButton.LeftButton)
    dialog = editor.judge_dialog
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible, timeout=2000)
    # The built-in test set's judge, shown as its file says: offline, scored, its prompt in full.
    assert dialog.rubric_edit.toPlainText().startswith("The answer gives the figure")
    # The backend by its name, as the lanes list it (its id is what the file keeps).
    assert dialog.backend_combo.currentText() == "Scripted (offline)"
    assert dialog.backend_combo.currentData() == "scripted"
    assert dialog.mode_combo.currentData() == "score"
    assert dialog.prompt_edit.toPlainText() == DEFAULT_JUDGE_PROMPT
    dialog.rubric_edit.setPlainText("Answers in dollars.")
    dialog.mode_combo.setCurrentIndex(0)  # pass or fail
    assert not dialog.threshold_spin.isEnabled()  # a threshold is for scores
    dialog.prompt_edit.setPlainText("Grade it.")  # never shows the judge the answer
    dialog.accept()
    assert dialog.isVisible()
    assert dialog.message.text() == '⚠ "judge.prompt" must contain {{answer}}.'
    dialog.prompt_edit.setPlainText("Does {{answer}} meet: {{rubric}}? Say PASS or FAIL.")
    dialog.accept()
    assert not dialog.isVisible()
    editor.accept()
    scenario = window.current_scenario()
    assert scenario.rubric == "Answers in dollars."
    assert scenario.judge is not None
    assert scenario.judge.mode == "pass_fail"
    assert scenario.judge.prompt.startswith("Does {{answer}} meet")
    assert scenario.judge.replies  # the offline verdicts kept as the file had them
    assert scenario.test_set[2].rubric == "Says the yearly price for 7 developers."
    assert scenario.test_set[11].judge_replies  # a case's own verdicts too
    path = tmp_path / "judged.json"
    assert window.files.save_to(path)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["rubric"] == "Answers in dollars."
    assert saved["judge"]["mode"] == "pass_fail"
    assert saved["judge"]["backend"] == "scripted"
    assert saved["test_set"][2]["rubric"] == "Says the yearly price for 7 developers."


def test_a_cell_tooltip_says_the_judges_verdict_and_reason(
    qtbot: QtBot, window: MainWindow
) -> None:
    open_test_set(window)
    panel = window.compare.eval_panel
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(panel.results) == 24 and not panel.running, timeout=20000)
    passed, failed = panel.grid.item(0, 1), panel.grid.item(11, 1)
    assert passed is not None
    assert failed is not None
    assert "✓ judge — pass (score 5/5) — The answer states the figure" in passed.toolTip()
    assert "✗ judge — fail (score 2/5) — $2,160 per year names no source" in failed.toolTip()
    assert "judge " in panel.summary.text()  # the judge's tokens in each lane's summary


def test_the_offline_judge_leaves_a_real_lane_unjudged_and_the_summary_says_so(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    open_test_set(window)
    cases = window.current_scenario().test_set
    by_question = {c.question: list(c.replies) for c in cases}  # runs arrive in any order
    fake_server.set_model("m", ModelScript(by_question=by_question))
    window.compare.set_lanes((LaneConfig(), LaneConfig("custom", fake_server.base_url, "m")))
    panel = window.compare.eval_panel
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(panel.results) == 24 and not panel.running, timeout=20000)
    last = panel.summary.text().splitlines()[-1]
    assert last.startswith("⚠ the offline judge's written verdicts grade only the offline")
    assert "not judged" in last
    offline, real = panel.grid.item(0, 1), panel.grid.item(0, 2)
    assert offline is not None
    assert real is not None
    assert "judge — pass" in offline.toolTip()
    assert "judge" not in real.toolTip()  # no canned verdict on the real model's answer
