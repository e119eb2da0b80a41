"""Start-up in instructions: a bare PySide6 window and the app, each to its first paint, under
callgrind (valgrind --tool=callgrind), side by side.

Wall-clock start-up (bench.startup) moves ±20 % with what else the machine runs; the number
of instructions a process executes until its window's first Paint event does not, so it is
what a change to start-up is judged by. Each probe exits (``os._exit``) inside the first
Paint event of the window it shows, the bare window and the app's alike (a filter on that
window only: one on the application would cross into Python for each of the app's
construction events, counting the probe), with its bytecode written first (as after an
install). ``python -m tests.perf.bench --startup`` prints these
with the wall-clock figures; valgrind is a system package (``apt-get install valgrind``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PAINT_PROBE = """
import os, sys
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QMainWindow, QWidget
app = QApplication(sys.argv)
class FirstPaint(QObject):
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint:
            os._exit(0)
        return False
watch = FirstPaint()
shown = QWidget.show
def show(self):  # a filter on the window shown, not on every object: the probe's own cost
    self.installEventFilter(watch)  # is then the same few events for both windows
    shown(self)
QWidget.show = show
if os.environ["PROBE"] == "minimal":
    window = QMainWindow()
    window.show()
    app.exec()
else:
    from sandbox_app.ui.window.app import run_app
    run_app(None)
"""


def _env(kind: str) -> dict[str, str]:
    env = {**os.environ, "PROBE": kind, "QT_QPA_PLATFORM": "offscreen"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    home = tempfile.mkdtemp()  # no settings: the offline model, as a first start
    env.update(HOME=home, XDG_CONFIG_HOME=home)
    return env


def instructions(kind: str) -> int:
    """Instructions to the first paint of ``kind`` ("minimal" or "app"), by callgrind."""
    command = [sys.executable, "-c", PAINT_PROBE]
    subprocess.run(command, cwd=ROOT, env=_env(kind), capture_output=True, timeout=120, check=True)
    with tempfile.TemporaryDirectory() as out:
        run = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/cg.out", *command],
            cwd=ROOT,
            env=_env(kind),
            capture_output=True,
            text=True,
            timeout=900,
            check=True,
        )
    found = re.search(r"Collected : (\d+)", run.stderr)
    if found is None:
        raise RuntimeError(f"callgrind said no count:\n{run.stderr[-2000:]}")
    return int(found.group(1))


def startup_instructions() -> dict[str, float]:
    """The bare window's and the app's instructions to first paint (millions), and their ratio;
    nothing when valgrind is not installed."""
    if shutil.which("valgrind") is None:
        return {}
    bare, app = instructions("minimal"), instructions("app")
    return {
        "startup_minimal_instructions_m": bare / 1e6,
        "startup_instructions_m": app / 1e6,
        "startup_instructions_ratio": app / bare,
    }
