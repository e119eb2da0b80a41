#!/usr/bin/env bash
# The window suite on the oldest PySide6 the dependency range allows (pyproject.toml's
# "PySide6-Essentials>=X"), every other package at its pin: a layout or a binding call that
# holds only on the newest Qt fails here. In an environment apart from the project's, so the
# pinned one stays as the README's commands made it.
set -euo pipefail
cd "$(dirname "$0")/.."

oldest=$(python3 -c '
import re, tomllib
deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]
spec = next(d for d in deps if d.lower().startswith("pyside6-essentials"))
print(re.search(r">=\s*([0-9.]+)", spec).group(1))')

env="${TMPDIR:-/tmp}/react-sandbox-oldest-qt"
requirements="$env.requirements.txt"
# The pinned set as requirements (uv export reads the pins from pyproject.toml), less Qt's two.
uv export -q --no-hashes --no-emit-project --format requirements-txt --group dev \
    | grep -viE '^(pyside6-essentials|shiboken6)==' > "$requirements"
uv venv -q --allow-existing "$env"
# --no-config: not the project's [tool.uv] pins, which name the newest PySide6.
VIRTUAL_ENV="$env" uv pip install -q --no-config -r "$requirements" -e . \
    "pyside6-essentials==$oldest" "shiboken6==$oldest"
echo "The window suite on PySide6 $("$env/bin/python" -c 'import PySide6; print(PySide6.__version__)'):"
"$env/bin/python" -m pytest -n auto -q -p no:cacheprovider tests/ui
