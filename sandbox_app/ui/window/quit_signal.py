"""SIGTERM (a logout, ``kill``, a service manager stopping the app) closes the windows as
their close buttons do: each keeps its unsaved edits and saves its settings, the runs stop,
and the app exits 0. Without it the default action ended the process on the spot, and what
was typed since the last keep (ui/window/file_actions.py) was lost.

Python runs a signal handler only between bytecodes of the main thread, and the main thread
spends its life inside Qt's event loop (C++), so a handler alone could wait until the next
input or timer, for ever in an idle window. Python's own C handler can write the signal's
number to a socket (``signal.set_wakeup_fd``); a ``QSocketNotifier`` on the other end of the
pair wakes Qt's loop at once, and the slot (on the GUI thread) closes the windows. Chosen over
a periodic timer that lets Python look: that wakes the process several times a second for
its whole life and still answers up to a period late. A second SIGTERM while closing ends the
process at once (the default action is put back), as a user who insists expects.
"""

from __future__ import annotations

import signal
import socket
from types import FrameType

from PySide6.QtCore import QObject, QSocketNotifier
from PySide6.QtWidgets import QApplication


class QuitOnSignal(QObject):
    """Closes every window of ``app`` when the process gets SIGTERM. Made on the main thread
    (the only one that may install handlers), once, with the application; :meth:`close` when
    its loop has ended."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self.app = app
        self._reader, self._writer = socket.socketpair()
        for end in (self._reader, self._writer):
            end.setblocking(False)  # the C handler must never block; nor may the slot
        signal.set_wakeup_fd(self._writer.fileno(), warn_on_full_buffer=False)
        signal.signal(signal.SIGTERM, _noted)
        self._notifier = QSocketNotifier(self._reader.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._on_notifier_activated)

    def _on_notifier_activated(self) -> None:
        try:
            numbers = self._reader.recv(256)
        except OSError:  # nothing to read after all (woken for another reason)
            return
        if signal.SIGTERM in numbers:  # each byte is a signal's number
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            self.app.closeAllWindows()

    def close(self) -> None:
        """The default action back, and the socket pair closed."""
        self._notifier.setEnabled(False)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        self._reader.close()
        self._writer.close()


def _noted(signum: int, frame: FrameType | None) -> None:
    """Replaces the default action (the end of the process): the wake-up socket carries the
    signal to the Qt loop, which does the work there."""
