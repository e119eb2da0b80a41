"""The example plugin (tests/plugin_example) and the badly behaved ones (tests/plugin_hostile)
installed as real distributions into a directory of their own, once per test session:
discovery then goes through importlib.metadata's entry points exactly as for a user's
installed plugin."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UV = shutil.which("uv")


@pytest.fixture(scope="session")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    if UV is None:
        pytest.skip("uv installs the example plugin")
    target = tmp_path_factory.mktemp("plugin-site")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    done = subprocess.run(
        [
            UV,
            "pip",
            "install",
            "--python",
            sys.executable,
            "--target",
            str(target),
            str(ROOT / "tests" / "plugin_example"),
            str(ROOT / "tests" / "plugin_hostile"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return target
