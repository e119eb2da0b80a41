"""The window's OpenTelemetry out: File → Export as OpenTelemetry → Run / Comparison / Test set
results…, to an OTLP JSON file or a local OTLP/HTTP receiver; the endpoint and header names
kept in settings, a header's value never there; live mode sends runs as they stream, lanes
included, and an unreachable collector is one status line while the run goes on."""

from __future__ import annotations

import socket
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from sandbox_app.application.otel_export import OtlpTarget
from sandbox_app.core.scenarios.scenario import LaneConfig
from sandbox_app.ui.telemetry.otel_dialog import open_otel_dialog
from sandbox_app.ui.telemetry.otel_out import header_account
from sandbox_app.ui.window.main_window import MainWindow
from tests.core.test_otel_export import CONTENT_KEYS, attrs, read_back, spans_of
from tests.otlp_receiver import OtlpReceiver, otlp_receiver
from tests.ui.test_wheel_rule import menu_titled
from tests.ui.test_window import fast

__all__ = ["otlp_receiver"]


def finished_run(qtbot: QtBot, window: MainWindow) -> None:
    window.set_scenario(fast("brightgrid", tokens_per_second=0))
    window.start_run()
    qtbot.waitUntil(lambda: window.run_pane.shown_record() is not None, timeout=5000)
    qtbot.waitUntil(lambda: not window.run_pane.running, timeout=20000)


def test_the_file_menu_offers_run_comparison_and_test_set(window: MainWindow) -> None:
    otel = menu_titled(window, "Export as Open&Telemetry")
    assert [a.text().replace("&", "") for a in otel.actions()] == [
        "Run…",
        "Comparison…",
        "Test set results…",
    ]


def test_a_run_to_a_file_with_its_content(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    finished_run(qtbot, window)
    dialog = open_otel_dialog(window, window, "run")
    assert dialog.to_file.isChecked()  # no endpoint kept yet
    assert dialog.content.isChecked()  # a file stays here: content on by default
    assert "message content" in dialog.content.text()  # the setting is named in the dialog
    path = tmp_path / "run.otlp.json"
    assert dialog.export_to(OtlpTarget(file=path, content=dialog.content.isChecked()))
    qtbot.waitUntil(lambda: "written to" in window.statusBar().currentMessage(), timeout=10000)
    spans = spans_of(read_back(path.read_text(encoding="utf-8")))
    assert len(spans) == 6
    assert {k for s in spans for k in attrs(s) if k in CONTENT_KEYS} >= {"input.value"}


def test_an_endpoint_gets_no_content_and_keeps_its_header_secret(
    qtbot: QtBot, window: MainWindow, otlp_receiver: OtlpReceiver, tmp_path: Path
) -> None:
    finished_run(qtbot, window)
    dialog = open_otel_dialog(window, window, "run")
    dialog.to_endpoint.setChecked(True)
    assert not dialog.content.isChecked()  # to a remote endpoint: off unless turned on
    dialog.endpoint.setText(otlp_receiver.endpoint)
    name, value = dialog.header_rows[0]
    name.setText("x-api-key")
    value.setText("s3cret-value")
    dialog._on_export()
    qtbot.waitUntil(lambda: len(otlp_receiver.spans()) == 6, timeout=10000)
    qtbot.waitUntil(lambda: "6 spans sent" in window.statusBar().currentMessage(), timeout=10000)
    assert not {k for s in otlp_receiver.spans() for k in attrs(s) if k in CONTENT_KEYS}
    assert otlp_receiver.headers[0]["x-api-key"] == "s3cret-value"
    window.settings.sync()
    kept = Path(window.settings.fileName()).read_text(encoding="utf-8")
    assert "x-api-key" in kept
    assert "s3cret-value" not in kept
    assert window.keys.stored(header_account(otlp_receiver.endpoint, "x-api-key")) == (
        "s3cret-value"
    )


def test_a_bad_endpoint_is_one_line_in_the_dialog(qtbot: QtBot, window: MainWindow) -> None:
    dialog = open_otel_dialog(window, window, "run")
    dialog.to_endpoint.setChecked(True)
    dialog.endpoint.setText("ftp://collector")
    dialog._on_export()
    assert dialog.isVisible()
    assert dialog.error.text().startswith("⚠ ftp://collector: not an http(s) URL")
    assert window.otel.endpoint == ""  # nothing kept


def test_live_mode_sends_the_run_tab_and_the_lanes_as_they_stream(
    qtbot: QtBot, window: MainWindow, otlp_receiver: OtlpReceiver
) -> None:
    window.otel.keep(otlp_receiver.endpoint, {}, False, True)
    finished_run(qtbot, window)
    qtbot.waitUntil(lambda: len(otlp_receiver.spans()) == 6, timeout=10000)
    compare = window.compare
    compare.set_lanes(tuple(LaneConfig("scripted", "", "") for _ in range(4)))
    window.tabs.setCurrentWidget(compare)
    qtbot.mouseClick(compare.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: compare.running, timeout=5000)
    qtbot.waitUntil(lambda: not compare.running, timeout=30000)
    qtbot.waitUntil(lambda: len(otlp_receiver.spans()) == 6 * 5, timeout=10000)
    agents = [attrs(s) for s in otlp_receiver.spans() if s.name.startswith("invoke_agent")]
    lanes = sorted(a.get("react_sandbox.lane", "") for a in agents)
    assert lanes == ["", *sorted(lane.name for lane in compare.lanes)]


def test_live_mode_to_nowhere_is_one_status_line_and_the_run_goes_on(
    qtbot: QtBot, window: MainWindow
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    window.otel.keep(f"http://127.0.0.1:{port}/v1/traces", {}, False, True)
    finished_run(qtbot, window)
    assert window.run_pane.answer_label.text() == "$1,680 per year"
    qtbot.waitUntil(
        lambda: window.statusBar().currentMessage().startswith("OpenTelemetry: could not send"),
        timeout=20000,
    )
