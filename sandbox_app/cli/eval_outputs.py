"""What ``react-sandbox eval`` writes, checked before the first run: the results file and
the report must be writable (or nothing runs: an hour of runs whose report cannot be saved
is an hour lost), the response cache only should be (it is a saving, not a result: one
that cannot be used is skipped with a line saying so).

A probe writes nothing the user sees: an existing file is opened to append and closed
untouched; a new one is tried as a temporary file beside it, then removed.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


class OutputError(ValueError):
    """An output that cannot be written; one line naming the option and the path."""


def check_writable(path: Path, option: str, *, others: dict[str, Path] | None = None) -> None:
    """Raise :class:`OutputError` unless ``path`` can be written as a file. ``others`` names
    other files it must not be (``{"the scenario": …}``): writing there would replace them."""
    for what, other in (others or {}).items():
        if _same(path, other):
            raise OutputError(f"{option} {path} is {what}; name another file")
    if path.is_dir():
        raise OutputError(f"{option} {path} is a folder; name a file in it")
    folder = path.parent
    if not folder.is_dir():
        problem = "is a file" if folder.exists() else "does not exist"
        raise OutputError(f"{option} {path}: the folder {folder} {problem}")
    try:
        if path.exists():
            with path.open("a", encoding="utf-8"):
                pass
        else:
            handle, probe = tempfile.mkstemp(dir=folder, prefix=".react-sandbox-probe-")
            os.close(handle)
            os.unlink(probe)
    except OSError as err:
        raise OutputError(f"{option} {path}: cannot write there ({err.strerror or err})") from None


def cache_problem(folder: Path) -> str | None:
    """Why the response cache cannot use ``folder`` (made if missing), or None if it can."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(dir=folder, suffix=".tmp")
        os.close(handle)
        os.unlink(probe)
    except FileExistsError:
        return f"{folder} is a file, not a folder"
    except OSError as err:
        return f"{folder}: {err.strerror or err}"
    return None


def _same(path: Path, other: Path) -> bool:
    try:
        return path.exists() and other.exists() and path.samefile(other)
    except OSError:
        return False
