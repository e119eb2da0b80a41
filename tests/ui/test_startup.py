"""Start-up: the window's first frame comes before the SDKs, the keyring and the search library.

Structural checks, not timings: which modules a fresh process holds when the window's module
graph is imported, and when the real entry point (``run_app``) paints its first frame.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

import sandbox_app
from sandbox_app.backends.catalogue.keys import KeyStore, account_for
from sandbox_app.backends.catalogue.presets import PRESETS
from sandbox_app.ui.lane.backend_panel import BackendPanel
from sandbox_app.ui.window import app as app_module

ROOT = Path(__file__).resolve().parents[2]
# Each costs tens of milliseconds to a second to import (keyring also asks D-Bus for its
# backend); none is needed to draw the window.
HEAVY = ("openai", "mcp", "keyring", "bm25s", "numpy", "Stemmer", "regex", "httpx", "anyio")
# OpenTelemetry (File → Export as OpenTelemetry, live mode): loaded when first used.
HEAVY += ("opentelemetry", "google.protobuf")
# The window's own parts and the standard library's heavier modules that nothing on screen at
# the first frame needs: each is imported when first used (the Compare tab, Export run, About,
# an approval, a spread over repeats, kept edits first written) or after the frame (the version).
LATER = (
    "importlib.metadata",  # ~20 ms: the version, the plugin scan (only when a plugin is there)
    "statistics",  # with fractions and decimal
    "uuid",  # with platform
    "sandbox_app.ui.compare.compare_view",
    "sandbox_app.application.eval_runner",
    "sandbox_app.core.results.exports",
    "sandbox_app.ui.window.run_exports",
    "sandbox_app.ui.window.about",
    "sandbox_app.ui.tools.approval",
    "sandbox_app.ui.telemetry.otel_dialog",
    # The event loop's own modules: the first frame is drawn before they are imported
    # (ui/window/app.run_app), so nothing on its path may import them at module level.
    "asyncio",
    "qasync",
    "ssl",  # with socket: the SDK's HTTP library's TLS context (backends/transport/http_library.py)
    # The engine and the backends' network loop: a run's, not a panel's.
    "sandbox_app.core.running.engine",
    "sandbox_app.backends.transport.network_loop",
    # What a menu, a button or a right-click opens: imported when first used.
    "sandbox_app.core.results.compare",  # the comparison's rows (prices: results/prices.py)
    "sandbox_app.core.otel.otel_import",  # File → Open trace…
    "sandbox_app.core.otel.otel_attributes",  # export as OpenTelemetry, live mode
    "sandbox_app.ui.trace.trace_diff_dialog",  # the trace's menu: Compare with
    "sandbox_app.core.results.run_export",  # the trace's menu: Copy step as text
    "sandbox_app.ui.lane.add_to_test_set",  # the trace's menu: Add to test set…
    "sandbox_app.ui.tools.mcp_servers",  # MCP servers…
    "sandbox_app.backends.mcp_client.mcp_tools",  # the first MCP connection
    "sandbox_app.ui.tools.mock_tools_editor",  # Your tools…
    "sandbox_app.backends.local_servers.health",  # the server check
    "sandbox_app.ui.results.matrix_dialog",  # Matrix view… (the Test set tab, History)
    "sandbox_app.core.comparing.results_matrix",
    "sandbox_app.ui.results.pass_chart",  # its Chart tab, and the plotting library under it
    "pyqtgraph",
    # The kinds not chosen (the catalogue lists them as data: backends/registry.py; the
    # window below was last used with OpenAI, so its kind is imported), the history (a kept
    # run's grade, the Versions tab: made when first shown) and the prompt diff.
    "sandbox_app.backends.messages_api.anthropic_kind",
    "sandbox_app.backends.responses_api.responses_kind",
    "sandbox_app.backends.gemini_api.gemini_kind",
    "sandbox_app.backends.ollama_api.ollama_kind",
    "sandbox_app.ui.versions.versions_panel",
    "sandbox_app.core.history.history_db",
    "sqlite3",
    "difflib",
)
# The app's own modules the first frame may import (145 on 2026-12-03, tests/perf/RESULTS.md's
# start-up section): a change that needs more says why there, with its instruction count.
FIRST_FRAME_BUDGET = 150
# Imported before the window's first thread (ui/window/app.import_before_threads), not
# before its frame.
GUARD = "pydantic"


# The entry point as `react-sandbox` runs it, last used with a server (whose key the keyring
# may hold). At the first paint of a window it prints the heavy modules already imported; then
# it waits until the warm-up has imported the SDK and the key status has asked the keyring,
# and closes the window.
SCRIPT = """
import json, sys
from PySide6.QtCore import QEvent, QObject, QSettings, QTimer
from PySide6.QtWidgets import QApplication, QMenu, QMessageBox, QWidget
from sandbox_app.ui.window import app as app_module

HEAVY = json.loads(sys.argv[1])
settings = QSettings(app_module.ORGANIZATION, app_module.APPLICATION)
settings.setValue("backend/preset", "openai")
settings.sync()
app = QApplication(sys.argv)
seen = {}

class FirstPaint(QObject):
    def eventFilter(self, watched, event):
        window = isinstance(watched, QWidget) and watched.isWindow()  # not X11's QWindow
        if event.type() == QEvent.Type.Paint and window and "window" not in seen:
            seen["window"] = watched
            seen["at_first_paint"] = [name for name in HEAVY if name in sys.modules]
            seen["status_at_first_paint"] = watched.backend_panel.key_status.text()
            QTimer.singleShot(0, after)
        return False

def after():
    window = seen["window"]
    if "openai" in sys.modules and "bm25s" in sys.modules and "keyring" in sys.modules:
        seen["status_after"] = window.backend_panel.key_status.text()
        use_what_came_later(window)
        window.close()
    else:
        QTimer.singleShot(10, after)

def use_what_came_later(window):  # what the first frame left out, first used
    window.tabs.setCurrentIndex(1)
    seen["compare_lanes"] = len(window.compare.lanes) if window.showing_comparison() else 0
    seen["version"] = QApplication.applicationVersion()
    help_menu = next(m for m in window.menuBar().findChildren(QMenu) if m.title() == "&Help")
    about = next(a for a in help_menu.actions() if "About" in a.text())
    def read_and_close():
        boxes = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox)]
        if not boxes:
            QTimer.singleShot(10, read_and_close)
            return
        seen["about"] = boxes[0].text()
        boxes[0].accept()
    QTimer.singleShot(0, read_and_close)
    about.trigger()  # modal: returns once read_and_close has closed it

watch = FirstPaint()
app.installEventFilter(watch)
QTimer.singleShot(60_000, lambda: (print("no warm-up within 60 s", flush=True), app.exit(3)))
code = app_module.run_app(None)
del seen["window"]
print(json.dumps(seen), flush=True)
sys.exit(code)
"""


def _clean_env(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    env["QT_QPA_PLATFORM"] = "offscreen"
    env.pop("OPENAI_API_KEY", None)  # the status then has to ask the keyring
    return env


def _fresh_process(tmp_path: Path, *args: str) -> tuple[Any, str]:
    """Run ``python -c …`` in a fresh process; its last line as JSON, and what to show."""
    result = subprocess.run(
        [sys.executable, "-c", *args],
        cwd=ROOT,
        env=_clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    shown = f"exit code {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.returncode == 0, shown
    return json.loads(result.stdout.splitlines()[-1]), shown


def test_importing_the_window_loads_no_sdk(tmp_path: Path) -> None:
    code = (
        "import json, sys\n"
        "import sandbox_app.ui.window.app, sandbox_app.ui.window.main_window\n"
        f"print(json.dumps([name for name in {[*HEAVY, *LATER]!r} if name in sys.modules]))"
    )
    loaded, shown = _fresh_process(tmp_path, code)
    assert loaded == [], shown


def test_the_first_frame_comes_before_the_sdk_and_the_keyring(tmp_path: Path) -> None:
    seen, shown = _fresh_process(tmp_path, SCRIPT, json.dumps([*HEAVY, *LATER, GUARD]))
    assert seen["at_first_paint"] == [], shown
    assert seen["status_at_first_paint"] == "Looking in the system keyring…", shown
    # After the frame: the warm-up ran (the test's wait) and the status asked the keyring,
    # which holds no key here.
    assert seen["status_after"] == "Needs a key (OPENAI_API_KEY).", shown
    # What the frame left out, first used: the comparison's two lanes, the version in About.
    assert seen["compare_lanes"] == 2, shown
    assert seen["version"] == sandbox_app.__version__, shown
    assert f"ReAct Sandbox {sandbox_app.__version__}" in seen["about"], shown


def test_the_command_that_opens_the_window_imports_none_of_the_terminal_commands(
    tmp_path: Path,
) -> None:
    """`react-sandbox` (cli.main) imports the window and nothing of `run` or `eval` (the
    engine's printer, MCP, the exports) or the version; --version still answers."""
    code = (
        "import json, sys\n"
        "import sandbox_app.cli.main\n"
        "print(json.dumps(sorted(name for name in sys.modules if name.startswith("
        "('sandbox_app.', 'importlib.metadata'))"
        " and name not in ('sandbox_app.cli', 'sandbox_app.cli.main'))))"
    )
    loaded, shown = _fresh_process(tmp_path, code)
    assert loaded == [], shown
    version = subprocess.run(
        [sys.executable, "-m", "sandbox_app", "--version"],
        cwd=ROOT,
        env=_clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (version.returncode, version.stdout) == (0, f"react-sandbox {sandbox_app.__version__}\n")


def test_the_key_status_asks_the_keyring_once_it_is_open(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    keys = KeyStore(keyring_open=False)
    monkeypatch.setattr(keys, "stored", lambda account: "sk-from-keyring")
    panel = BackendPanel(keys)
    qtbot.addWidget(panel)
    panel.select("OpenAI")
    assert panel.key_status.text() == "Looking in the system keyring…"
    keys.keyring_open = True  # as ui/window/app.py does after the first frame
    panel.show_key_status()
    assert panel.key_status.text() == "Key from the system keyring."


def test_a_request_asks_the_keyring_even_before_the_first_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only the status line waits for the window: a run's key is looked up when it is needed."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    keys = KeyStore(keyring_open=False)
    monkeypatch.setattr(keys, "stored", lambda account: "sk-from-keyring")
    account = account_for(PRESETS[0], PRESETS[0].base_url)
    assert keys.resolve(account) == ("", "unasked")
    decision = keys.decide(account, PRESETS[0].base_url)
    assert (decision.key, decision.source) == ("sk-from-keyring", "keyring")


# Presses Run while the window is being shown, before its first paint (a script can; a user
# cannot): at the run's start, before its thread, the import guard has run.
EARLY_RUN = """
import json, sys
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication
from sandbox_app.ui.window.app import run_app
from sandbox_app.ui.window.main_window import MainWindow

app = QApplication(sys.argv)
seen = {}

def on_running(running):
    if running and "guard" not in seen:
        seen["guard"] = "pydantic._internal._validators" in sys.modules

class EarlyRun(QObject):
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Show and isinstance(watched, MainWindow):
            app.removeEventFilter(self)
            seen["window"] = watched
            watched.run_pane.runningChanged.connect(on_running)
            watched.run_button.click()
            QTimer.singleShot(0, done)
        return False

def done():
    window = seen["window"]
    if window.controller.running or not window.answer_label.text():
        QTimer.singleShot(10, done)
        return
    seen["answer"] = window.answer_label.text()
    window.close()

watch = EarlyRun()
app.installEventFilter(watch)
QTimer.singleShot(60_000, lambda: (print("no answer within 60 s", flush=True), app.exit(3)))
code = run_app(None)
del seen["window"]
print(json.dumps(seen), flush=True)
sys.exit(code)
"""


def test_a_run_started_before_the_first_frame_comes_after_the_import_guard(
    tmp_path: Path,
) -> None:
    seen, shown = _fresh_process(tmp_path, EARLY_RUN)
    assert seen["guard"] is True, shown
    assert seen["answer"], shown


# The real entry point with no settings (as the benchmark starts it): what the Run tab shows at
# the window's first paint, and the same once the loop has run and the warm-up is done.
FIRST_FRAME = """
import json, sys
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget
from sandbox_app.ui.window.app import run_app

app = QApplication(sys.argv)
seen = {}

def on_screen(window):
    tools, caption = window.tool_panel, window.column.bar.caption
    return {
        "title": window.windowTitle(),
        "tab": window.tabs.tabText(window.tabs.currentIndex()),
        "prompt": window.prompt_panel.template_edit.toPlainText(),
        "question": window.prompt_panel.question_edit.toPlainText(),
        "tools": [[name, box.isChecked()] for name, box in tools.checkboxes.items()
                  if box.isVisible()],
        "max_steps": [tools.max_steps_slider.value(), tools.max_steps_slider.isVisible()],
        "model": caption.text() if caption.isVisible() else "",
        "run": [window.run_button.text(), window.run_button.isEnabled()],
        "trace": window.trace.isVisible(),
        "menus": [action.text() for action in window.menuBar().actions()],
    }

class FirstPaint(QObject):
    def eventFilter(self, watched, event):
        window = isinstance(watched, QWidget) and watched.isWindow()
        if event.type() == QEvent.Type.Paint and window and "window" not in seen:
            seen["window"] = watched
            seen["loop_modules"] = [n for n in ("asyncio", "qasync") if n in sys.modules]
            seen["own_modules"] = sorted(n for n in sys.modules if n.startswith("sandbox_app."))
            seen["first"] = on_screen(watched)
            QTimer.singleShot(0, later)
        return False

def later():
    if "openai" in sys.modules and "bm25s" in sys.modules:  # the warm-up is done
        seen["later"] = on_screen(seen["window"])
        seen.pop("window").close()
    else:
        QTimer.singleShot(10, later)

watch = FirstPaint()
app.installEventFilter(watch)
QTimer.singleShot(60_000, lambda: (print("no warm-up within 60 s", flush=True), app.exit(3)))
code = run_app(None)
print(json.dumps(seen), flush=True)
sys.exit(code)
"""


def test_the_first_frame_is_the_run_tab_as_it_is_once_everything_is_loaded(
    tmp_path: Path,
) -> None:
    """Not a placeholder: the first paint is the Run tab with its content, before the event
    loop's modules are imported, and nothing on it changes once they and the warm-up are."""
    seen, shown = _fresh_process(tmp_path, FIRST_FRAME)
    first = seen["first"]
    assert seen["loop_modules"] == [], shown
    assert len(seen["own_modules"]) <= FIRST_FRAME_BUDGET, shown
    assert first == seen["later"], shown
    assert (first["tab"], first["trace"]) == ("Run", True), shown
    assert "{tools}" in first["prompt"], shown
    assert first["question"], shown
    assert ["calculator", True] in first["tools"], shown
    steps, slider_shown = first["max_steps"]
    assert steps > 0, shown
    assert slider_shown is True, shown
    assert first["model"] == "Scripted (offline) · scripted", shown
    assert first["run"] == ["Run", True], shown
    assert first["menus"][0] == "&File", shown
    assert "&Help" in first["menus"], shown


# Keys typed while the first frame is drawn, before the event loop runs: they wait in the queue
# and reach the editor once it does.
TYPED_EARLY = """
import json, sys
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication, QWidget
from sandbox_app.ui.window.app import run_app

app = QApplication(sys.argv)
seen = {}

class FirstPaint(QObject):
    def eventFilter(self, watched, event):
        window = isinstance(watched, QWidget) and watched.isWindow()
        if event.type() == QEvent.Type.Paint and window and "window" not in seen:
            seen["window"] = watched
            seen["loop_modules"] = [n for n in ("asyncio", "qasync") if n in sys.modules]
            editor = watched.prompt_panel.question_edit
            seen["before"] = editor.toPlainText()
            for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
                key = QKeyEvent(kind, Qt.Key.Key_Z, Qt.KeyboardModifier.NoModifier, "z")
                app.postEvent(editor, key)
            QTimer.singleShot(0, later)
        return False

def later():
    if "asyncio" in sys.modules:  # the loop runs
        window = seen.pop("window")
        seen["after"] = window.prompt_panel.question_edit.toPlainText()
        window.close()
    else:
        QTimer.singleShot(10, later)

watch = FirstPaint()
app.installEventFilter(watch)
QTimer.singleShot(60_000, lambda: (print("no loop within 60 s", flush=True), app.exit(3)))
code = run_app(None)
print(json.dumps(seen), flush=True)
sys.exit(code)
"""


def test_keys_typed_before_the_loop_runs_reach_the_editor(tmp_path: Path) -> None:
    seen, shown = _fresh_process(tmp_path, TYPED_EARLY)
    assert seen["loop_modules"] == [], shown
    assert seen["after"] == "z" + seen["before"], shown  # typed where the cursor is: the start


# The window's modules past PySide6's import hook (ui/window/app.own_modules): its internals,
# so only on the PySide6 versions it knows; any other keeps the hook.
OWN_MODULES = """
import builtins, json, sys
import PySide6.QtWidgets
from sandbox_app.ui.window import app
table = sys.modules["shibokensupport.feature"].pyside_feature_dict
hooked, seen = builtins.__import__, {"version": app.pyside_version()}
with app.own_modules():
    seen["past_the_hook"] = builtins.__import__ is not hooked
    import sandbox_app.core.results.junit
seen["hook_back"] = builtins.__import__ is hooked
seen["recorded"] = table.get("sandbox_app.core.results.junit")
app.HOOK_KNOWN = ((6, 0), (6, 1))  # as a PySide6 it does not know would be
with app.own_modules():
    seen["unknown_past_the_hook"] = builtins.__import__ is not hooked
print(json.dumps(seen))
"""


def test_the_window_passes_pysides_import_hook_only_on_a_pyside_it_knows(tmp_path: Path) -> None:
    seen, shown = _fresh_process(tmp_path, OWN_MODULES)
    low, high = app_module.HOOK_KNOWN
    # The installed PySide6 is one the range allows, so one whose hook is known.
    assert list(low) <= seen["version"] <= list(high), shown
    assert (seen["past_the_hook"], seen["hook_back"], seen["recorded"]) == (True, True, 0), shown
    assert seen["unknown_past_the_hook"] is False, shown
