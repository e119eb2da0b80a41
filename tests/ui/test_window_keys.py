"""The key rule in the window: the main run, a restart, every compare lane, and lanes whose
server a scenario file named (no key until the user confirms that host)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from sandbox_app.core.scenarios.judge_spec import JudgeSpec
from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.core.scenarios.scenario_file import load_scenario, save_scenario, scenarios_dir
from sandbox_app.ui.lane.key_confirmation import KeyConfirmDialog
from sandbox_app.ui.window.main_window import MainWindow
from tests.model_server import ModelScript, ModelServer

ANSWER = ["Thought: easy.\nAnswer: 4"]
PASS = '{"verdict": "pass", "score": 5, "reason": "It gives the price per year."}'


def run_and_wait(qtbot: QtBot, window: MainWindow) -> None:
    qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.controller.running, timeout=2000)
    qtbot.waitUntil(lambda: not window.controller.running, timeout=15000)
    assert window.answer_label.text() == "4", window.answer_status.text()


@pytest.fixture
def provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    monkeypatch.setenv("GROQ_API_KEY", "gsk-groq-secret")
    monkeypatch.delenv("REACT_SANDBOX_API_KEY", raising=False)


@pytest.mark.usefixtures("provider_keys")
def test_editing_the_openai_presets_url_never_sends_the_openai_key(
    qtbot: QtBot, make_window: Callable[..., MainWindow], fake_server: ModelServer
) -> None:
    fake_server.set_model("m", ModelScript(replies=ANSWER, cycle=True))
    first = make_window()
    first.set_scenario(first.scenario.with_changes(question="What is 2 + 2?"))
    panel = first.backend_panel
    panel.select("OpenAI")
    assert panel.key_status.text() == "Key from the environment (OPENAI_API_KEY)."
    panel.base_url_edit.setText(fake_server.base_url)
    panel.model_combo.setCurrentText("m")
    assert "The OpenAI key goes only to api.openai.com" in panel.key_status.text()
    run_and_wait(qtbot, first)
    first.close()  # the preset and the edited URL are saved: the next start repeats them
    second = make_window()
    assert second.backend_panel.preset_combo.currentText() == "OpenAI"
    assert second.backend_panel.base_url_edit.text() == fake_server.base_url
    run_and_wait(qtbot, second)
    assert fake_server.authorizations == ["Bearer not-needed"] * 2


@pytest.mark.usefixtures("provider_keys")
def test_a_key_typed_for_one_host_stays_with_that_host(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    fake_server.set_model("m", ModelScript(replies=ANSWER, cycle=True))
    window.set_scenario(window.scenario.with_changes(question="What is 2 + 2?"))
    panel = window.backend_panel
    panel.select("Custom URL", fake_server.base_url, "m")
    panel.key_edit.setText("sk-typed-for-the-test-server")
    run_and_wait(qtbot, window)
    panel.base_url_edit.setText("http://127.0.0.1:9/v1")  # another host: the field empties
    assert panel.key_edit.text() == ""
    panel.base_url_edit.setText(fake_server.base_url)  # back: the typed key comes back
    assert panel.key_edit.text() == "sk-typed-for-the-test-server"
    assert fake_server.authorizations == ["Bearer sk-typed-for-the-test-server"]


@pytest.mark.usefixtures("provider_keys")
def test_compare_lanes_follow_the_same_rule(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer
) -> None:
    fake_server.set_model("m", ModelScript(replies=ANSWER, cycle=True))
    window.set_scenario(window.scenario.with_changes(question="What is 2 + 2?"))
    compare = window.compare
    compare.set_lanes(
        (
            LaneConfig("OpenAI", fake_server.base_url, "m"),
            LaneConfig("Groq", fake_server.base_url, "m"),
        )
    )
    window.tabs.setCurrentWidget(compare)
    qtbot.mouseClick(compare.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: compare.running, timeout=2000)
    qtbot.waitUntil(lambda: not compare.running, timeout=20000)
    assert [lane.record.runs[-1].answer for lane in compare.lanes] == ["4", "4"]
    assert fake_server.authorizations == ["Bearer not-needed"] * 2


@pytest.fixture
def custom_key(fake_server: ModelServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The catch-all key is set, and the test server's model answers 4."""
    monkeypatch.setenv("REACT_SANDBOX_API_KEY", "sk-custom-secret")
    fake_server.set_model("m", ModelScript(replies=ANSWER, cycle=True))


def _open_with_file_lanes(window: MainWindow, tmp_path: Path, url: str) -> None:
    """A scenario from someone else, whose lanes name a server."""
    scenario = window.scenario.with_changes(question="What is 2 + 2?")
    lanes = (LaneConfig("custom", url, "m"), LaneConfig("scripted"))
    path = tmp_path / "from_a_colleague.json"
    save_scenario(scenario.with_changes(lanes=lanes), path)
    assert window.files.open_scenario(path)
    window.tabs.setCurrentWidget(window.compare)


def _key_question(qtbot: QtBot) -> KeyConfirmDialog:
    found: list[KeyConfirmDialog] = []

    def asked() -> bool:
        found[:] = [w for w in QApplication.topLevelWidgets() if isinstance(w, KeyConfirmDialog)]
        return bool(found) and found[0].isVisible()

    qtbot.waitUntil(asked, timeout=5000)
    return found[0]


def _run_all(qtbot: QtBot, window: MainWindow, answer: str | None) -> None:
    compare = window.compare
    qtbot.mouseClick(compare.run_button, Qt.MouseButton.LeftButton)
    if answer is not None:
        dialog = _key_question(qtbot)
        assert "127.0.0.1" in dialog.text()
        assert "named" in dialog.text()
        assert dialog.textFormat() == Qt.TextFormat.PlainText  # the host comes from the file
        button = dialog.send_button if answer == "send" else dialog.without_button
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: compare.running, timeout=5000)
    qtbot.waitUntil(lambda: not compare.running, timeout=20000)
    assert compare.lanes[0].record.runs[-1].answer == "4"


@pytest.mark.usefixtures("custom_key")
def test_a_lane_url_from_a_file_gets_no_key_until_the_user_confirms_its_host(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer, tmp_path: Path
) -> None:
    _open_with_file_lanes(window, tmp_path, fake_server.base_url)
    _run_all(qtbot, window, answer="without")
    assert fake_server.authorizations == ["Bearer not-needed"]
    assert "no key sent until you confirm" in window.statusBar().currentMessage()
    _run_all(qtbot, window, answer=None)  # answered for this session: not asked again
    assert fake_server.authorizations[-1] == "Bearer not-needed"


@pytest.mark.usefixtures("custom_key")
def test_a_confirmed_host_gets_the_key_in_lanes_and_the_test_set(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer, tmp_path: Path
) -> None:
    _open_with_file_lanes(window, tmp_path, fake_server.base_url)
    _run_all(qtbot, window, answer="send")
    assert fake_server.authorizations == ["Bearer sk-custom-secret"]


@pytest.mark.usefixtures("custom_key")
def test_the_test_set_asks_before_sending_a_key_to_a_file_named_host(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer, tmp_path: Path
) -> None:
    scenario = load_scenario(scenarios_dir() / "test_set.json")
    lanes = (LaneConfig("custom", fake_server.base_url, "m"), LaneConfig("scripted"))
    path = tmp_path / "from_a_colleague.json"
    save_scenario(scenario.with_changes(lanes=lanes), path)
    assert window.files.open_scenario(path)
    panel = window.compare.eval_panel
    panel.start("all")
    qtbot.mouseClick(_key_question(qtbot).without_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.running, timeout=5000)
    qtbot.waitUntil(lambda: not panel.running, timeout=60000)
    assert fake_server.authorizations
    assert set(fake_server.authorizations) == {"Bearer not-needed"}


@pytest.mark.usefixtures("custom_key")
def test_a_url_the_user_typed_into_a_lane_needs_no_confirmation(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer, tmp_path: Path
) -> None:
    _open_with_file_lanes(window, tmp_path, "http://127.0.0.1:9/v1")
    panel = window.compare.lanes[0].backend_panel
    panel.base_url_edit.setText(fake_server.base_url)  # the user's own choice
    _run_all(qtbot, window, answer=None)
    assert fake_server.authorizations == ["Bearer sk-custom-secret"]


def test_a_recordings_servers_never_get_a_key(
    qtbot: QtBot,
    make_window: Callable[..., MainWindow],
    fake_server: ModelServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """A recording names the servers it was made against; playing it, then running, sends
    them nothing: the lanes that run are the scenario's own."""
    from tests.ui.test_recordings import AT_ONCE, run_comparison

    live = make_window()
    run_comparison(qtbot, live, fake_server)
    path = tmp_path / "from_a_colleague.recording.json"
    assert live.recordings.save_to(path)
    live.close()
    sent = len(fake_server.authorizations)
    monkeypatch.setenv("REACT_SANDBOX_API_KEY", "sk-custom-secret")
    window = make_window()
    window.compare.set_lanes((LaneConfig("scripted"), LaneConfig("scripted")))
    window.recordings.set_speed(AT_ONCE)
    assert window.recordings.play(path)
    qtbot.waitUntil(lambda: not window.compare.running, timeout=20000)
    qtbot.mouseClick(window.compare.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.compare.running, timeout=5000)
    qtbot.waitUntil(lambda: not window.compare.running, timeout=20000)
    answers = [lane.record.runs[-1].answer for lane in window.compare.lanes]
    assert set(answers) == {"$1,680 per year"}  # the scenario's offline lanes ran
    assert fake_server.authorizations[sent:] == []  # not a request, so not a key


@pytest.mark.usefixtures("custom_key")
@pytest.mark.parametrize("answer", ["send", "without"])
def test_a_judge_server_the_file_names_is_asked_about_before_it_gets_the_key(
    qtbot: QtBot, window: MainWindow, fake_server: ModelServer, tmp_path: Path, answer: str
) -> None:
    fake_server.set_model("judge", ModelScript(replies=[PASS], cycle=True))
    scenario = load_scenario(scenarios_dir() / "test_set.json")  # offline lanes, a rubric
    judge = JudgeSpec("custom", "judge", fake_server.base_url)
    one_case = scenario.with_changes(test_set=scenario.test_set[:1], judge=judge)
    path = tmp_path / "judged_elsewhere.json"
    save_scenario(
        one_case.with_changes(lanes=(LaneConfig("scripted"), LaneConfig("scripted"))), path
    )
    assert window.files.open_scenario(path)
    panel = window.compare.eval_panel
    panel.start("all")
    dialog = _key_question(qtbot)  # the lanes are offline: only the judge's host is asked about
    assert fake_server.host_port in dialog.text()
    button = dialog.send_button if answer == "send" else dialog.without_button
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.running, timeout=5000)
    qtbot.waitUntil(lambda: not panel.running, timeout=60000)
    key = "Bearer sk-custom-secret" if answer == "send" else "Bearer not-needed"
    assert fake_server.authorizations == [key, key]  # the one case judged in each lane
