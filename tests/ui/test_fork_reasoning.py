"""In the window: a native run of a model that requires its reasoning back, saved as a
recording, opened again and forked at step 2 goes on against the server that refuses it
without its bytes; forked onto another model, the trace says before step 1 that they stay home
(core/running/carried.py)."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from sandbox_app.ui.window.main_window import MainWindow
from sandbox_app.ui.window.recordings import SPEEDS
from tests.core.test_passback import script_for
from tests.model_server import ModelScript, ModelServer

MODEL = "deepseek-reasoner"


def test_a_recording_forked_at_step_2_keeps_its_reasoning_for_its_own_model_only(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer, tmp_path: Path
) -> None:
    fake_server.set_model(MODEL, script_for("deepseek"))
    fake_server.set_model("other-model", ModelScript(replies=["-", "-", "$1,680 per year"]))
    panel, pane = window.backend_panel, window.run_pane
    panel.select("custom", fake_server.base_url, MODEL)
    combo = panel.settings_form.widgets["tool_calling"]
    combo.setCurrentIndex(combo.findData("native"))
    window.start_run()
    qtbot.waitUntil(lambda: not pane.running, timeout=20000)
    path = tmp_path / "deepseek.json"
    assert window.recordings.save_to(path)

    window.recordings.set_speed(dict(SPEEDS)["At once"])
    assert window.recordings.play(path)
    qtbot.waitUntil(lambda: (r := pane.shown_record()) is not None and r.done, timeout=10000)
    asked = len(fake_server.requests)
    assert pane.fork(2)  # the panel shows the recording's model: its reasoning goes back
    qtbot.waitUntil(lambda: pane.running, timeout=2000)
    qtbot.waitUntil(lambda: not pane.running, timeout=20000)
    assert fake_server.stats["errors"] == 0
    assert len(fake_server.requests) == asked + 1
    assert window.answer_label.text() == "$1,680 per year"
    assert "not sent to" not in pane.trace.plain_text()

    panel.select("custom", fake_server.base_url, "other-model")
    assert pane.fork(2)
    qtbot.waitUntil(lambda: pane.running, timeout=2000)
    qtbot.waitUntil(lambda: not pane.running, timeout=20000)
    trace = pane.trace.plain_text()
    assert "The reasoning items of 2 earlier replies (provider data of custom " in trace
    assert f"{MODEL}) are not sent to custom {fake_server.base_url} other-model" in trace
    assert trace.index("not sent to") < trace.index("── Step 1 ")
    (last,) = [r for r in fake_server.requests if r["model"] == "other-model"]
    assert all("reasoning_content" not in m for m in last["messages"])
    assert window.answer_label.text() == "$1,680 per year"
