"""Move the pinned dependency set forward: resolve pyproject.toml's ranges afresh (every
platform, Python 3.11 and up) and write the result as exact pins into its ``[tool.uv]``
block, which ``uv run`` (the README's commands) and ``.ci/run`` install from.

    python3 .ci/update_pins.py      # then: bash .ci/run, and commit pyproject.toml if green

Pins are ``name==version`` only, never an index URL, so the repository names no registry.
Only the standard library and the ``uv`` command are needed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
BLOCKS = ("constraint-dependencies", "build-constraint-dependencies")


def _block(name: str) -> re.Pattern[str]:
    # One TOML array per line group: `name = [` … `]`, the form this script writes.
    return re.compile(rf"^{re.escape(name)} = \[\n(?:.*\n)*?\]\n", re.MULTILINE)


def _without_pins(text: str) -> str:
    for name in BLOCKS:
        text = _block(name).sub(f"{name} = []\n", text)
    return text


def _compile(folder: Path, *args: str) -> list[str]:
    command = [
        "uv", "pip", "compile", *args, "--universal", "--python-version", "3.11",
        "--no-header", "--no-annotate", "--quiet", "--upgrade",
    ]  # fmt: skip
    out = subprocess.run(command, cwd=folder, check=True, capture_output=True, text=True).stdout
    return [line.strip() for line in out.splitlines() if line.strip() and " @ " not in line]


def _array(name: str, pins: list[str]) -> str:
    return f"{name} = [\n" + "".join(f'    "{pin}",\n' for pin in pins) + "]\n"


def main() -> int:
    if shutil.which("uv") is None:
        sys.stderr.write("uv is needed: pip install uv\n")
        return 1
    text = PYPROJECT.read_text(encoding="utf-8")
    project = tomllib.loads(text)
    groups = [f"--group={g}" for g in project.get("dependency-groups", {})]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "pyproject.toml").write_text(_without_pins(text), encoding="utf-8")
        # The extras too (react-sandbox[ray]): an extra installs the pins CI tested as well.
        runtime = _compile(folder, "pyproject.toml", "--all-extras", *groups)
        (folder / "build.in").write_text("\n".join(project["build-system"]["requires"]))
        build = _compile(folder, "build.in")
    for name, pins in zip(BLOCKS, (runtime, build), strict=True):
        found = _block(name).search(text)
        if found is None:
            sys.stderr.write(f"pyproject.toml has no `{name} = [` block to write\n")
            return 1
        text = text[: found.start()] + _array(name, pins) + text[found.end() :]
    PYPROJECT.write_text(text, encoding="utf-8")
    sys.stdout.write(f"pinned {len(runtime)} packages and {len(build)} build packages\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
