"""The app as people install it: a wheel into a fresh virtual environment, away from the
checkout, and the source install's own --self-test. (The frozen bundle is built and checked
by packaging/build.sh, from .ci/run when CI_PACKAGING=1.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox_app import __version__

ROOT = Path(__file__).resolve().parents[1]
UV = shutil.which("uv")


def clean_env(home: Path | None = None) -> dict[str, str]:
    """No virtual environment, no PYTHONPATH, no display: nothing that points at this checkout
    (the network settings and cache uv needs to reach the package index stay). ``home``: a
    home of its own for the app, so no settings of the user's are read or written."""
    leaks = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "UV_PROJECT_ENVIRONMENT", "DISPLAY")
    env = {k: v for k, v in os.environ.items() if k not in leaks}
    env |= {"NO_COLOR": "1", "QT_QPA_PLATFORM": "offscreen"}
    if home is not None:
        env |= {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    return env


def run(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_the_source_install_passes_its_self_test(tmp_path: Path) -> None:
    done = run([sys.executable, "-m", "sandbox_app", "--self-test"], tmp_path, clean_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "self-test passed" in done.stdout


@pytest.mark.skipif(UV is None, reason="uv builds the wheel and the fresh environment")
def test_the_wheel_installs_into_a_fresh_venv_and_works_away_from_the_checkout(
    tmp_path: Path,
) -> None:
    assert UV is not None
    env = clean_env()
    built = run([UV, "build", "--wheel", "--out-dir", str(tmp_path / "wheels")], ROOT, env)
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "wheels").glob("react_sandbox-*.whl")
    venv = tmp_path / "venv"
    assert run([UV, "venv", "--python", sys.executable, str(venv)], tmp_path, env).returncode == 0
    python = venv / "bin" / "python"
    installed = run([UV, "pip", "install", "--python", str(python), str(wheel)], tmp_path, env)
    assert installed.returncode == 0, installed.stderr
    app = str(venv / "bin" / "react-sandbox")
    away = tmp_path / "elsewhere"
    away.mkdir()
    env = clean_env(home=away)

    version = run([app, "--version"], away, env)
    assert version.stdout.strip() == f"react-sandbox {__version__}"
    # The scenarios come from the installed package, not from this checkout.
    where = run(
        [
            str(python),
            "-c",
            "from sandbox_app.core.scenarios.scenario_file import scenarios_dir;"
            "print(scenarios_dir())",
        ],
        away,
        env,
    )
    assert where.stdout.startswith(str(venv)), where.stdout + where.stderr
    answer = run([app, "run"], away, env)
    assert answer.returncode == 0, answer.stderr
    assert "Final answer: $1,680 per year" in answer.stdout
    self_test = run([app, "--self-test"], away, env)
    assert self_test.returncode == 0, self_test.stderr
