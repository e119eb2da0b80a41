"""Each window's unsaved edits on disk, kept while the user types — not only at close.

A window writes its :class:`~sandbox_app.core.scenarios.document.KeptEdits` to a file of its own
(one
per window, so two windows or two processes never overwrite each other's), half a second after
the last change, and at least every second while the user types without a pause
(ui/window/file_actions.py), atomically (a temporary file, then a rename), so a crash or a
power cut loses at most about a second of typing; SIGTERM closes the window, which keeps all of
it (ui/window/quit_signal.py). The file is held by a lock
(``QLockFile``: it knows a dead process's lock from a live one's, on every platform). At start
a window takes over the newest set of kept edits whose window is gone — its lock released at
a normal close, or stale because its process died — and goes on keeping its edits there.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from PySide6.QtCore import QLockFile, QSettings, QStandardPaths

from sandbox_app.core.scenarios.document import KeptEdits
from sandbox_app.core.untrusted.file_reader import ReadError, read_text

MAX_KEPT_BYTES = 16 * 1024 * 1024  # a scenario is at most 5 MB; kept edits hold two


def kept_edits_folder(settings: QSettings) -> Path:
    """Beside an INI settings file (tests, portable set-ups), else the app's data folder."""
    if settings.format() == QSettings.Format.IniFormat and settings.fileName():
        ini = Path(settings.fileName())
        return ini.with_name(ini.stem + ".unsaved")
    data = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    return Path(data) / "unsaved"


class KeptEditsFile:
    """One window's kept edits: the file it owns (if any) and the lock that says so."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path: Path | None = None
        self._lock: QLockFile | None = None
        self.left_behind = 0  # other windows' kept edits still waiting for a window

    def claim(self) -> KeptEdits | None:
        """Take over the newest kept edits no live window holds, or None."""
        try:
            candidates = sorted(
                self.folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True
            )
        except OSError:  # no folder yet, or unreadable: nothing kept
            return None
        for candidate in candidates:
            lock = _lock_for(candidate)
            if not lock.tryLock(0):
                continue  # a window that is still open
            kept = _read(candidate)
            if kept is None:  # damaged beyond reading: left as it is, for a person to look at
                lock.unlock()
                continue
            self.path, self._lock = candidate, lock
            self.left_behind = sum(
                1 for other in candidates if other != candidate and _lock_for(other).tryLock(0)
            )
            return kept
        return None

    def write(self, kept: KeptEdits | None) -> None:
        """Keep ``kept`` (None: nothing unsaved, so the file goes). Raises OSError."""
        if kept is None:
            self._forget()
            return
        if self.path is None:
            import uuid  # with the platform module it loads: not before the first frame

            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / f"{uuid.uuid4().hex}.json"
            lock = _lock_for(path)
            if not lock.tryLock(0):
                raise OSError(f"cannot lock {path}")
            self.path, self._lock = path, lock
        handle, temporary = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(kept.to_json())
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def release(self) -> None:
        """The window closed: its kept edits (if any) wait for the next window."""
        if self._lock is not None:
            self._lock.unlock()
        self.path, self._lock = None, None

    def _forget(self) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)
        self.release()


def _lock_for(path: Path) -> QLockFile:
    lock = QLockFile(str(path) + ".lock")
    lock.setStaleLockTime(0)  # only a dead owner makes a lock stale, never its age
    return lock


def _read(path: Path) -> KeptEdits | None:
    """Through the one reader (regular files only, the limit held while reading)."""
    try:
        return KeptEdits.from_json(read_text(path, MAX_KEPT_BYTES, "kept edits"))
    except (ReadError, OSError):
        return None
