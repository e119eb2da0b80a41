"""Makes the shipped recording (resources/recordings/brightgrid_two_models.json): the window
runs the Brightgrid question in two compare lanes against the test server (one model that
searches, one that guesses), then saves the comparison as a recording.

    QT_QPA_PLATFORM=offscreen uv run python -m tests.make_recording
"""

from __future__ import annotations

import asyncio
import sys
import tempfile

import qasync
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from sandbox_app.backends.keys import KeyStore
from sandbox_app.core.running.recording import recordings_dir
from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.core.scenarios.scenario_file import default_scenario
from sandbox_app.ui.window.main_window import MainWindow
from tests.fakeserver import FakeOpenAIServer, ModelScript
from tests.helpers import replies_of
from tests.ui.test_screenshot import GUESSER

MODELS = {"qwen2.5:1.5b": replies_of("brightgrid"), "llama3.2:1b": GUESSER}


async def make(server: FakeOpenAIServer) -> None:
    with tempfile.TemporaryDirectory() as home:
        for name, replies in MODELS.items():
            server.set_model(name, ModelScript(replies=replies, rate=25))  # a model's pace
        settings = QSettings(f"{home}/settings.ini", QSettings.Format.IniFormat)
        window = MainWindow(settings, KeyStore())
        window.set_scenario(default_scenario())
        compare = window.compare
        compare.set_lanes(tuple(LaneConfig("custom", server.base_url, m) for m in MODELS))
        window.tabs.setCurrentWidget(compare)
        done = asyncio.Event()
        compare.runningChanged.connect(lambda running: running or done.set())
        compare.run_all()
        await done.wait()
        path = recordings_dir() / "brightgrid_two_models.json"
        path.parent.mkdir(exist_ok=True)
        assert window.recordings.save_to(path), window.statusBar().currentMessage()
        sys.stdout.write(f"wrote {path}\n")
        await window.shutdown()


if __name__ == "__main__":
    app = QApplication.instance() or QApplication(sys.argv)
    # Started before qasync's loop policy: its own loop is a plain asyncio one, on a thread.
    with FakeOpenAIServer() as fake:
        qasync.run(make(fake))
