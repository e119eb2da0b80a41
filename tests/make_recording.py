"""Makes the shipped recordings (resources/recordings/), each by running the window's compare
lanes and saving the comparison as a recording:

- brightgrid_two_models.json: the Brightgrid question in two lanes against the test server
  (one model that searches, one that guesses);
- prompt_variants_two_versions.json: resources/scenarios/prompt_variants.json's two lanes on
  the offline model, one pinned to each prompt version (its replies are written per version,
  so the traces are the same every time; only the timings are the run's own).

    QT_QPA_PLATFORM=offscreen uv run python -m tests.make_recording [NAME ...]

With no NAME, both are made.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile

import qasync
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.core.running.recording import recordings_dir
from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.core.scenarios.scenario_file import default_scenario, load_scenario, scenarios_dir
from sandbox_app.ui.window.main_window import MainWindow
from tests.helpers import replies_of
from tests.model_server import ModelScript, ModelServer
from tests.ui.test_screenshot import GUESSER

MODELS = {"qwen2.5:1.5b": replies_of("brightgrid"), "llama3.2:1b": GUESSER}
NAMES = ("brightgrid_two_models", "prompt_variants_two_versions")


def _set_up(window: MainWindow, name: str, server: ModelServer) -> None:
    if (
        name == "prompt_variants_two_versions"
    ):  # its own lanes: the offline model, one per prompt version
        window.set_scenario(load_scenario(scenarios_dir() / "prompt_variants.json"))
        return
    for model, replies in MODELS.items():
        server.set_model(model, ModelScript(replies=replies, rate=25))  # a model's pace
    window.set_scenario(default_scenario())
    window.compare.set_lanes(tuple(LaneConfig("custom", server.base_url, m) for m in MODELS))


async def make(server: ModelServer, names: list[str]) -> None:
    for name in names:
        with tempfile.TemporaryDirectory() as home:
            settings = QSettings(f"{home}/settings.ini", QSettings.Format.IniFormat)
            window = MainWindow(settings, KeyStore())
            _set_up(window, name, server)
            compare = window.compare
            window.tabs.setCurrentWidget(compare)
            done = asyncio.Event()
            compare.runningChanged.connect(lambda running, done=done: running or done.set())
            compare.run_all()
            await done.wait()
            path = recordings_dir() / f"{name}.json"
            path.parent.mkdir(exist_ok=True)
            assert window.recordings.save_to(path), window.statusBar().currentMessage()
            sys.stdout.write(f"wrote {path}\n")
            await window.shutdown()


if __name__ == "__main__":
    wanted = sys.argv[1:] or list(NAMES)
    unknown = [n for n in wanted if n not in NAMES]
    if unknown:
        sys.exit(f"unknown recording {unknown[0]!r}; known: {', '.join(NAMES)}")
    app = QApplication.instance() or QApplication(sys.argv)
    # Started before qasync's loop policy: its own loop is a plain asyncio one, on a thread.
    with ModelServer() as fake:
        qasync.run(make(fake, wanted))
