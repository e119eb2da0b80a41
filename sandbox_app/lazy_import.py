"""The app's one way of importing a module later than the module that needs it.

Start-up is what the window's first frame imports (``tests/ui/test_startup.py`` holds it to a
budget); a module the frame does not need is named at the top of the module that uses it and
imported on its first use::

    if TYPE_CHECKING:
        import asyncio  # what mypy reads
    else:
        asyncio = lazy_import("asyncio")  # imported when an attribute is first read

and an object named by a dotted string (the backend catalogue's kinds, ``registry._BUILT_IN``)
is found by :func:`resolve`. Both are counted as imports by ``tests/core/test_architecture.py``
(a ``lazy_import("…")`` call, a ``"module:attribute"`` string handed to ``resolve``), so a
deferred dependency is still a dependency, and a typo fails the suite, not a user's first run.

Why not ``importlib.util.LazyLoader``: it puts a half-made module into ``sys.modules``,
which PySide6's import hook and other importers then see, and before Python 3.12 two threads
touching it at once could both run the module (the warm-up thread imports SDKs while the
window's thread may reach them). Here nothing is put anywhere: each attribute read asks
``importlib.import_module``, which takes the import system's own lock per module and, once
imported, is a dictionary look-up; the real module stays the one in ``sys.modules``, so a
test's ``monkeypatch`` of it is seen.

What still imports inside a function (``import x`` in its body), and why, so that the two are
not two mechanisms for one thing: where the moment or the thread of the import is the point
(an SDK imported on the worker thread that makes its client, the warm-up's imports, the
window's modules inside ``app.own_modules``, the self-test's before Qt starts); a function
that is its module's only user of a module the first frame never reaches anyway (a command
line subcommand's, a dialog opened from a menu), where naming it at the top would only move it
away from its use; and the standard library's small modules used once. The counts are in the
start-up section of ``tests/perf/RESULTS.md``.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class _Later(ModuleType):
    """A stand-in for a module, importing it when one of its attributes is first read."""

    def __getattr__(self, attribute: str) -> Any:
        # Only called for what the stand-in itself lacks: every attribute but its name.
        return getattr(importlib.import_module(self.__name__), attribute)

    def __repr__(self) -> str:
        return f"<module {self.__name__!r}, imported on first use>"


def lazy_import(name: str) -> ModuleType:
    """``name``, imported when one of its attributes is first read (from any thread)."""
    return _Later(name)


def resolve(dotted: str) -> object:
    """The object a ``"package.module:attribute"`` string names, its module imported now.

    Raises ImportError (the module) or AttributeError (the attribute) naming ``dotted``.
    """
    module, _, attribute = dotted.partition(":")
    if not attribute:
        raise ImportError(f"{dotted!r}: not a 'module:attribute' name")
    found = importlib.import_module(module)
    try:
        return getattr(found, attribute)
    except AttributeError:
        raise AttributeError(f"{dotted!r}: {module} has no {attribute!r}") from None
