"""Show the main window, then run the Qt application on a qasync event loop.

The window's first frame comes first: the event loop's own modules (asyncio, qasync: ~40 ms)
are imported once it is drawn (:func:`run_app`), and what the frame does not show waits for
it (:class:`FirstFrame`).
"""

from __future__ import annotations

import builtins
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING

import PySide6
from PySide6.QtCore import QEvent, QEventLoop, QObject, QSettings, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QWidget

import sandbox_app
from sandbox_app import APP_ID
from sandbox_app.lazy_import import lazy_import
from sandbox_app.ui.common import app_rules, gc_policy

if TYPE_CHECKING:
    import asyncio

    import qasync

    # Imported by run_app, past PySide6's import hook (own_modules).
    from sandbox_app.ui.window.main_window import MainWindow
else:  # the event loop's modules: imported by run_app once the first frame is drawn
    asyncio = lazy_import("asyncio")
    qasync = lazy_import("qasync")

log = logging.getLogger(__name__)
GIL_SWITCH_INTERVAL_S = 0.001
ORGANIZATION = "ReAct Sandbox"
APPLICATION = "ReAct Sandbox"
# A window that is never painted (started minimised, no screen) still gets its warm-up.
FIRST_FRAME_FALLBACK_MS = 3000


def use_a_utf8_locale() -> None:
    """Under the C locale (no LANG: a service, a bare container, the frozen bundle, whose
    Python does not coerce the locale as the interpreter does) Qt prints four lines of warning
    and switches to C.UTF-8 anyway. Switch first, quietly, unless LC_ALL says otherwise."""
    import locale

    if os.environ.get("LC_ALL") or "UTF" in locale.nl_langinfo(locale.CODESET).upper():
        return
    for name in ("C.UTF-8", "C.utf8", "en_US.UTF-8"):
        try:
            locale.setlocale(locale.LC_CTYPE, name)
        except locale.Error:
            continue
        os.environ["LC_CTYPE"] = name  # Qt reads the environment again when it starts
        return


def prepare_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Set up what asyncio's own run_forever does and qasync's does not.

    * Blocking helpers (DNS lookups, the search index) run on plain Python threads: qasync's
      default executor starts ten QThreads per loop, and nothing run there needs Qt.
    * Async generators abandoned mid-iteration (an HTTP stream cut short) are finalised as
      tasks on this loop. Without these hooks Python closes them from the garbage collector,
      outside any task, and the HTTP library's cleanup fails with "not in async context".
    * The GUI thread shares the GIL with the network thread (backends/transport/network_loop.py),
    which
      reads thousands of chunks a second; by default a thread waits up to 5 ms for the GIL,
      a third of a frame, several times a frame. 1 ms keeps the window's frames on time.
    """
    from concurrent.futures import ThreadPoolExecutor

    loop.set_default_executor(ThreadPoolExecutor(max_workers=4, thread_name_prefix="sandbox"))
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    if isinstance(loop, asyncio.BaseEventLoop):
        sys.set_asyncgen_hooks(
            firstiter=loop._asyncgen_firstiter_hook,  # type: ignore[attr-defined]
            finalizer=loop._asyncgen_finalizer_hook,  # type: ignore[attr-defined]
        )


async def _main(window: MainWindow, first_frame: FirstFrame, scenario: str | None) -> int:
    prepare_loop(asyncio.get_running_loop())
    closed = asyncio.Event()
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.lastWindowClosed.connect(closed.set)
    if not window.isVisible():  # closed before the loop ran (a script can, at its first frame)
        closed.set()
    warm_up: list[asyncio.Future[None]] = []

    def after_first_frame() -> None:
        # The guard, the key status's keyring look-up and the SDK's import would each delay
        # the frame; the guard comes before the first thread (the warm-up's or a run's).
        if closed.is_set():
            return
        import_before_threads()
        # Read from the installed metadata (importlib.metadata: ~20 ms); nothing shows it sooner.
        app.setApplicationVersion(sandbox_app.__version__)
        window.keys.keyring_open = True
        window.backend_panel.show_key_status()
        warm_up.append(asyncio.get_running_loop().run_in_executor(None, import_heavy_modules))
        warm_up[0].add_done_callback(lambda _: gc_policy.settle_after_start())

    first_frame.then(after_first_frame)  # at once if the frame is drawn already
    if scenario:
        # Shown first: edits kept from last time are offered (save, discard or keep editing)
        # in a dialog over the window before the named file replaces them.
        window.files.open_from_command_line(scenario)
    await closed.wait()
    # The window is gone; end the runs (if any) and close their streams before the loop
    # stops, so nothing is left pending when the process exits.
    await window.shutdown()
    for work in warm_up:
        await work
    return 0


class FirstFrame(QObject):
    """Calls what :meth:`then` is given once, when ``window``'s first frame is on screen.

    Made before ``show()``. A top-level widget's first Paint event comes with the window's
    first expose (so on the offscreen platform and under X11); the call is queued behind it,
    so it runs once that paint is done and flushed. A zero timer at ``show()`` would not do:
    X11's expose arrives a round trip later, after such a timer. The frame may come before
    the event loop runs (run_app), before there is anything to call: then it is called when
    given.
    """

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._then: Callable[[], None] | None = None
        self._due = self._done = False
        window.installEventFilter(self)
        QTimer.singleShot(FIRST_FRAME_FALLBACK_MS, self, self.now)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            QTimer.singleShot(0, self, self.now)
        return False

    def then(self, call: Callable[[], None]) -> None:
        self._then = call
        if self._due:
            self.now()

    def now(self) -> None:
        """The frame is drawn (or a run starts first): call what was given, once."""
        self._due = True
        if self._then is not None and not self._done:
            self._done = True
            self._then()


def import_heavy_modules() -> None:
    """Import the model SDK and the search library off the GUI thread while the user reads.

    Both are imported lazily so the window opens fast; doing it here, in the background,
    keeps their second or so of import time from freezing the first run that needs them.
    It starts after the window's first frame (:class:`FirstFrame`): begun at ``show()``, its
    imports took the GIL from the first paint.
    """
    try:
        import bm25s  # noqa: F401

        from sandbox_app.backends.chat_completions.openai_compat import warm_up

        warm_up()
    except Exception:  # best effort: the first run would only be slower, so never fail here
        log.exception("background warm-up failed")


def import_before_threads() -> None:
    """Import, while no other thread runs, a module that is unsafe to import next to one.

    PySide6's import hook (GIL builds) inspects each newly imported module for PySide use;
    meanwhile it sets ``builtins.__import__`` back to the plain import, process-wide, so that
    imports made by the inspection are not inspected. The inspection asks
    ``hasattr(module, "__wrapped__")``, which a pydantic module answers by importing
    ``pydantic._internal._validators``, which imports pydantic modules in turn. If another
    thread ends its own inspection meanwhile, it puts the hook back early: the nested imports
    are inspected too, reach the half-imported ``_validators``, and the SDK's import fails with
    "cannot import name 'import_string' from partially initialized module
    'pydantic._internal._validators'". The first run then failed with "Cannot use the base
    URL …" (the app test: about 1 run in 10 under load), or the warm-up did. Once
    ``_validators`` is imported the nested imports find it and nothing recurses. ~30 ms, so
    it waits for the first frame, or a run started before it (``_main``): either comes before
    any other thread.
    """
    with suppress(ImportError):  # the SDK's dependency, not ours: without it, nothing to guard
        import pydantic._internal._validators  # noqa: F401


# The PySide6 versions whose import hook own_modules knows (pyproject's range: >=6.8,<6.12).
HOOK_KNOWN = ((6, 8), (6, 11))


def pyside_version() -> tuple[int, int]:
    major, minor = PySide6.__version_info__[:2]
    return int(major), int(minor)


@contextmanager
def own_modules() -> Iterator[None]:
    """Import the app's own modules (the window's ~130) past PySide6's import hook.

    Once PySide6 is imported, every import goes through its hook (``__feature__`` support:
    ``from __feature__ import snake_case``), which reads each new module's source with
    ``inspect.getsource`` to see whether it names PySide6: ~20 ms of the window's start-up.
    The app selects no feature, so what the hook would record for its modules is known: "no
    feature" (0), which is set here without reading them. Only while nothing else imports
    (before the first frame, the first thread). These are PySide6's internals, so only on the
    versions the dependency range allows and CI runs (:data:`HOOK_KNOWN`, checked by
    ``tests/ui/test_startup.py`` on the installed one); any other PySide6, or one without
    these names, keeps its hook: the window then starts ~20 ms later, and works the same.
    """
    feature = sys.modules.get("shibokensupport.feature")
    table = getattr(feature, "pyside_feature_dict", None)
    plain, hooked = getattr(builtins, "__orig_import__", None), builtins.__import__
    known = HOOK_KNOWN[0] <= pyside_version() <= HOOK_KNOWN[1]
    if not known or plain is None or plain is hooked or not isinstance(table, dict):
        yield
        return
    before = set(sys.modules)
    builtins.__import__ = plain
    try:
        yield
    finally:
        builtins.__import__ = hooked
        for name in sys.modules.keys() - before:
            if name.startswith("sandbox_app."):
                table.setdefault(name, 0)


def app_icon() -> QIcon | None:
    """The application icon, from the package's resources (also inside a frozen bundle)."""
    from sandbox_app.core.scenarios.scenario_file import scenarios_dir

    path = scenarios_dir().parent / "icons" / f"{APP_ID}.svg"
    return QIcon(str(path)) if path.is_file() else None


def app_wide_rules(app: QApplication) -> None:
    """What holds for every widget of ``app``, those made later too: the application's own
    rules, given wherever an application runs the window (here, the self-test, the tests)."""
    app_rules.install(app)  # the wheel changes only a focused control; dialogs fit the screen


def run_app(scenario: str | None = None) -> int:
    existing = QApplication.instance()
    use_a_utf8_locale()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv)
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    # The window is matched to its desktop file and icon by this (Wayland's app id).
    app.setDesktopFileName(APP_ID)
    # qasync drives asyncio from Qt's event loop: runs stream while the window stays live.
    app.setQuitOnLastWindowClosed(False)  # _main decides when to stop, after cleanup
    # Built before the loop starts: construction is synchronous Qt work, not an asyncio step.
    # The keyring waits for the first frame (after_first_frame in _main).
    with own_modules():
        from sandbox_app.backends.catalogue.keys import KeyStore
        from sandbox_app.ui.window.main_window import MainWindow
        from sandbox_app.ui.window.quit_signal import QuitOnSignal

        icon = app_icon()
        if icon is not None:
            app.setWindowIcon(icon)
        window = MainWindow(QSettings(ORGANIZATION, APPLICATION), KeyStore(keyring_open=False))
    first_frame = FirstFrame(window)
    # SIGTERM closes the window as its close button does: from the first frame on (a script
    # may type while it is drawn), so before it.
    quit_on_signal = QuitOnSignal(app)

    def on_running_changed(_running: bool) -> None:
        # A run started before the first paint (a script can) gets the guard before its
        # thread, even before the loop runs, and the rest of the frame's wait is over.
        import_before_threads()
        first_frame.now()

    window.run_pane.runningChanged.connect(on_running_changed)
    # The rules' filter sees every event of every object: installed once the window is built
    # (its widgets' thousands of construction events never cross into Python: ~6 % of the
    # instructions to the first frame), before it is shown (each widget is polished, and the
    # window fitted to its screen, as it shows).
    app_wide_rules(app)
    window.show()
    # The first frame, drawn before the loop's modules are imported. Only that: what a user
    # types or clicks waits in the queue for the loop, and a run a script starts meanwhile
    # begins at the loop's first turn (RunController.start).
    app.processEvents(QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents)
    try:  # asyncio and qasync imported now, the frame drawn
        return int(qasync.run(_main(window, first_frame, scenario)))
    except asyncio.CancelledError:
        return 0
    finally:
        quit_on_signal.close()
