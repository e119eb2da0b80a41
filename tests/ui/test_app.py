"""The real entry point: `react-sandbox` on a qasync loop, closed while a run streams."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakeserver import FakeOpenAIServer, ModelScript

# Runs the app as `react-sandbox` does, then acts like a user: press Run, and close the
# window as soon as the first tokens are on screen.
SCRIPT = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from sandbox_app.ui.app import run_app
from sandbox_app.ui.main_window import MainWindow

app = QApplication(sys.argv)

def act():
    windows = [w for w in app.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
    if windows:
        window = windows[0]
        if not window.controller.running and not window.trace.plain_text():
            if len(sys.argv) > 1:  # an OpenAI-compatible server instead of the offline model
                window.backend_panel.select("Custom URL", sys.argv[1], "slow")
            window.run_button.click()
        elif "Thought" in window.trace.plain_text():
            print("closing mid-run:", window.controller.running, flush=True)
            window.close()
            return
    QTimer.singleShot(20, act)

QTimer.singleShot(0, act)
sys.exit(run_app(None))
"""


@pytest.mark.parametrize("backend", ["offline", "server"])
def test_closing_the_app_mid_run_exits_cleanly(
    tmp_path: Path, fake_server: FakeOpenAIServer, backend: str
) -> None:
    fake_server.set_model("slow", ModelScript(["Thought: " + "slowly " * 400], rate=100))
    server_args = [fake_server.base_url] if backend == "server" else []
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    env["QT_QPA_PLATFORM"] = "offscreen"
    env["PYTHONWARNINGS"] = "error"
    result = subprocess.run(
        [sys.executable, "-X", "dev", "-c", SCRIPT, *server_args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert result.stdout.strip() == "closing mid-run: True"
    assert result.returncode == 0, result.stderr
    noise = [
        line
        for line in result.stderr.splitlines()
        if "propagateSizeHints" not in line  # the offscreen platform's own notice
    ]
    assert noise == []
    settings = list((tmp_path / "config").rglob("*.conf"))
    assert settings, "the window state was not saved"
