"""The health check in the model panel (ui/lane/health_line.py): Check, the automatic check
of a local server, the lines under the model row — the same lines ``react-sandbox doctor``
prints — against the emulated servers of tests/model_server/local.py."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import pytest
import qasync
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from sandbox_app.backends.catalogue.keys import KeyStore
from sandbox_app.ui.lane.backend_panel import BackendPanel
from sandbox_app.ui.lane.health_line import is_local
from sandbox_app.ui.window.main_window import MainWindow
from tests.model_server import ModelServer
from tests.model_server.local import (
    LocalModel,
    fake_llamacpp,
    fake_ollama_health,
    nothing_listening,
)

__all__ = ["fake_llamacpp", "fake_ollama_health"]

QWEN = LocalModel("qwen3:8b", context=4096, capabilities=("tools", "thinking"))


def test_check_shows_the_server_and_its_findings(
    qtbot: QtBot, qloop: qasync.QEventLoop, fake_llamacpp: ModelServer
) -> None:
    fake_llamacpp.add(QWEN)
    panel = BackendPanel(KeyStore())
    qtbot.addWidget(panel)
    panel.show()
    panel.select("custom", fake_llamacpp.base_url, "qwen3:8b")
    health = panel.health_line
    assert health.button.isEnabled()
    with qtbot.waitSignal(health.checked, timeout=10_000):
        qtbot.mouseClick(health.button, Qt.MouseButton.LeftButton)
    lines = health.lines()
    assert lines[0].startswith("llama.cpp b6700-1a2b3c4d at 127.0.0.1:")
    assert "qwen3:8b loaded, 4,096-token context" in lines[0]
    assert health.label.isVisible()


def test_check_is_off_for_the_offline_model_and_choosing_it_clears_the_lines(
    qtbot: QtBot, qloop: qasync.QEventLoop
) -> None:
    panel = BackendPanel(KeyStore())
    qtbot.addWidget(panel)
    panel.show()
    panel.select("custom", nothing_listening(), "qwen3:8b")
    qtbot.waitUntil(lambda: "Nothing answers at" in " ".join(panel.health_line.lines()))
    panel.select("scripted")
    assert not panel.health_line.button.isEnabled()
    assert panel.health_line.lines() == []
    assert not panel.health_line.label.isVisible()


def test_the_window_says_what_doctor_says(
    qtbot: QtBot,
    make_window: Callable[..., MainWindow],
    fake_ollama_health: ModelServer,
) -> None:
    """A local server chosen is checked by itself, for the scenario in the window; its lines
    are doctor's for the same scenario, word for word."""
    fake_ollama_health.add(QWEN)
    window = make_window()
    window.backend_panel.select("custom", fake_ollama_health.base_url, "qwen3:8b")
    with qtbot.waitSignal(window.backend_panel.health_line.checked, timeout=10_000):
        pass  # no click: the automatic check of a local server
    shown = window.backend_panel.health_line.lines()
    assert any("this scenario needs about" in line for line in shown), shown
    url = fake_ollama_health.base_url
    doctor = subprocess.run(
        [sys.executable, "-m", "sandbox_app", "doctor", "--base-url", url, "--model", "qwen3:8b"],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert doctor.returncode == 0, doctor.stderr
    assert doctor.stdout.decode("utf-8").splitlines() == shown


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://localhost:11434/v1", True),
        ("http://127.0.0.1:1234/v1", True),
        ("http://192.168.1.20:8080", True),
        ("http://[::1]:8000/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://example.com:11434", False),
    ],
)
def test_which_servers_are_checked_by_themselves(url: str, local: bool) -> None:
    assert is_local(url) is local


def test_the_context_a_check_found_served_is_the_context_meters_window(
    qtbot: QtBot, make_window: Callable[..., MainWindow], fake_llamacpp: ModelServer
) -> None:
    """No Context set: the window a run's prompt is measured against is the one the check
    found the server serving (4,096 here), not none."""
    fake_llamacpp.add(QWEN)
    window = make_window()
    panel = window.backend_panel
    with qtbot.waitSignal(panel.health_line.checked, timeout=10_000):
        panel.select("custom", fake_llamacpp.base_url, "qwen3:8b")
    assert panel.choice().settings.context_window is None
    qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.controller.running, timeout=10_000)

    def metered() -> bool:
        return " / 4,096 tokens (" in window.trace.plain_text()

    try:
        qtbot.waitUntil(metered, timeout=5_000)
    except AssertionError:
        raise AssertionError(window.trace.plain_text()[:600]) from None
